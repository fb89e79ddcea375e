// What a failed statement says about the database, for the pipeline to answer honestly: a database
// that is down, restarting or out of connections is "try again shortly" (503), not a bug (500).

/** Socket-level failures: the server is not there, or went away mid-conversation. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of an unavailable server: class 08 (connection exception), 57P01–57P03 (shut down by
 * the administrator, crash shutdown, cannot connect now: starting up or shutting down), 53300
 * (too many connections), 57014 when our statement_timeout fired (an overloaded database).
 */
const UNAVAILABLE_SQLSTATES = /^(08\d{3}|57P0[1-3]|53300)$/;
const QUERY_CANCELED = '57014';

/** Errors pg and pg-pool raise themselves, without a code. */
const DRIVER_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated unexpectedly|Query read timeout|connection is closed|Cannot use a pool after calling end/i;

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.test(code))) return true;
    if (code === QUERY_CANCELED && !isCancelledOnRequest(current)) return true;
    if (DRIVER_MESSAGES.test(current.message)) return true;
    if (current instanceof AggregateError && current.errors.some(isDatabaseUnavailable)) return true;
  }
  return false;
}

/** A statement we cancelled ourselves because its client went away (src/store/connect.ts). */
export function isCancelledOnRequest(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === QUERY_CANCELED && /user request/.test(error.message);
}

/**
 * SQLSTATEs of a server that answers and refuses this URL for good: 3D000 (the database does not
 * exist), 28000 (no pg_hba.conf entry, the role does not exist), 28P01 (wrong password), 42501 (no
 * CONNECT privilege, or none on the schema the migrations write).
 */
const MISCONFIGURED_SQLSTATES = new Set(['3D000', '28000', '28P01', '42501']);

/** A host name that does not resolve (EAI_AGAIN, a resolver that did not answer, is waited for). */
const MISCONFIGURED_NETWORK_CODES = new Set(['ENOTFOUND']);

/** TLS refused either way: a certificate Node will not trust, a handshake that cannot agree. */
const TLS_CODES = /CERT|SIGNATURE|^ERR_TLS_|^ERR_SSL_/;

/** What pg raises itself, without a code, for the same: sslmode set and the server has no TLS, a password it needs and lacks. */
const MISCONFIGURED_DRIVER_MESSAGES = /server does not support SSL connections|^SASL: /;

/**
 * Why the database at the configured URL can never be used as it stands (waiting would not help:
 * the database, role or host does not exist, the password or TLS is refused), or null when it can,
 * or may once it is up. Its text is the driver's or the server's, which name neither the URL nor
 * its password.
 */
export function databaseMisconfiguration(error: unknown): string | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (MISCONFIGURED_SQLSTATES.has(code) || MISCONFIGURED_NETWORK_CODES.has(code) || TLS_CODES.test(code))) return current.message || code;
    if (MISCONFIGURED_DRIVER_MESSAGES.test(current.message)) return current.message;
  }
  return null;
}

/** The database at a configured URL refuses it for good (see databaseMisconfiguration): one line, exit code 1. */
export class DatabaseConfigError extends Error {
  constructor(url: string, reason: string, options?: ErrorOptions) {
    super(`cannot use the database at ${printableDatabaseUrl(url)}: ${withoutPassword(reason, url)}`, options);
  }
}

/** `error` as a DatabaseConfigError for the database at `url` when it is one (see databaseMisconfiguration), else as it was. */
export function asDatabaseConfigError(error: unknown, url: string | undefined): unknown {
  if (url === undefined || error instanceof DatabaseConfigError) return error;
  const reason = databaseMisconfiguration(error);
  return reason === null ? error : new DatabaseConfigError(url, reason, { cause: error });
}

/** Query parameters that carry a secret (libpq's password, sslpassword). */
const SECRET_PARAMETERS = /pass/i;

/**
 * A database URL to print: without its password, secret parameters or fragment (where a password
 * with an unescaped `#` ends up). A URL that does not parse is not printed at all.
 */
export function printableDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(a URL that does not parse)';
  }
  parsed.password = '';
  parsed.hash = '';
  for (const name of [...parsed.searchParams.keys()]) if (SECRET_PARAMETERS.test(name)) parsed.searchParams.delete(name);
  return withoutPassword(parsed.href, url);
}

/** `text` with the URL's password (as written, and decoded) blotted out, wherever a misparse may have put it. */
function withoutPassword(text: string, url: string): string {
  let password = '';
  try {
    password = new URL(url).password;
  } catch {
    return text;
  }
  // A password of a character or two would blot out unrelated text; none appears in these messages whole.
  const forms = new Set([password, safeDecode(password)].filter((form) => form.length >= 3));
  for (const form of forms) text = text.split(form).join('***');
  return text;
}

const safeDecode = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

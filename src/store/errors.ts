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

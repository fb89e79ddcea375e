import { type ASTNode, BREAK, type DocumentNode, GraphQLError, Kind, type ObjectFieldNode, type ValueNode, visit } from 'graphql';
import { ApiError, describeFields, type ErrorCode, type ErrorReport, type FieldError, internalError, isApiError, isErrorCode, serviceUnavailable } from '../domain/errors.js';
import { isCancelledOnRequest, isDatabaseUnavailable } from '../store/errors.js';

// The GraphQL rendering of the service's errors (src/domain/errors.ts): `extensions.code`, field
// details, and the HTTP status for the codes GraphQL over HTTP answers with one.

export interface ApiErrorExtensions {
  code: ErrorCode;
  fields?: FieldError[];
  /** Only for 401, 429 and 503: GraphQL answers those with the HTTP status too (docs/contract/decisions.md §6). */
  http?: { status: number; headers?: Record<string, string> };
}

export function toGraphQLError(error: ApiError, path?: readonly (string | number)[]): GraphQLError {
  const extensions: ApiErrorExtensions = { code: error.code };
  if (error.fields.length > 0) extensions.fields = error.fields;
  if (error.code === 'UNAUTHENTICATED' || error.code === 'RATE_LIMITED' || error.code === 'SERVICE_UNAVAILABLE') {
    extensions.http = { status: error.status, headers: error.headers };
  }
  const message = error.fields.length > 0 ? `${error.message}: ${describeFields(error.fields)}` : error.message;
  return new GraphQLError(message, { path, extensions: { ...extensions } });
}

/**
 * What a client may see of any error: our own errors as they are, the client's own mistakes that
 * GraphQL found (syntax, validation, variable coercion, a malformed GET request) as 400-class
 * errors, anything else as 500 / INTERNAL (its cause goes to the error report, never to the client).
 */
export function toClientError(error: unknown, report: ErrorReport): GraphQLError {
  const path = error instanceof GraphQLError ? error.path : undefined;
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (isApiError(original)) return toGraphQLError(original, path);
  // Masked already (src/http/graphql.ts masks an execution's errors where it knows the request).
  if (error instanceof GraphQLError && !original && isErrorCode(error.extensions?.code)) return error;
  if (error instanceof GraphQLError && isClientMistake(error)) {
    // Our codes are a closed set: yoga's own (GRAPHQL_VALIDATION_FAILED, …) read as BAD_REQUEST,
    // one of ours (a persisted operation's NOT_FOUND) stays.
    return isErrorCode(error.extensions?.code) ? error : withCode(error, 'BAD_REQUEST', variableFieldErrors(error.message));
  }
  if (original instanceof GraphQLError && typeof original.extensions?.code === 'string') return original;
  // Work ended because its client left or the server is stopping: whoever still listens may retry.
  if ((original instanceof Error && original.name === 'AbortError') || isCancelledOnRequest(original)) {
    return toGraphQLError(serviceUnavailable(), path);
  }
  // A database that is down or restarting is worth a retry, not a bug report.
  if (isDatabaseUnavailable(original)) {
    report.unavailable(original);
    return toGraphQLError(serviceUnavailable(), path);
  }
  report.unexpected(original ?? error);
  return toGraphQLError(internalError(), path);
}

/**
 * A request error GraphQL itself raised about the client's input. Errors raised while resolving a
 * field carry a `path`; input errors do not: a document that does not parse or validate (no cause),
 * a variable that does not coerce (a GraphQLError from the input type or scalar as its cause), or a
 * GET request yoga could not read (its own 4xx status in `extensions.http`). One GraphQL raises
 * with a path and no cause is about our answer, not the request: a resolver that gave null for a
 * non-null field, or a value its type cannot represent.
 */
function isClientMistake(error: GraphQLError): boolean {
  if (!error.originalError) return error.path === undefined;
  // Errors graphql-jit raises may come without extensions.
  const status = (error.extensions?.http as { status?: unknown } | undefined)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) return true;
  return error.path === undefined && error.originalError instanceof GraphQLError;
}

function withCode(error: GraphQLError, code: ErrorCode, fields: FieldError[]): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...(error.extensions ?? {}), code, ...(fields.length > 0 ? { fields } : {}) },
  });
}

// graphql's messages for a variable that does not coerce (src/execution/values.ts), the only place
// its path is told: `Variable "$f" got invalid value { a: "x; y" } at "f.a"; <why>`. The value
// is printed with its strings JSON-quoted: read whole, a quote or "; " inside one ends nothing.
const PRINTED_VALUE = String.raw`(?:"(?:[^"\\]|\\.)*"|[^"])*?`;
const NAME = '[_A-Za-z][_0-9A-Za-z]*';
const BAD_VARIABLE = new RegExp(
  String.raw`^Variable "\$(${NAME})" (?:got invalid value ${PRINTED_VALUE}(?: at "\1((?:\.${NAME}|\[\d+\])*)")?; )?(.*)$`,
  's',
);

/**
 * `extensions.fields` for a variable that does not coerce, named as our other 400s name theirs
 * (dot-separated, list positions as numbers) with the variable's `$`: `$f.locations.1`.
 */
function variableFieldErrors(message: string): FieldError[] {
  const match = BAD_VARIABLE.exec(message);
  if (!match) return [];
  const [, variable, path = '', why] = match;
  const field = `$${variable}${path.replace(/\[(\d+)\]/g, '.$1')}`;
  return [{ field, message: why! }];
}


/**
 * Validation's errors, each about a literal in an argument (a value that does not fit its type, an
 * unknown input field) naming it in `extensions.fields` by its path in the argument, as a
 * variable's are named by theirs: `filter.followerCountMin`, list positions as numbers.
 */
export function withLiteralFields(document: DocumentNode, errors: readonly Error[]): Error[] {
  return errors.map((error) => {
    const node = error instanceof GraphQLError ? error.nodes?.[0] : undefined;
    if (!(error instanceof GraphQLError) || !node || error.extensions.fields) return error;
    const field = argumentPath(document, node);
    if (field === null) return error;
    return new GraphQLError(error.message, {
      nodes: error.nodes,
      source: error.source,
      positions: error.positions,
      originalError: error.originalError,
      extensions: { ...error.extensions, fields: [{ field, message: error.message }] },
    });
  });
}

/** Where `target` is in an argument of the document (`filter.locations.1`), or null when in none. */
function argumentPath(document: DocumentNode, target: ASTNode): string | null {
  let found: string | null = null;
  visit(document, {
    Argument(argument) {
      const path = argument === target ? [] : pathIn(argument.value, target);
      if (path === null) return false;
      found = [argument.name.value, ...path].join('.');
      return BREAK;
    },
  });
  return found;
}

function pathIn(value: ValueNode | ObjectFieldNode, target: ASTNode): (string | number)[] | null {
  if (value.kind === Kind.OBJECT_FIELD) {
    const path = value === target ? [] : pathIn(value.value, target);
    return path && [value.name.value, ...path];
  }
  if (value === target) return [];
  const items: readonly (ValueNode | ObjectFieldNode)[] = value.kind === Kind.LIST ? value.values : value.kind === Kind.OBJECT ? value.fields : [];
  for (const [i, item] of items.entries()) {
    const path = pathIn(item, target);
    if (path) return value.kind === Kind.LIST ? [i, ...path] : path;
  }
  return null;
}

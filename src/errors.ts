import { GraphQLError } from 'graphql';
import type { z } from 'zod';

// The one error type of the service. REST renders it as the contract's envelope, GraphQL as
// `extensions`; anything that is not an ApiError is masked as 500 / INTERNAL.
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'QUOTA_EXHAUSTED'
  | 'RATE_LIMITED'
  | 'NOT_FOUND'
  | 'UPSTREAM_UNAVAILABLE'
  | 'INTERNAL';

export interface FieldError {
  field: string;
  message: string;
}

const statusOf: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  QUOTA_EXHAUSTED: 403,
  RATE_LIMITED: 429,
  NOT_FOUND: 404,
  UPSTREAM_UNAVAILABLE: 500,
  INTERNAL: 500,
};

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fields: FieldError[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = statusOf[code];
  }

  static badRequest(fields: FieldError[]): ApiError {
    return new ApiError('BAD_REQUEST', 'Bad Request', fields);
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

export function fieldErrorsFromZod(error: z.ZodError, prefix: readonly (string | number)[] = []): FieldError[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: [...prefix, ...issue.path, key].join('.'), message: 'unknown field' }));
    }
    const field = [...prefix, ...issue.path].join('.');
    return [{ field, message: issue.message }];
  });
}

export const statusOfCode = (code: ErrorCode): number => statusOf[code];

export interface ApiErrorExtensions {
  code: ErrorCode;
  fields?: FieldError[];
  /** Only for 401 and 429: GraphQL answers those with the HTTP status too (decisions.md §6). */
  http?: { status: number; headers?: Record<string, string> };
}

export function toGraphQLError(error: ApiError, path?: readonly (string | number)[]): GraphQLError {
  const extensions: ApiErrorExtensions = { code: error.code };
  if (error.fields.length > 0) extensions.fields = error.fields;
  if (error.code === 'UNAUTHENTICATED' || error.code === 'RATE_LIMITED') {
    extensions.http = { status: error.status, headers: error.headers };
  }
  const message = error.fields.length > 0 ? `${error.message}: ${describeFields(error.fields)}` : error.message;
  return new GraphQLError(message, { path, extensions: { ...extensions } });
}

/**
 * What a client may see of any error: our own errors as they are, anything else as 500 / INTERNAL
 * (its cause goes to the log, never to the client).
 */
export function toClientError(error: unknown, logUnexpected: (error: unknown) => void): GraphQLError {
  const path = error instanceof GraphQLError ? error.path : undefined;
  const original = error instanceof GraphQLError ? error.originalError : error;
  // A GraphQL-level error (syntax, validation, variable coercion) is already safe to show.
  if (error instanceof GraphQLError && !original) return error;
  if (isApiError(original)) return toGraphQLError(original, path);
  if (original instanceof GraphQLError && typeof original.extensions?.code === 'string') return original;
  logUnexpected(original);
  return toGraphQLError(internalError(), path);
}

export function describeFields(fields: FieldError[]): string {
  return fields.map((f) => `${f.field} ${f.message}`).join('; ');
}

export const internalError = () => new ApiError('INTERNAL', 'Internal Server Error');

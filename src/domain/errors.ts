import type { z } from 'zod';

// The one error type of the service: a code from a closed set (the contract's statuses), a safe
// message and field details. REST renders it as the contract's envelope (src/rest/envelope.ts),
// GraphQL as `extensions` (src/schema/errors.ts); anything that is not an ApiError is masked as
// 500 / INTERNAL. It imports nothing of ours, so every layer may throw it.
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'QUOTA_EXHAUSTED'
  | 'RATE_LIMITED'
  | 'NOT_FOUND'
  | 'UPSTREAM_UNAVAILABLE'
  | 'SERVICE_UNAVAILABLE'
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
  SERVICE_UNAVAILABLE: 503,
  INTERNAL: 500,
};

export const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string' && Object.hasOwn(statusOf, value);

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

/** The first error of each field: `1e308` broke both the integer and the bound check of one. */
export function onePerField(errors: FieldError[]): FieldError[] {
  return errors.filter((error, i) => errors.findIndex((other) => other.field === error.field) === i);
}

export function fieldErrorsFromZod(error: z.ZodError, prefix: readonly (string | number)[] = []): FieldError[] {
  const errors = error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: [...prefix, ...issue.path, key].join('.'), message: 'unknown field' }));
    }
    const field = [...prefix, ...issue.path].join('.');
    return [{ field, message: issue.message }];
  });
  return onePerField(errors);
}

export const statusOfCode = (code: ErrorCode): number => statusOf[code];

/** Where toClientError reports what a person may need to look at. */
export interface ErrorReport {
  unexpected(cause: unknown): void;
  unavailable(cause: unknown): void;
}

export function describeFields(fields: FieldError[]): string {
  return fields.map((f) => `${f.field} ${f.message}`).join('; ');
}

export const internalError = () => new ApiError('INTERNAL', 'Internal Server Error');

/** Seconds a client should wait before retrying while the database is unreachable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

export const serviceUnavailable = () =>
  new ApiError('SERVICE_UNAVAILABLE', 'Service Unavailable: retry shortly', [], {
    'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
  });

import { Response } from '@whatwg-node/fetch';
import { ApiError, type ErrorCode, type FieldError, statusOfCode } from '../domain/errors.js';

// Responses are made with the fetch implementation yoga's server adapter runs on: it writes such a
// response's string body to the socket in one call, where Node's own Response goes through a
// ReadableStream pumped chunk by chunk (about a tenth of a small REST answer's CPU).
export { Response };

// The contract's envelopes (§2.1, §7; docs/contract/decisions.md §3, §5).

export function successBody(data: unknown, message = 'success') {
  return { success: true, code: 200, message, data };
}

export function errorBody(code: ErrorCode, message: string, fields?: FieldError[]) {
  const status = statusOfCode(code);
  return {
    success: false,
    code: status,
    // For a 400 the text is the status phrase; the details are in `errors`.
    message: status === 400 ? 'Bad Request' : message,
    ...(fields && fields.length > 0 ? { errors: fields } : {}),
  };
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

export function errorResponse(error: ApiError, headers: Record<string, string> = {}): Response {
  return jsonResponse(error.status, errorBody(error.code, error.message, error.fields), { ...error.headers, ...headers });
}

export const notFound = () => new ApiError('NOT_FOUND', 'Not Found');

import { Response } from '../rest/envelope.js';

// CORS for both doors (/graphql, /api). A key travels in the Authorization header, never in a
// cookie, so no call needs a browser's credentials: every origin is allowed with `*`, which a
// browser never combines with credentials (cookies, TLS client certificates). A page on another
// origin can only spend a key it already holds.

const CROSS_ORIGIN_HEADERS = {
  'access-control-allow-origin': '*',
  // A page reads no response header beyond the safelisted few unless it is exposed.
  'access-control-expose-headers': 'X-Request-Id, X-Quota-Remaining, X-Quota-Cost, Retry-After',
};

const PREFLIGHT_HEADERS = {
  ...CROSS_ORIGIN_HEADERS,
  'access-control-allow-methods': 'GET, HEAD, POST',
  // Authorization must be named: a `*` here never covers it.
  'access-control-allow-headers': 'Authorization, Content-Type, X-Request-Id',
  'access-control-max-age': '7200',
  // Safari waits for a body on a 204 without it (as yoga's own preflight answer says).
  'content-length': '0',
};

/** Whether pages of any origin may read the answers to this path: the two doors'. */
export function isCrossOriginPath(path: string): boolean {
  return path === '/graphql' || path === '/api' || path.startsWith('/api/');
}

/** The answer to a browser's preflight OPTIONS for an endpoint of either door. */
export function preflightResponse(): Response {
  return new Response(null, { status: 204, headers: PREFLIGHT_HEADERS });
}

/** Lets a page on any origin read the response, and its quota and retry headers. */
export function allowCrossOrigin(response: Response): void {
  for (const [name, value] of Object.entries(CROSS_ORIGIN_HEADERS)) response.headers.set(name, value);
}

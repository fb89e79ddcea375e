import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createServerAdapter } from '@whatwg-node/server';
import { assertAdmin } from '../access/admin.js';
import { ApiError, internalError, serviceUnavailable } from '../domain/errors.js';
import { serveApiDescription } from '../rest/docs.js';
import { errorBody, errorResponse, Response } from '../rest/envelope.js';
import type { Services } from '../services.js';
import { allowCrossOrigin, isCrossOriginPath, preflightResponse } from './cors.js';
import { createGraphQLDoor } from './graphql.js';
import { handleRest, isRestEndpoint } from './rest.js';
import { RequestScope } from './scope.js';

// The front door: every request gets one scope (scope.ts), is routed, and is finished with its
// response (request id, quota header, log line, metrics):
//   /api/openapi.json, /docs   the API description (no key)
//   /api/*                     REST: the contract's routes as persisted GraphQL operations (rest.ts)
//   /graphql                   GraphQL and GraphiQL (graphql.ts, yoga)
//   /healthz, /readyz          liveness and readiness (no key); /metrics behind the admin token
// Anything else is a 404 in the contract's envelope. Pages of any origin may call both doors (cors.ts).

/** /readyz answers within this, database or not: a probe must not hang with the database. */
const READY_TIMEOUT_MS = 2_000;

export function createFrontDoor(services: Services) {
  const graphql = createGraphQLDoor(services);

  async function route(scope: RequestScope): Promise<Response> {
    const { request, url } = scope;
    // A browser asks before a cross-origin call with a key; any other OPTIONS is a wrong method (404).
    if (request.method === 'OPTIONS' && (url.pathname === '/graphql' || isRestEndpoint(url.pathname))) return preflightResponse();
    // Before the REST door, which answers 404 for any other /api path: no key, no quota.
    const description = serveApiDescription(request, url);
    if (description) return description;
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) return handleRest(services, scope);
    if (url.pathname === '/graphql') return graphql.handleRequest(request, { scope });
    // Probes and scrapers read; any other method is a wrong one, a 404 as everywhere (decisions.md).
    const reading = request.method === 'GET' || request.method === 'HEAD';
    if (url.pathname === '/healthz' && reading) return Response.json({ status: 'ok' });
    if (url.pathname === '/readyz' && reading) return readiness(services);
    if (url.pathname === '/metrics' && reading && !services.config.metricsPort && services.config.adminToken) return metrics(services, request);
    return errorResponse(new ApiError('NOT_FOUND', 'Not Found'));
  }

  return createServerAdapter(async (request: Request) => {
    const scope = new RequestScope(services, request, new URL(request.url));
    let response: Response;
    try {
      response = await route(scope);
    } catch (error) {
      // The doors answer their own errors; this is a bug, and the scope must still be finished.
      scope.errors.unexpected(error);
      response = errorResponse(internalError());
    }
    if (isCrossOriginPath(scope.url.pathname)) allowCrossOrigin(response);
    return scope.finish(response);
  });
}

export type FrontDoor = ReturnType<typeof createFrontDoor>;

/**
 * Ready once the database answers and the search index (when on) has loaded: until then searches
 * are exact but slow, and traffic is better sent to a warm instance.
 */
async function readiness(services: Services): Promise<Response> {
  const database = await services.store.ping(READY_TIMEOUT_MS);
  const index = !services.search || services.search.ready;
  const status = !database ? 'unavailable' : !index ? 'loading search index' : 'ok';
  return Response.json({ status }, { status: database && index ? 200 : 503 });
}

/** Without a METRICS_PORT of their own, metrics sit behind the admin token. */
async function metrics(services: Services, request: Request): Promise<Response> {
  try {
    assertAdmin(request.headers.get('authorization'), services.config.adminToken);
  } catch (error) {
    return errorResponse(error as ApiError);
  }
  return new Response(await services.metrics.registry.metrics(), { headers: { 'content-type': services.metrics.registry.contentType } });
}

/**
 * A request Node's HTTP parser refuses before any handler runs (headers past 16 KB, a malformed
 * request line, a client too slow to send its headers): answered in the contract's error envelope
 * (§7) rather than Node's bare status line. A request that cannot be parsed is a 400, header
 * overflow included (the contract knows no 431); a timeout stays a 408. Nothing of the request
 * is logged or echoed: its headers may hold a key.
 */
export function answerUnparsedRequest(error: Error & { code?: string }, socket: Duplex): void {
  if (socket.writable && (socket as Duplex & { bytesWritten?: number }).bytesWritten === 0) {
    const timeout = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const body = JSON.stringify(
      timeout
        ? { success: false, code: 408, message: 'Request Timeout: the request was not received in time' }
        : errorBody('BAD_REQUEST', 'Bad Request', [
            error.code === 'HPE_HEADER_OVERFLOW' ? { field: 'headers', message: 'the request headers exceed 16 KB' } : { field: 'request', message: 'is not a well-formed HTTP request' },
          ]),
    );
    const status = timeout ? '408 Request Timeout' : '400 Bad Request';
    // Ended, not destroyed: the answer is flushed before the connection closes.
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    return;
  }
  socket.destroy();
}

/**
 * The answers of a server listening before the service is assembled (`serve` waits there for a
 * database that is away at start): alive, not ready, and every call a 503 with Retry-After, as
 * during an outage. No key is looked at, so nothing is charged or logged.
 */
export function answerWhileStarting(request: IncomingMessage, response: ServerResponse): void {
  const path = (request.url ?? '').split('?')[0];
  const unavailable = serviceUnavailable();
  const [status, body, headers] =
    path === '/healthz'
      ? [200, { status: 'ok' }, {}]
      : path === '/readyz'
        ? [503, { status: 'unavailable' }, {}]
        : [503, errorBody(unavailable.code, unavailable.message), unavailable.headers];
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
}

import { OPENAPI_PATH } from '../rest/docs.js';
import { restRoutes } from '../rest/routes.js';

// One log line and one set of metrics per request, whichever door it came through (scope.ts
// writes them): a request id, the route, the status, the duration, the account and the units
// charged. Never a header, so never a key.

export interface Telemetry {
  id: string;
  /** performance.now() at the start. */
  at: number;
  route: string;
}

const routeByPath = new Map(restRoutes.map((route) => [route.path, route.endpoint as string]));

/** A bounded label for a request: its endpoint id, or what else it asked for. */
export function routeOf(url: URL, method: string): string {
  const path = url.pathname;
  if (path === '/graphql') return (method === 'GET' || method === 'HEAD') && !url.searchParams.has('query') ? 'graphiql' : 'graphql';
  if (path === '/api/ping') return 'ping';
  if (path === OPENAPI_PATH) return 'openapi';
  if (path === '/docs' || path.startsWith('/docs/')) return 'docs';
  return routeByPath.get(path) ?? (['/healthz', '/readyz', '/metrics'].includes(path) ? path.slice(1) : 'not_found');
}

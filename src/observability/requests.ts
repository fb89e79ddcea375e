import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { accessOf } from '../access/pipeline.js';
import { OPENAPI_PATH } from '../rest/docs.js';
import { restRoutes } from '../rest/routes.js';
import type { Services } from '../services.js';

// One log line and one set of metrics per request, whichever door it came through: a request id
// (the caller's own X-Request-Id when it is sane, else a new one, echoed back), the route, the
// status, the duration, the account and the units charged. Never a header, so never a key.

const routeByPath = new Map(restRoutes.map((route) => [route.path, route.endpoint as string]));
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** A bounded label for a request: its endpoint id, or what else it asked for. */
export function routeOf(url: URL, method: string): string {
  const path = url.pathname;
  if (path === '/graphql') return method === 'GET' && !url.searchParams.has('query') ? 'graphiql' : 'graphql';
  if (path === '/api/ping') return 'ping';
  if (path === OPENAPI_PATH) return 'openapi';
  if (path === '/docs' || path.startsWith('/docs/')) return 'docs';
  return routeByPath.get(path) ?? (['/healthz', '/readyz', '/metrics'].includes(path) ? path.slice(1) : 'not_found');
}

interface Started {
  id: string;
  at: number;
  route: string;
}

export function useRequestTelemetry(services: Services): Plugin {
  const started = new WeakMap<Request, Started>();
  return {
    onRequest({ request, url }) {
      const given = request.headers.get('x-request-id');
      started.set(request, {
        id: given && SANE_REQUEST_ID.test(given) ? given : randomUUID(),
        at: performance.now(),
        route: routeOf(url, request.method),
      });
    },
    async onResponse({ request, response }) {
      services.work.end(request);
      const start = started.get(request);
      if (!start) return;
      const seconds = (performance.now() - start.at) / 1000;
      response.headers.set('x-request-id', start.id);
      const access = accessOf(request);
      const charged = access?.charged() ?? [];
      if (access?.caller) {
        // The database may have gone away after the work: the answer stands without the header.
        const remaining = await access.quotaRemaining().catch(() => null);
        if (remaining !== null) response.headers.set('x-quota-remaining', String(remaining));
      }
      if (start.route === 'healthz' || start.route === 'readyz' || start.route === 'metrics') {
        services.metrics.request(start.route, response.status, seconds);
        return;
      }
      for (const { endpoint, units } of charged) services.metrics.charged(endpoint, units);
      services.metrics.request(start.route, response.status, seconds);
      services.log.info('request', {
        requestId: start.id,
        method: request.method,
        route: start.route,
        status: response.status,
        durationMs: Math.round(seconds * 10_000) / 10,
        accountId: access?.caller?.accountId,
        units: charged.reduce((sum, { units }) => sum + units, 0),
      });
    },
  };
}

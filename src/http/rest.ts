import { ApiError, type ErrorCode, type FieldError, isApiError, onePerField } from '../domain/errors.js';
import { decodeRestInput, restFieldErrors } from '../rest/codecs.js';
import { errorResponse, jsonResponse, notFound, successBody } from '../rest/envelope.js';
import { restRenderer } from '../rest/render.js';
import { type RestRoute, restRoutes } from '../rest/routes.js';
import { compiledPlan } from '../schema/compiled.js';
import { createContext } from '../schema/context.js';
import { toClientError } from '../schema/errors.js';
import { schema } from '../schema/index.js';
import type { Services } from '../services.js';
import { bodyEncodingErrors, mediaType } from './body.js';
import type { RequestScope } from './scope.js';

const routesByPath = new Map<string, RestRoute>(restRoutes.map((route) => [route.path, route]));
const PING_PATH = '/api/ping';

/** Whether a path is an endpoint of the REST door: one of the contract's routes or the ping. */
export function isRestEndpoint(path: string): boolean {
  return path === PING_PATH || routesByPath.has(path);
}

// Each route's operation compiled once (src/schema/compiled.ts): no parse, no validation and no
// generic execution walk per request; and its rendering derived once (src/rest/render.ts).
const renderers = new Map(
  restRoutes.map((route) => {
    if (!compiledPlan(schema, route.document)) throw new Error(`REST route ${route.path} does not compile`);
    return [route, restRenderer(schema, route.document)];
  }),
);

/**
 * The REST door: the route (404), then the scope's pipeline, then the route's persisted GraphQL
 * operation. The body is validated here, once, by the route's wire schema (which ends in the same
 * zod input schema the GraphQL arguments use), so the resolvers take its arguments as they are.
 */
export async function handleRest(services: Services, scope: RequestScope): Promise<Response> {
  const { request, url } = scope;
  const isPing = url.pathname === PING_PATH;
  const route = routesByPath.get(url.pathname);
  // Step 1: an unknown path, or a known one with the wrong method, is 404 before anything else.
  // HEAD is GET on the free ping only: on a metered route it would charge for an answer without a body.
  if (isPing ? request.method !== 'GET' && request.method !== 'HEAD' : !route || route.method !== request.method) {
    return errorResponse(notFound());
  }

  // A REST route runs one root field: its charge stands only if the whole response is a success.
  let succeeded = false;
  let response: Response;
  try {
    await scope.enter();
    if (isPing) {
      // Read before answering: every authenticated answer carries X-Quota-Remaining, so with the
      // database away (the key still cached) a ping is a 503 like any other call, not a bare 200.
      await scope.access.quotaRemaining();
      response = jsonResponse(200, successBody({ time: new Date().toISOString() }, 'pong'));
    } else {
      const input = decodeRestInput(route!.input, await readInput(scope, route!, services.config.maxBodyBytes));
      const context = createContext(services, scope.access, scope.databases, { argumentsValidated: true, requestId: scope.id });
      const result = await compiledPlan(schema, route!.document)!.query(undefined, context, route!.variables(input));
      if (result.errors?.length) throw result.errors[0];
      const rendered = renderers.get(route!)!(result.data as Record<string, unknown>);
      response = jsonResponse(200, successBody(route!.data(rendered, input)));
    }
    succeeded = true;
  } catch (error) {
    response = errorResponse(asApiError(scope, error));
  } finally {
    await scope.settle(succeeded ? new Set() : 'all');
  }
  return response;
}

function asApiError(scope: RequestScope, error: unknown): ApiError {
  if (isApiError(error)) return error;
  const clientError = toClientError(error, scope.errors);
  const code = (clientError.extensions?.code as ErrorCode | undefined) ?? 'INTERNAL';
  const fields = (clientError.extensions?.fields as FieldError[] | undefined) ?? [];
  const headers = (clientError.extensions?.http as { headers?: Record<string, string> } | undefined)?.headers ?? {};
  // Our own messages are safe to show (upstream unavailable included); the masked ones say nothing.
  return new ApiError(code, code === 'INTERNAL' ? 'Internal Server Error' : clientError.message, restFieldErrors(fields), headers);
}

async function readInput(scope: RequestScope, route: RestRoute, maxBytes: number): Promise<Record<string, unknown>> {
  if (route.method === 'GET') return queryParameters(scope.url.searchParams);
  const { headers } = scope.request;
  const typeErrors = mediaType(headers) === 'application/json' ? [] : [{ field: 'Content-Type', message: 'must be application/json' }];
  const headerErrors = onePerField([...typeErrors, ...bodyEncodingErrors(headers)]);
  if (headerErrors.length > 0) throw ApiError.badRequest(headerErrors);
  const text = await scope.readBody();
  if (text === null) throw ApiError.badRequest([{ field: 'body', message: `must not exceed ${maxBytes} bytes` }]);
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw ApiError.badRequest([{ field: 'body', message: 'is not valid JSON' }]);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw ApiError.badRequest([{ field: 'body', message: 'must be a JSON object' }]);
  }
  return body as Record<string, unknown>;
}

/** Query parameters as an object; a parameter given twice is ambiguous, so it is a 400, not "the last one wins". */
function queryParameters(params: URLSearchParams): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const repeated = new Set<string>();
  for (const [name, value] of params) {
    if (Object.hasOwn(input, name)) repeated.add(name);
    Object.defineProperty(input, name, { value, enumerable: true, configurable: true, writable: true });
  }
  if (repeated.size > 0) throw ApiError.badRequest([...repeated].map((field) => ({ field, message: 'is given more than once' })));
  return input;
}

import { getOperationAST, type ExecutionResult } from 'graphql';
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { RequestAccess } from './access/pipeline.js';
import { ApiError, toClientError } from './errors.js';
import { errorResponse } from './rest/envelope.js';
import { handleRest } from './rest/handler.js';
import { createContext, type Context } from './schema/context.js';
import { adminSchema, schema } from './schema/index.js';
import { operationLimits } from './schema/limits.js';
import { assertAdmin, isAdminField } from './access/admin.js';
import { logUnexpected } from './log.js';
import type { Services } from './services.js';
import { sql } from 'kysely';

// One server for both front doors: `/api/*` (REST), `/graphql` (GraphQL, GraphiQL in a browser),
// plus `/healthz` and `/readyz`. Both doors pass the same pipeline (src/access/pipeline.ts).

const accessByRequest = new WeakMap<Request, RequestAccess>();

type OperationKind = 'introspection' | 'data' | 'admin' | 'mixed';

/**
 * Which door an operation needs: introspection alone needs no key (`__schema`, `__type`,
 * `__typename`), data fields a key, administration the admin token; one operation is one kind.
 */
function operationKind(args: { document: Parameters<typeof getOperationAST>[0]; operationName?: string | null }): OperationKind {
  const operation = getOperationAST(args.document, args.operationName ?? undefined);
  const names = (operation?.selectionSet.selections ?? [])
    .map((s) => (s.kind === 'Field' ? s.name.value : '…'))
    .filter((name) => !name.startsWith('__'));
  if (names.length === 0) return 'introspection';
  const admin = names.filter(isAdminField).length;
  return admin === 0 ? 'data' : admin === names.length ? 'admin' : 'mixed';
}

/** Steps 2–3 of the pipeline before a data operation runs, step 7 after it. */
function useAccessPipeline(services: Services): Plugin<Context> {
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const kind = operationKind(args);
      if (kind === 'introspection') return;
      const access = (args.contextValue as Context).access;
      try {
        if (kind === 'mixed') throw ApiError.badRequest([{ field: 'query', message: 'administration and data fields cannot share an operation' }]);
        if (kind === 'admin') return assertAdmin(access.authorization, services.config.adminToken);
        await access.enter();
      } catch (error) {
        setResultAndStopExecution({ errors: [toClientError(error, logUnexpected(services.log))] });
        return;
      }
      return {
        async onExecuteDone({ result }) {
          const errors = Symbol.asyncIterator in result ? [] : ((result as ExecutionResult).errors ?? []);
          await access.settle(new Set(errors.map((error) => String(error.path?.[0] ?? ''))));
        },
      };
    },
  };
}

const useOperationLimits: Plugin = {
  onValidate: ({ addValidationRule }) => addValidationRule(operationLimits),
};

export function createServer(services: Services) {
  const yoga = createYoga<{ request: Request }, Context>({
    schema: services.config.adminToken ? adminSchema : schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // GraphiQL served from the package itself: the default page loads its assets from a CDN.
    renderGraphiQL,
    context: ({ request }) => {
      const access = new RequestAccess(services.access, request.headers.get('authorization'));
      accessByRequest.set(request, access);
      return createContext(services, access);
    },
    maskedErrors: {
      maskError: (error) => toClientError(error, logUnexpected(services.log)),
    },
    logging: false,
    plugins: [
      {
        async onRequest({ request, url, endResponse }) {
          if (url.pathname === '/api' || url.pathname.startsWith('/api/')) return endResponse(await handleRest(services, request));
          if (url.pathname === '/healthz') return endResponse(Response.json({ status: 'ok' }));
          if (url.pathname === '/readyz') {
            const ready = await sql`SELECT 1`.execute(services.store.db).then(() => true, () => false);
            return endResponse(Response.json({ status: ready ? 'ok' : 'unavailable' }, { status: ready ? 200 : 503 }));
          }
          if (url.pathname !== '/graphql') return endResponse(errorResponse(new ApiError('NOT_FOUND', 'Not Found')));
          if (Number(request.headers.get('content-length') ?? 0) > services.config.maxBodyBytes) {
            return endResponse(
              Response.json(
                { errors: [{ message: `request body must not exceed ${services.config.maxBodyBytes} bytes`, extensions: { code: 'BAD_REQUEST' } }] },
                { status: 413 },
              ),
            );
          }
        },
        onResponse({ request, response }) {
          const access = accessByRequest.get(request);
          if (!access?.caller) return;
          return access.quotaRemaining().then((remaining) => {
            if (remaining !== null) response.headers.set('x-quota-remaining', String(remaining));
          });
        },
      },
      useAccessPipeline(services),
      useOperationLimits,
    ],
  });
  return yoga;
}

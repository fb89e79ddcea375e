import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { Request } from '@whatwg-node/fetch';
import { type ExecutionArgs, type ExecutionResult, getOperationAST, GraphQLError } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { assertAdmin, isAdminField } from '../access/admin.js';
import { ApiError, isErrorCode } from '../domain/errors.js';
import { errorReport } from '../observability/log.js';
import { runCompiled } from '../schema/compiled.js';
import { type Context, createContext } from '../schema/context.js';
import { toClientError } from '../schema/errors.js';
import { adminSchema, schema } from '../schema/index.js';
import { operationLimits } from '../schema/limits.js';
import type { Services } from '../services.js';
import type { RequestScope } from './scope.js';

// The GraphQL door: yoga, given a request the front door (server.ts) has opened a scope for. Data
// operations enter the pipeline through that scope (key, limits), run cancellable and compiled,
// and settle per root field; introspection alone needs no key.

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

/** Steps 2–3 of the pipeline before a data operation runs, step 7 after it, through the request's scope. */
function useAccessPipeline(services: Services): Plugin<Context & ScopeContext> {
  return {
    async onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const kind = operationKind(args);
      if (kind === 'introspection') return;
      const { scope } = args.contextValue as Context & ScopeContext;
      // Data operations run compiled (src/schema/compiled.ts), cancelled if the client leaves.
      setExecuteFn((executeArgs) => scope.run(async () => runCompiled(executeArgs as ExecutionArgs, executeFn as (args: ExecutionArgs) => unknown)));
      try {
        if (kind === 'mixed') throw ApiError.badRequest([{ field: 'query', message: 'administration and data fields cannot share an operation' }]);
        if (kind === 'admin') return assertAdmin(scope.access.authorization, services.config.adminToken);
        await scope.enter();
      } catch (error) {
        setResultAndStopExecution({ errors: [toClientError(error, errorReport(services.log))] });
        return;
      }
      return {
        async onExecuteDone({ result }) {
          const errors = Symbol.asyncIterator in result ? [] : ((result as ExecutionResult).errors ?? []);
          await scope.settle(new Set(errors.map((error) => String(error.path?.[0] ?? ''))));
        },
      };
    },
  };
}

const useOperationLimits: Plugin = {
  onValidate: ({ addValidationRule }) => addValidationRule(operationLimits),
};

/**
 * yoga answers the requests it refuses itself (a document that does not parse or validate) with
 * codes of its own (GRAPHQL_PARSE_FAILED, …); ours are a closed set (docs/contract/decisions.md §6), and every
 * error that is not ours already is the client's: BAD_REQUEST.
 */
const useClosedErrorCodes: Plugin = {
  onResultProcess({ result }) {
    for (const single of Array.isArray(result) ? result : [result]) {
      if (Symbol.asyncIterator in single) continue;
      for (const error of single.errors ?? []) {
        const extensions = error.extensions as Record<string, unknown>;
        if (!isErrorCode(extensions.code)) extensions.code = 'BAD_REQUEST';
      }
    }
  },
};

/**
 * yoga's own GET parser lets JSON.parse throw on `?variables={bad`, which reads as an unexpected
 * 500; a query string that does not parse is the client's mistake, a 400 naming the parameter.
 */
const useStrictGetParameters: Plugin = {
  onRequestParse({ request, url, requestParser, setRequestParser }) {
    if (request.method !== 'GET' || !requestParser) return;
    for (const name of ['variables', 'extensions']) {
      const text = url.searchParams.get(name);
      if (!text) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = undefined;
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        setRequestParser(() => {
          throw new GraphQLError(`${name} must be a JSON object`, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
        });
        return;
      }
    }
  },
};

const badRequest = (message: string, status = 400) => new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status } } });

/**
 * POST bodies are read with our byte limit (the scope's readBody) whichever parser yoga chose, in
 * place of yoga's own limit (off: `maxRequestBodySize: false`). JSON, nearly every request, is
 * parsed here from that text; the rarer types get a request holding the text.
 */
function useBoundedBody(maxBytes: number): Plugin<{}, ScopeContext> {
  return {
  onRequestParse({ request, requestParser, setRequestParser, serverContext }) {
    if (request.method !== 'POST' || !requestParser) return;
    const chosen = requestParser;
    const { scope } = serverContext;
    setRequestParser(async (request) => {
        const text = await scope.readBody();
        if (text === null) throw badRequest(`request body must not exceed ${maxBytes} bytes`, 413);
        const type = (request.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
        if (type !== 'application/json' && type !== 'application/graphql+json') {
          return chosen(new Request(request.url, { method: 'POST', headers: request.headers, body: text }));
        }
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          throw badRequest('POST body sent invalid JSON.');
        }
        // An array is a batch: yoga's batching limit answers it.
        if (typeof body !== 'object' || body === null) throw badRequest(`POST body is expected to be object but received ${body === null ? 'null' : typeof body}`);
        return body as Record<string, unknown>;
    });
  },
  };
}

/** What the front door hands yoga with each request. */
export interface ScopeContext {
  scope: RequestScope;
}

export function createGraphQLDoor(services: Services) {
  return createYoga<ScopeContext, Context>({
    schema: services.config.adminToken ? adminSchema : schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // useBoundedBody below reads bodies with our limit instead.
    maxRequestBodySize: false,
    // GraphiQL served from the package itself: the default page loads its assets from a CDN.
    renderGraphiQL,
    context: ({ scope }) => createContext(services, scope.access),
    maskedErrors: {
      maskError: (error) => toClientError(error, errorReport(services.log)),
    },
    logging: false,
    plugins: [useBoundedBody(services.config.maxBodyBytes), useAccessPipeline(services), useOperationLimits, useClosedErrorCodes, useStrictGetParameters],
  });
}

export type GraphQLDoor = ReturnType<typeof createGraphQLDoor>;

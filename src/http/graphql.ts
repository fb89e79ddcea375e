import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { Request, Response } from '@whatwg-node/fetch';
import { type DocumentNode, type ExecutionArgs, type ExecutionResult, getOperationAST, GraphQLError, parse } from 'graphql';
import { LRUCache } from 'lru-cache';
import { createYoga, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { assertAdmin, isAdminField } from '../access/admin.js';
import type { KeylessBudget } from '../access/keyless-budget.js';
import { DryRunReached } from '../access/pipeline.js';
import { ApiError, describeFields, isApiError, isErrorCode, statusOfCode } from '../domain/errors.js';
import { errorReport } from '../observability/log.js';
import { runCompiled } from '../schema/compiled.js';
import { type Context, createContext } from '../schema/context.js';
import { toClientError, toGraphQLError, withLiteralFields } from '../schema/errors.js';
import { adminSchema, schema } from '../schema/index.js';
import {
  DOCUMENT_CACHE_CHARS,
  DOCUMENT_CACHE_ENTRIES,
  documentNesting,
  INTROSPECTION_ANSWERS,
  exceededLimits,
  MAX_CACHED_DOCUMENT_CHARS,
  MAX_DOCUMENT_NESTING,
  MAX_DOCUMENT_TOKENS,
  BoundRefusal,
} from '../schema/limits.js';
import { bodyEncodingErrors, mediaType } from './body.js';
import { usePersistedOperations } from './persisted.js';
import { boundExceeded, type OperationPrice, priceOperation } from '../schema/price.js';
import type { Services } from '../services.js';
import type { RequestScope, ScopeContext } from './scope.js';

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

/** `extensions.cost` of a data operation's answer (docs/contract/decisions.md §6.1). */
interface Cost {
  requested: number;
  charged: number;
  remaining: number | null;
}

/** A refusal of the whole operation before it runs, answered with the error's own HTTP status (400, 403). */
class OperationRefused extends GraphQLError {
  constructor(error: ApiError) {
    const refused = toGraphQLError(error);
    super(refused.message, { extensions: { ...refused.extensions, http: { status: error.status } } });
  }
}
const refusal = (error: ApiError) => new OperationRefused(error);

/**
 * A dry run's metered fields refused before their charge: their errors as a real run would give
 * them, under the HTTP status of the earliest check that failed (400 before 403, decisions §4).
 */
class DryRunRefused extends Error {
  readonly errors: GraphQLError[];
  constructor(errors: GraphQLError[]) {
    super('dry run refused');
    const first = errors.find((error) => error.extensions.code === 'BAD_REQUEST') ?? errors[0];
    const http = (first.extensions.http as { status: number } | undefined) ?? { status: isErrorCode(first.extensions.code) ? statusOfCode(first.extensions.code) : 500 };
    this.errors = errors.map((error) => new GraphQLError(error.message, { path: error.path, extensions: { ...error.extensions, http } }));
  }
}

/**
 * Steps 2–3 of the pipeline before a data operation runs, its price, step 7 after it, through the
 * request's scope. The price is computed from the document and its variables before any work
 * (src/schema/price.ts): over a bound the operation is refused (400) before anything is reserved;
 * a dry run (`extensions.dryRun: true`) is priced and checked against plan and quota, and runs
 * nothing; otherwise each root field reserves its share and keeps it only if it succeeded.
 */
function useAccessPipeline(services: Services): Plugin<Context & ScopeContext & YogaInitialContext> {
  // Requests whose operation asks for data and did not validate: answered after the key check.
  const refusedUnvalidated = new WeakSet<RequestScope>();
  return {
    onValidate({ params, context }) {
      return ({ valid }) => {
        if (valid) return;
        const { scope, params: request } = context as Partial<ScopeContext & YogaInitialContext>;
        const kind = operationKind({ document: params.documentAST, operationName: request?.operationName });
        if (scope && (kind === 'data' || kind === 'mixed')) refusedUnvalidated.add(scope);
      };
    },
    /**
     * An operation with data fields that did not validate is still answered in the order of
     * checks (docs/contract/decisions.md §4): key (401), rate (429), then its 400, which then
     * carries `extensions.cost` like every data operation's answer. Its price was never known:
     * `requested` 0 (docs/decisions.md). A document that does not parse names no fields: 400.
     */
    async onResultProcess({ result, setResult, serverContext }) {
      const scope = (serverContext as Partial<ScopeContext>).scope;
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      if (!scope || !refusedUnvalidated.has(scope)) {
        // A charged answer is a 200 with the failed roots' errors in it: a 503's Retry-After would
        // have the client pay again for the roots it already has (GraphQL over HTTP: partial data
        // is a 200 too).
        const charged = (result.extensions?.cost as Cost | undefined)?.charged ?? 0;
        if (charged > 0 && result.errors?.some((error) => error.extensions.http)) setResult({ ...result, errors: result.errors.map(withoutHttpStatus) });
        return;
      }
      refusedUnvalidated.delete(scope);
      const refusal = await scope.enter().then(
        () => null,
        (error: unknown) => toClientError(error, scope.errors),
      );
      await scope.settle('all');
      // A 401 names no caller; a 429 or the 400 do, and tell what is left.
      const cost = scope.access.caller ? { cost: { requested: 0, charged: 0, remaining: await scope.access.quotaRemaining().catch(() => null) } satisfies Cost } : null;
      if (refusal) setResult({ errors: [refusal], ...(cost ? { extensions: cost } : {}) });
      else if (cost) setResult({ ...result, extensions: { ...result.extensions, ...cost } });
    },
    async onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const kind = operationKind(args);
      if (kind === 'introspection') return answerIntrospection(services.keylessBudget, args, setResultAndStopExecution);
      const context = args.contextValue as Context & ScopeContext & YogaInitialContext;
      const { scope } = context;
      // Data operations run compiled (src/schema/compiled.ts).
      setExecuteFn((executeArgs) => runCompiled(executeArgs as ExecutionArgs, executeFn as (args: ExecutionArgs) => unknown));
      let entered = false;
      let price: OperationPrice | null = null;
      const costOf = async (charged: number): Promise<Cost> => ({
        requested: price?.units ?? charged,
        charged,
        remaining: await scope.access.quotaRemaining().catch(() => null),
      });
      try {
        if (kind === 'mixed') throw ApiError.badRequest([{ field: 'query', message: 'administration and data fields cannot share an operation' }]);
        if (kind === 'admin') return assertAdmin(scope.access.authorization, services.config.adminToken);
        // Priced first (no work, no state) so that a 429 can tell the price too; an operation that
        // cannot be priced is refused, after the key and limits as every 400 is.
        let unpriceable: unknown = null;
        try {
          price = priceOperation(args.schema, args.document, args.operationName, args.variableValues as Record<string, unknown> | undefined);
        } catch (error) {
          unpriceable = error;
        }
        await scope.enter();
        entered = true;
        if (unpriceable) throw isApiError(unpriceable) ? refusal(unpriceable) : unpriceable;
        if (price) {
          const exceeded = boundExceeded(price, services.config);
          if (exceeded) throw refusal(ApiError.badRequest([{ field: 'query', message: exceeded }]));
          scope.access.setShares(price.roots);
          if (context.params?.extensions?.dryRun === true) {
            // The metered root fields run up to their charge: their arguments are validated (400)
            // and their plans checked (403) as a real run would, then quota for the whole price.
            scope.access.startDryRun();
            const tried = (await executeFn({ ...args, document: price.metered() } as ExecutionArgs)) as ExecutionResult;
            const stopped = (tried.errors ?? []).filter((error) => !(error.originalError instanceof DryRunReached));
            if (stopped.length > 0) throw new DryRunRefused(stopped.map((error) => toClientError(error, scope.errors)));
            await scope.access.quote([...new Set(price.endpoints.values())], price.units).catch((error) => {
              throw isApiError(error) ? refusal(error) : error;
            });
            await scope.settle('all');
            setResultAndStopExecution({ data: null, extensions: { cost: await costOf(0) } });
            return;
          }
        }
      } catch (error) {
        if (entered) await scope.settle('all');
        // Whoever the key named learns the price and what is left, even when refused (429, 400, 403).
        const cost = scope.access.caller ? { cost: await costOf(0) } : undefined;
        const clientErrors =
          error instanceof DryRunRefused ? error.errors : [error instanceof OperationRefused ? error : toClientError(error, scope.errors)];
        setResultAndStopExecution({ errors: clientErrors, ...(cost ? { extensions: cost } : {}) });
        return;
      }
      return {
        async onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return void (await scope.settle(new Set()));
          await scope.settle(undeliveredRoots(result));
          // Masked here, where the request is known, so that a 500's log line carries its id;
          // yoga's maskError then finds them masked already.
          const errors = result.errors?.map((error) => toClientError(error, scope.errors));
          setResult({ ...result, ...(errors ? { errors } : {}), extensions: { ...result.extensions, cost: await costOf(scope.access.chargedUnits()) } });
        },
      };
    },
  };
}

/**
 * The root fields of an answer that were not delivered, to be refunded: those whose value is null
 * for an error, and those with an error of the service's own under them (a database or platform
 * that failed part of the answer). A caller's own mistake under a root whose value came back (a
 * cursor that does not decode on a nested connection) leaves that root charged: else one
 * deliberate mistake would make any root free.
 */
function undeliveredRoots(result: ExecutionResult): ReadonlySet<string> | 'all' {
  if (!result.data) return 'all';
  const undelivered = new Set<string>();
  for (const error of result.errors ?? []) {
    const root = error.path?.[0];
    if (root === undefined) return 'all';
    if (result.data[root] == null || !isCallersOwn(error)) undelivered.add(String(root));
  }
  return undelivered;
}

/** Introspection answers by document and variables: the same few queries come from every GraphiQL and codegen. */
const introspectionAnswers = new LRUCache<DocumentNode, Map<string, ExecutionResult>>({ max: INTROSPECTION_ANSWERS });

/**
 * An operation that only introspects needs no key: answered from the cache when asked before,
 * else within the keyless CPU budget (src/access/keyless-budget.ts), 429 past it.
 */
function answerIntrospection(budget: KeylessBudget, args: ExecutionArgs, stop: (result: ExecutionResult) => void) {
  const asked = `${args.operationName ?? ''}\0${JSON.stringify(args.variableValues ?? {})}`;
  const known = introspectionAnswers.get(args.document)?.get(asked);
  if (known) return void stop(known);
  try {
    budget.admit();
  } catch (error) {
    return void stop({ errors: [toGraphQLError(error as ApiError)] });
  }
  const started = performance.now();
  return {
    onExecuteDone({ result }: { result: ExecutionResult | AsyncIterable<ExecutionResult> }) {
      budget.spend(performance.now() - started);
      if (Symbol.asyncIterator in result || result.errors) return;
      const answers = introspectionAnswers.get(args.document) ?? new Map<string, ExecutionResult>();
      introspectionAnswers.set(args.document, answers.set(asked, result));
    },
  };
}

const withoutHttpStatus = (error: GraphQLError) => {
  if (!error.extensions.http) return error;
  const { http: _status, ...extensions } = error.extensions;
  return new GraphQLError(error.message, { path: error.path, nodes: error.nodes, originalError: error.originalError, extensions });
};

/** An error the caller's input caused (a 4xx of ours, or graphql's own on an argument), not the service. */
function isCallersOwn(error: GraphQLError): boolean {
  const original = error.originalError;
  if (isApiError(original)) return original.status < 500;
  return original instanceof GraphQLError && !original.originalError;
}

/**
 * The document's size, before the work that grows with it: bracket nesting on the text, tokens
 * while parsing (a tree is ~300 bytes a token), then our bounds alone before graphql's own rules,
 * which are not all linear (overlapping fields compare pairs: 2,200 aliases of one field took
 * 0.38 s of CPU to refuse).
 */
function useOperationLimits(): Plugin {
  const withinLimits = new WeakSet<DocumentNode>();
  return {
    onParse({ params, setParseFn }) {
      const source = typeof params.source === 'string' ? params.source : params.source.body;
      if (documentNesting(source) > MAX_DOCUMENT_NESTING) throw new BoundRefusal(`nests brackets more than ${MAX_DOCUMENT_NESTING} levels deep`);
      setParseFn((text, options) => {
        try {
          return parse(text, { ...options, maxTokens: MAX_DOCUMENT_TOKENS });
        } catch (error) {
          // graphql's own words for it ("more that 10000 tokens") name no field.
          if (!(error instanceof GraphQLError) || !/\btokens\b/.test(error.message)) throw error;
          throw new BoundRefusal(`has more than ${MAX_DOCUMENT_TOKENS} tokens`);
        }
      });
    },
    onValidate({ params, setResult }) {
      if (withinLimits.has(params.documentAST)) return;
      const exceeded = exceededLimits(params.documentAST);
      if (exceeded.length > 0) return void setResult(exceeded);
      withinLimits.add(params.documentAST);
    },
  };
}

/**
 * Parsed documents, and parse errors, kept by their text as yoga does by default, but bounded by
 * the text they hold: yoga's own cache keeps 1,024 documents of any size for an hour, a tree is
 * ~70 times its text, and ~950 keyless requests of distinct 64 KB documents ran the heap out. A
 * compiled plan lives as long as its document (src/schema/compiled.ts), so this bounds those too.
 */
function documentCache<T extends {}>() {
  return new LRUCache<string, T>({
    max: DOCUMENT_CACHE_ENTRIES,
    maxSize: DOCUMENT_CACHE_CHARS,
    maxEntrySize: MAX_CACHED_DOCUMENT_CHARS,
    sizeCalculation: (_value, text) => text.length + 1,
    ttl: 3_600_000,
  });
}

/** A literal that does not fit its argument is named in `extensions.fields`, as a variable is. */
const useLiteralFields: Plugin = {
  onValidate:
    ({ params }) =>
    ({ valid, result, setResult }) => {
      if (!valid) setResult(withLiteralFields(params.documentAST, result));
    },
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
        // A bound's 400 stands under application/json too: yoga marked it the spec's 200 (limits.ts).
        if (error instanceof BoundRefusal) (extensions.http as { spec?: boolean }).spec = false;
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
  // yoga picks its parser by the media type's exact lowercase spelling; the type is case-insensitive
  // (RFC 9110), so `APPLICATION/JSON` is handed on as `application/json`.
  onRequest({ request }) {
    const contentType = request.headers.get('content-type');
    if (contentType === null) return;
    const type = mediaType(request.headers);
    const canonical = contentType.replace(/^[^;]*/, type);
    if (canonical !== contentType) request.headers.set('content-type', canonical);
  },
  onRequestParse({ request, requestParser, setRequestParser, serverContext }) {
    if (request.method !== 'POST') return;
    const encodingErrors = bodyEncodingErrors(request.headers);
    if (encodingErrors.length > 0) {
      setRequestParser(() => {
        throw new GraphQLError(`Unsupported Media Type: ${describeFields(encodingErrors)}`, {
          extensions: { code: 'BAD_REQUEST', fields: encodingErrors, http: { status: 415 } },
        });
      });
      return;
    }
    // yoga answers a body type it has no parser for with a bare 415: ours says what it takes.
    if (!requestParser) {
      setRequestParser(() => {
        throw badRequest('the POST body\'s Content-Type is not one /graphql reads: send it as application/json', 415);
      });
      return;
    }
    const chosen = requestParser;
    const { scope } = serverContext;
    setRequestParser(async (request) => {
        const text = await scope.readBody();
        if (text === null) throw badRequest(`request body must not exceed ${maxBytes} bytes`, 413);
        const type = mediaType(request.headers);
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

/**
 * What GraphiQL opens on: a composed operation over the fields every plan covers, priced in its
 * comments (the price table: src/schema/price.ts), and a header template for the key.
 */
export const GRAPHIQL_DEFAULT_QUERY = `# creator-data GraphQL. Put your API key in the Headers tab below, then run (Ctrl-Enter).
# Price: 207 units, known before anything runs: creators 100 + 2 facets, videos 100 + each of
# the 5 videos' Channel.videos 1; viewer, categories and Video.channel are free. Only the root
# fields that succeed are charged; the answer's extensions.cost says what was. Send
# {"dryRun": true} in the request's extensions to learn the price without running anything.
query Composed {
  viewer { plan quotaRemaining }
  creators(first: 5, sortBy: FOLLOWER_COUNT, filter: { locations: ["US", "GB"] }) {
    totalCount
    facets {
      country(excludeOwn: true) { value count }
      gender { value count }
    }
    nodes { id username followerCount categories { name } }
  }
  videos(first: 5) {
    totalCount
    nodes {
      title
      playCount
      channel {
        title
        videos(first: 3) { totalCount nodes { title } }
      }
    }
  }
}
`;
export const GRAPHIQL_HEADERS = JSON.stringify({ Authorization: '<your API key>' }, null, 2);

/**
 * The GraphiQL page's package, loaded when the page is first asked for: its bundle is 9 MB of
 * source that V8 keeps (about 28 MB of heap), and most processes never serve the page.
 */
const graphiqlPage = () => createRequire(import.meta.url)('@graphql-yoga/render-graphiql') as typeof import('@graphql-yoga/render-graphiql');


/**
 * The GraphiQL page for a browser's GET (or HEAD) at /graphql, answered before yoga: rendered once
 * and kept with its gzip, and an ETag so a browser keeps it. It is 9 MB of source that yoga
 * rendered and sent whole at every load (~100 ms of CPU; four keyless clients reloading it put a
 * paying client's p50 at 200 ms).
 */
function graphiqlPageServer(options: GraphiQLOptions): (request: Request) => Response | null {
  let page: { html: string; gzip: Uint8Array<ArrayBuffer>; etag: string } | undefined;
  return (request) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !request.headers.get('accept')?.includes('text/html')) return null;
    if (!page) {
      const html = graphiqlPage().renderGraphiQL(options);
      page = { html, gzip: new Uint8Array(gzipSync(html)) as Uint8Array<ArrayBuffer>, etag: `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"` };
    }
    const headers: Record<string, string> = { etag: page.etag, 'cache-control': 'no-cache', vary: 'Accept-Encoding' };
    if (request.headers.get('if-none-match') === page.etag) return new Response(null, { status: 304, headers });
    headers['content-type'] = 'text/html; charset=utf-8';
    if (!/\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')) return new Response(page.html, { headers });
    return new Response(page.gzip, { headers: { ...headers, 'content-encoding': 'gzip' } });
  };
}

type GraphiQLOptions = Parameters<ReturnType<typeof graphiqlPage>['renderGraphiQL']>[0];

export function createGraphQLDoor(services: Services) {
  const page = graphiqlPageServer({ title: 'creator-data GraphQL', defaultQuery: GRAPHIQL_DEFAULT_QUERY, headers: GRAPHIQL_HEADERS });
  const yoga = createYoga<ScopeContext, Context>({
    schema: services.config.adminToken ? adminSchema : schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // The front door answers CORS for both doors (cors.ts): yoga's would echo any origin with credentials.
    cors: false,
    // useBoundedBody below reads bodies with our limit instead.
    maxRequestBodySize: false,
    // GraphiQL is served by `page`, from the package itself: yoga's default page loads its assets from a CDN.
    graphiql: false,
    context: ({ scope }) => createContext(services, scope.access, scope.databases, { requestId: scope.id }),
    maskedErrors: {
      // Errors outside an operation's execution (graphql.ts masks those with their request's id).
      maskError: (error) => toClientError(error, errorReport(services.log)),
    },
    logging: false,
    parserAndValidationCache: { documentCache: documentCache<DocumentNode>(), errorCache: documentCache<{}>() },
    plugins: [
      useBoundedBody(services.config.maxBodyBytes),
      usePersistedOperations(),
      useAccessPipeline(services),
      useOperationLimits(),
      useLiteralFields,
      useClosedErrorCodes,
      useStrictGetParameters,
    ],
  });
  return {
    handleRequest: (request: Request, context: ScopeContext) => page(request) ?? yoga.handleRequest(request, context),
  };
}

export type GraphQLDoor = ReturnType<typeof createGraphQLDoor>;

// The typed client of the REST routes and /graphql: `import { CreatorDataClient } from
// 'creator-data-service/client'`. It runs anywhere fetch does and imports nothing of the server at
// run time: request types are z.input of the routes' REST-level schemas and response types are
// generated from openapi.json (./api-types.ts), both erased by the compiler.
import type { z } from 'zod';
import type { creatorSearchBody } from '../inputs/creators.js';
import type { liveStreamSearchBody } from '../inputs/live-streams.js';
import type { realtimeMediasArgs } from '../inputs/medias.js';
import type { videoSearchBody } from '../inputs/videos.js';
import type { RestInputSchema } from '../rest/codecs.js';
import type { components, operations } from './api-types.js';
import { backoffDelay, defaultSleep, retryAfterMs, type Sleep } from './retry.js';

export type SearchCreatorsBody = z.input<RestInputSchema<typeof creatorSearchBody>>;
export type SearchVideosBody = z.input<RestInputSchema<typeof videoSearchBody>>;
export type SearchLiveStreamsBody = z.input<RestInputSchema<typeof liveStreamSearchBody>>;
export type RealtimeMediasQuery = z.input<RestInputSchema<typeof realtimeMediasArgs>>;

type Schemas = components['schemas'];
/** The success envelope of an operation, as openapi.json describes it. */
export type SuccessEnvelope<Operation extends keyof operations> = operations[Operation]['responses'][200]['content']['application/json'];
export type SearchCreatorsResult = SuccessEnvelope<'searchCreators'>['data'];
export type SearchVideosResult = SuccessEnvelope<'searchVideos'>['data'];
export type SearchLiveStreamsResult = SuccessEnvelope<'searchLiveStreams'>['data'];
export type RealtimeMediasResult = SuccessEnvelope<'realtimeMedias'>['data'];
export type PingResult = SuccessEnvelope<'ping'>['data'];
export type Creator = Schemas['Creator'];
export type Video = Schemas['Video'];
export type LiveStream = Schemas['LiveStream'];
export type Media = Schemas['Media'];
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
export type FieldError = Schemas['FieldError'];

export { type Sleep } from './retry.js';

/** Method and path of each operation; the method names are openapi.json's operation ids. */
export const restOperations = {
  searchCreators: { method: 'POST', path: '/api/v1/search/twitter/user' },
  searchVideos: { method: 'POST', path: '/api/v1/search/youtube/video' },
  searchLiveStreams: { method: 'POST', path: '/api/v1/twitch/search/live' },
  realtimeMedias: { method: 'GET', path: '/api/v1/instagram/realtime/user/medias' },
  ping: { method: 'GET', path: '/api/ping' },
} as const satisfies Record<keyof operations, { method: 'GET' | 'POST'; path: string }>;

export interface ClientOptions {
  /** The service's address, e.g. `https://api.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** The raw API key, sent as `Authorization: <key>` (no `Bearer`). */
  apiKey: string;
  /** Time limit of one attempt, answer body included. Default 30 s. */
  timeoutMs?: number;
  /** Attempts per call, the first included (1 never retries). Default 6: waits of 1, 2, 4, 8, 16 s. */
  maxAttempts?: number;
  /** First backoff wait; doubled after each failure. Default 1 s. */
  initialDelayMs?: number;
  /** Ceiling of the backoff wait. Default 32 s. */
  maxDelayMs?: number;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** How to wait between attempts; defaults to a timer that the call's signal cancels. */
  sleep?: Sleep;
  /** Told about every answer (retried ones included): for metering, logs, tests. */
  onResponse?: (info: ResponseInfo) => void;
}

export interface ResponseInfo {
  operation: string;
  attempt: number;
  status: number;
  requestId: string | null;
  quotaRemaining: number | null;
}

export interface CallOptions {
  /** Cancels the call, waits between attempts included. */
  signal?: AbortSignal;
  /** This call's attempt time limit, instead of the client's. */
  timeoutMs?: number;
  /** Sent as X-Request-Id on every attempt of the call (1 to 64 of A-Za-z0-9._:-), to find it in the service's logs. */
  requestId?: string;
}

/** Why a call failed, after its last attempt. */
export class CreatorDataError extends Error {
  override readonly name = 'CreatorDataError';
  /** HTTP status; 0 when no answer came (timeout, network). */
  readonly status: number;
  /** The envelope's `code` (REST), `extensions.code` (GraphQL), or `TIMEOUT` / `NETWORK_ERROR`. */
  readonly code: number | string;
  readonly requestId: string | null;
  /** A 400's bad fields. */
  readonly fields: FieldError[];
  /** Retry-After of the last answer, in seconds. */
  readonly retryAfterSeconds: number | null;
  readonly attempts: number;

  constructor(details: {
    status: number;
    code: number | string;
    message: string;
    requestId?: string | null;
    fields?: FieldError[];
    retryAfterSeconds?: number | null;
    attempts: number;
    cause?: unknown;
  }) {
    super(details.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.code = details.code;
    this.requestId = details.requestId ?? null;
    this.fields = details.fields ?? [];
    this.retryAfterSeconds = details.retryAfterSeconds ?? null;
    this.attempts = details.attempts;
  }

  /** 429 and 5xx answers, timeouts and network failures: worth another attempt. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

export interface GraphQLResult<Data> {
  data?: Data | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string; fields?: FieldError[] } & Record<string, unknown> }[];
}

interface Request {
  operation: string;
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | null | undefined>;
  body?: unknown;
}

export class CreatorDataClient {
  private readonly baseUrl: string;
  private readonly options: Required<Omit<ClientOptions, 'onResponse' | 'baseUrl' | 'apiKey'>> & Pick<ClientOptions, 'onResponse'>;

  constructor(private readonly settings: ClientOptions) {
    // The service refuses such a key with 401 anyway; saying so here is kinder than a retry loop's end.
    if (/\s/.test(settings.apiKey) || /^bearer\b/i.test(settings.apiKey) || settings.apiKey === '') {
      throw new TypeError('apiKey must be the raw API key: no Bearer prefix, no whitespace');
    }
    this.baseUrl = settings.baseUrl.endsWith('/') ? settings.baseUrl : `${settings.baseUrl}/`;
    this.options = {
      timeoutMs: settings.timeoutMs ?? 30_000,
      maxAttempts: Math.max(1, settings.maxAttempts ?? 6),
      initialDelayMs: settings.initialDelayMs ?? 1_000,
      maxDelayMs: settings.maxDelayMs ?? 32_000,
      fetch: settings.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      sleep: settings.sleep ?? defaultSleep,
      onResponse: settings.onResponse,
    };
  }

  /** Creator search: 100 units per success. */
  async searchCreators(body: SearchCreatorsBody = {}, options?: CallOptions): Promise<SearchCreatorsResult> {
    return (await this.rest<SuccessEnvelope<'searchCreators'>>({ operation: 'searchCreators', ...restOperations.searchCreators, body }, options)).data;
  }

  /** Video search: 100 units per success. */
  async searchVideos(body: SearchVideosBody = {}, options?: CallOptions): Promise<SearchVideosResult> {
    return (await this.rest<SuccessEnvelope<'searchVideos'>>({ operation: 'searchVideos', ...restOperations.searchVideos, body }, options)).data;
  }

  /** Live-stream search: 1 unit per success. */
  async searchLiveStreams(body: SearchLiveStreamsBody = {}, options?: CallOptions): Promise<SearchLiveStreamsResult> {
    return (await this.rest<SuccessEnvelope<'searchLiveStreams'>>({ operation: 'searchLiveStreams', ...restOperations.searchLiveStreams, body }, options))
      .data;
  }

  /** A creator's latest posts, fetched live from the platform: 100 units per success. */
  async realtimeMedias(query: RealtimeMediasQuery, options?: CallOptions): Promise<RealtimeMediasResult> {
    const { user_id, offset } = query;
    return (
      await this.rest<SuccessEnvelope<'realtimeMedias'>>({ operation: 'realtimeMedias', ...restOperations.realtimeMedias, query: { user_id, offset } }, options)
    ).data;
  }

  /** Checks the key; free. */
  async ping(options?: CallOptions): Promise<PingResult> {
    return (await this.rest<SuccessEnvelope<'ping'>>({ operation: 'ping', ...restOperations.ping }, options)).data;
  }

  /**
   * A GraphQL operation on /graphql, metered like its REST twins. Field errors come back in
   * `errors` beside the other fields' data; a refused request (401, 429 after the retries, 5xx)
   * throws CreatorDataError with the first error's `extensions.code`.
   */
  async graphql<Data = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, options?: CallOptions): Promise<GraphQLResult<Data>> {
    return this.send<GraphQLResult<Data>>({ operation: 'graphql', method: 'POST', path: '/graphql', body: { query, variables } }, options, (status, body) => {
      const first = (body as GraphQLResult<Data> | null)?.errors?.[0];
      return { code: first?.extensions?.code ?? status, message: first?.message ?? `HTTP ${status}`, fields: first?.extensions?.fields ?? [] };
    });
  }

  private rest<Envelope>(request: Request, options?: CallOptions): Promise<Envelope> {
    return this.send<Envelope>(request, options, (status, body) => {
      const envelope = body as Partial<ErrorEnvelope> | null;
      return { code: envelope?.code ?? status, message: envelope?.message ?? `HTTP ${status}`, fields: envelope?.errors ?? [] };
    });
  }

  /**
   * One call under the contract's retry policy: a 429 waits its Retry-After (else the backoff);
   * 5xx answers, timeouts and network failures wait 1 s, doubled after each failure up to 32 s;
   * any other 4xx is final at once. Every route only reads, and a request whose client left is not
   * charged, so retrying a timeout cannot buy twice.
   */
  private async send<Body>(
    request: Request,
    call: CallOptions = {},
    describeError: (status: number, body: unknown) => { code: number | string; message: string; fields: FieldError[] },
  ): Promise<Body> {
    const url = new URL(request.path.slice(1), this.baseUrl);
    for (const [name, value] of Object.entries(request.query ?? {})) if (value != null) url.searchParams.set(name, value);
    const headers: Record<string, string> = { authorization: this.settings.apiKey, accept: 'application/json' };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    if (call.requestId) headers['x-request-id'] = call.requestId;
    const payload = request.body === undefined ? undefined : JSON.stringify(request.body);

    for (let attempt = 1; ; attempt++) {
      call.signal?.throwIfAborted();
      let failure: CreatorDataError;
      let waitMs: number | null = null;
      const timeout = AbortSignal.timeout(call.timeoutMs ?? this.options.timeoutMs);
      const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
      try {
        const response = await this.options.fetch(url, { method: request.method, headers, body: payload, signal });
        const body = await readBody(response);
        const requestId = response.headers.get('x-request-id');
        const remaining = response.headers.get('x-quota-remaining');
        this.options.onResponse?.({
          operation: request.operation,
          attempt,
          status: response.status,
          requestId,
          quotaRemaining: remaining === null ? null : Number(remaining),
        });
        if (response.ok && body !== null) return body as Body;
        waitMs = retryAfterMs(response.headers.get('retry-after'));
        failure = new CreatorDataError({
          status: response.status,
          ...(body === null ? { code: response.status, message: `HTTP ${response.status}: the answer is not JSON`, fields: [] } : describeError(response.status, body)),
          requestId,
          retryAfterSeconds: waitMs === null ? null : waitMs / 1000,
          attempts: attempt,
        });
      } catch (error) {
        if (call.signal?.aborted) throw call.signal.reason;
        const timedOut = timeout.aborted;
        failure = new CreatorDataError({
          status: 0,
          code: timedOut ? 'TIMEOUT' : 'NETWORK_ERROR',
          message: timedOut ? `no answer within ${call.timeoutMs ?? this.options.timeoutMs} ms` : `request failed: ${(error as Error).message}`,
          attempts: attempt,
          cause: error,
        });
      }
      if (!failure.retryable || attempt >= this.options.maxAttempts) throw failure;
      await this.options.sleep(waitMs ?? backoffDelay(attempt, this.options.initialDelayMs, this.options.maxDelayMs), call.signal);
    }
  }
}

/** The answer's JSON, or null when it has none (a proxy's HTML error page, say). */
async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { operations } from '../src/client/api-types.js';
import {
  CreatorDataClient,
  CreatorDataError,
  restOperations,
  type ClientOptions,
  type SearchCreatorsBody,
  type SearchLiveStreamsBody,
  type SearchVideosBody,
} from '../src/client/index.js';
import { defaultSleep } from '../src/client/retry.js';
import { openStore } from '../src/store/connect.js';
import { replaceSnapshot } from '../src/store/live-streams.js';
import { createInstagramClient } from '../src/upstreams/instagram/client.js';
import { INSTAGRAM_SIM_USERS, startInstagramSimulator, type InstagramSimulator } from '../src/upstreams/instagram/simulator.js';
import { createTestApp, type TestApp } from './support/app.js';
import { loadCatalog } from './support/catalog.js';
import { committedDocument } from './support/openapi.js';

// The typed client against a real server on a real port (the whole app over a test database,
// the photo-platform simulator upstream): successes, the contract's retry policy on real 429,
// 500 and 503 answers, and the 4xx answers it must not retry.

let app: TestApp;
let sim: InstagramSimulator;
let server: Server;
let baseUrl: string;
let proKey: string;

beforeAll(async () => {
  sim = await startInstagramSimulator();
  app = await createTestApp({}, { instagram: createInstagramClient({ baseUrl: sim.url, timeoutMs: 5_000 }) });
  await loadCatalog(app.store.db);
  await replaceSnapshot(
    app.store.db,
    Array.from({ length: 5 }, (_, i) => ({
      id: `s${i}`,
      userId: String(700 + i),
      userLogin: `streamer_${i}`,
      userName: `Streamer ${i}`,
      gameId: '509658',
      gameName: 'Just Chatting',
      type: 'live',
      title: `stream ${i}`,
      viewerCount: 100 * (5 - i),
      startedAt: new Date(Date.UTC(2026, 4, 1, i)),
      language: 'en',
      thumbnailUrl: '',
      tags: [],
      isMature: false,
    })),
  );
  proKey = await app.newKey({ plan: 'pro', ratePerSecond: 10_000 });
  server = createServer((request, response) => void app.server(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await app?.close();
  await sim?.close();
});

interface Seen {
  status: number;
  retryAfter: string | null;
  requestId: string | null;
  authorization: string | null;
}

/** A client whose every HTTP exchange (real fetch) and every wait is recorded; waits take no time unless `realSleep`. */
function recordingClient(options: Partial<ClientOptions> & { realSleep?: boolean } = {}) {
  const seen: Seen[] = [];
  const waits: number[] = [];
  const client = new CreatorDataClient({
    baseUrl,
    apiKey: proKey,
    ...options,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      seen.push({
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        requestId: response.headers.get('x-request-id'),
        authorization: new Headers(init?.headers).get('authorization'),
      });
      return response;
    },
    sleep: async (ms, signal) => {
      waits.push(ms);
      if (options.realSleep) await defaultSleep(ms, signal);
    },
  });
  return { client, seen, waits };
}

async function failureOf(call: Promise<unknown>): Promise<CreatorDataError> {
  const outcome = await call.then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(CreatorDataError);
  return outcome as CreatorDataError;
}

describe('successes', () => {
  it('each REST method answers the envelope data the route sends, sending the raw key', async () => {
    const { client, seen } = recordingClient();
    const body: SearchCreatorsBody = { sort_by: 'follower_count', gender: 2, page_size: 5 };
    const creators = await client.searchCreators(body);
    const raw = await fetch(`${baseUrl}/api/v1/search/twitter/user`, {
      method: 'POST',
      headers: { authorization: proKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json());
    expect(creators).toEqual(raw.data);
    expect(creators.items.length).toBe(5);
    expect(creators.items.every((c) => c.gender === 'female')).toBe(true);
    const followers = creators.items.map((c) => c.follower_count);
    expect(followers).toEqual([...followers].sort((a, b) => b - a));

    const videos = await client.searchVideos({ video_type: 2, page_size: 10 });
    expect(videos.items.length).toBeGreaterThan(0);
    expect(videos.items.every((v) => v.video_type === 'short')).toBe(true);

    const firstPage = await client.searchLiveStreams({ first: 2 });
    expect(firstPage.data.map((s) => s.id)).toEqual(['s0', 's1']);
    expect(firstPage.more).toBe(true);
    const nextPage = await client.searchLiveStreams({ first: 2, after: firstPage.offset });
    expect(nextPage.data.map((s) => s.id)).toEqual(['s2', 's3']);

    const medias = await client.realtimeMedias({ user_id: INSTAGRAM_SIM_USERS.standard });
    expect(medias.medias.length).toBeGreaterThan(0);
    expect(medias.more).toBe(true);
    const older = await client.realtimeMedias({ user_id: INSTAGRAM_SIM_USERS.standard, offset: medias.offset });
    expect(older.medias[0].media_id).not.toBe(medias.medias[0].media_id);

    const pong = await client.ping();
    expect(Date.parse(pong.time)).toBeGreaterThan(Date.now() - 60_000);

    expect(seen.every((s) => s.status === 200 && s.authorization === proKey)).toBe(true);
  });

  it('reports the quota each answer leaves', async () => {
    const key = await app.newKey({ plan: 'pro', quota: 1_000, ratePerSecond: 10_000 });
    const remaining: (number | null)[] = [];
    const client = new CreatorDataClient({ baseUrl, apiKey: key, onResponse: (info) => remaining.push(info.quotaRemaining) });
    await client.searchCreators();
    await client.searchLiveStreams();
    await client.ping();
    expect(remaining).toEqual([900, 899, 899]);
  });

  it('graphql returns data beside field errors, and throws on a refused request', async () => {
    const { client } = recordingClient();
    const result = await client.graphql<{ viewer: { plan: string } }>('query($u: String!) { viewer { plan } realtimeMedias(userId: $u) { more } }', {
      u: 'not-digits',
    });
    expect(result.data?.viewer.plan).toBe('pro');
    expect(result.errors?.[0].extensions?.code).toBe('BAD_REQUEST');

    const stranger = new CreatorDataClient({ baseUrl, apiKey: 'cds_unknown' });
    const refused = await failureOf(stranger.graphql('{ viewer { plan } }'));
    expect(refused).toMatchObject({ status: 401, code: 'UNAUTHENTICATED', attempts: 1 });
  });

  it('has one method per operation of openapi.json, named by its operation id', () => {
    const documented = Object.entries<Record<string, { operationId: string }>>(committedDocument.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => [operation.operationId, { method: method.toUpperCase(), path }]),
    );
    expect(Object.fromEntries(documented)).toEqual(restOperations);
    for (const name of Object.keys(restOperations)) expect(typeof CreatorDataClient.prototype[name as keyof CreatorDataClient]).toBe('function');
  });
});

describe('the retry policy against real answers', () => {
  it('429: waits the Retry-After the server sent, then succeeds', { timeout: 20_000 }, async () => {
    // One request a second, burst 2: refused pings show the bucket empty; the client's comes next.
    const key = await app.newKey({ plan: 'pro', ratePerSecond: 1 });
    let refused = 0;
    for (let i = 0; i < 10 && refused === 0; i++) {
      if ((await fetch(`${baseUrl}/api/ping`, { headers: { authorization: key } })).status === 429) refused++;
    }
    expect(refused).toBe(1);
    // A backoff of its own far shorter than Retry-After: the wait shows which one the client used.
    const { client, seen, waits } = recordingClient({ apiKey: key, realSleep: true, initialDelayMs: 50 });
    await client.ping();
    expect(seen.map((s) => s.status)).toEqual([429, 200]);
    expect(Number(seen[0].retryAfter)).toBeGreaterThanOrEqual(1);
    expect(waits).toEqual([Number(seen[0].retryAfter) * 1000]);
  });

  it('429: gives up after maxAttempts with the status, code, message, Retry-After and request id', async () => {
    const key = await app.newKey({ plan: 'trial' });
    const { client, seen } = recordingClient({ apiKey: key, maxAttempts: 1 });
    // 14 at once: past the burst of 10 (and the 4 in flight).
    const outcomes = await Promise.allSettled(Array.from({ length: 14 }, () => client.ping()));
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason as CreatorDataError);
    // The bucket refills 1 token every 200 ms while they run: at least one is refused, most likely four.
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const error of refused) {
      expect(error).toBeInstanceOf(CreatorDataError);
      expect(error).toMatchObject({ status: 429, code: 429, attempts: 1 });
      expect(error.message).toMatch(/Too Many Requests/);
      expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(seen.filter((s) => s.status === 429).map((s) => s.requestId)).toContain(error.requestId);
    }
    expect(seen).toHaveLength(14);
  });

  it('500 upstream unavailable: backs off 1, 2, 4 s and gives up after maxAttempts', async () => {
    const { client, seen, waits } = recordingClient({ maxAttempts: 4 });
    const error = await failureOf(client.realtimeMedias({ user_id: INSTAGRAM_SIM_USERS.serverError }));
    expect(error).toMatchObject({ status: 500, code: 500, attempts: 4 });
    expect(error.message).toMatch(/upstream unavailable/i);
    expect(seen.map((s) => s.status)).toEqual([500, 500, 500, 500]);
    expect(error.requestId).toBe(seen[3].requestId);
    expect(waits).toEqual([1000, 2000, 4000]);
  });

  it('doubles the wait up to the 32 s ceiling', async () => {
    const { client, waits } = recordingClient({ maxAttempts: 8 });
    await failureOf(client.realtimeMedias({ user_id: INSTAGRAM_SIM_USERS.serverError }));
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 32000]);
  });

  it('503 while the database is unreachable: waits its Retry-After, retries, and reports it', async () => {
    const unreachable = await openStore({ databaseUrl: 'postgres://postgres@127.0.0.1:1/gone', connectTimeoutMs: 500 });
    const reachable = app.services.store;
    app.services.store = unreachable;
    try {
      const { client, seen, waits } = recordingClient({ maxAttempts: 2 });
      const error = await failureOf(client.searchCreators({ page_size: 1 }));
      expect(error).toMatchObject({ status: 503, code: 503, attempts: 2 });
      expect(seen.map((s) => s.status)).toEqual([503, 503]);
      expect(waits).toEqual([Number(seen[0].retryAfter) * 1000]);
    } finally {
      app.services.store = reachable;
      await unreachable.close();
    }
    // And once the database is back, the same call succeeds.
    expect((await recordingClient().client.searchCreators({ page_size: 1 })).items).toHaveLength(1);
  });

  it.each([
    ['400 naming the field', (c: CreatorDataClient) => c.searchCreators({ gender: 3 } as unknown as SearchCreatorsBody), 400],
    ['401 for an unknown key', (c: CreatorDataClient) => c.ping(), 401],
    ['403 outside the plan', (c: CreatorDataClient) => c.realtimeMedias({ user_id: INSTAGRAM_SIM_USERS.standard }), 403],
    ['404 for an account the platform lacks', (c: CreatorDataClient) => c.realtimeMedias({ user_id: INSTAGRAM_SIM_USERS.notFound }), 404],
  ])('never retries a %s', async (_name, call, status) => {
    const apiKey = status === 401 ? 'cds_unknown' : status === 403 ? await app.newKey({ plan: 'trial' }) : proKey;
    const { client, seen, waits } = recordingClient({ apiKey });
    const error = await failureOf(call(client));
    expect(error).toMatchObject({ status, code: status, attempts: 1 });
    expect(error.retryable).toBe(false);
    expect(seen).toHaveLength(1);
    expect(waits).toEqual([]);
    if (status === 400) expect(error.fields.map((f) => f.field)).toEqual(['gender']);
  });
});

describe('timeouts and cancellation', () => {
  it('times out an attempt that gets no answer, retries it, and reports TIMEOUT', async () => {
    const { client, waits } = recordingClient({ timeoutMs: 300, maxAttempts: 2 });
    const started = performance.now();
    const error = await failureOf(client.realtimeMedias({ user_id: INSTAGRAM_SIM_USERS.hangs }));
    expect(error).toMatchObject({ status: 0, code: 'TIMEOUT', attempts: 2 });
    expect(waits).toEqual([1000]);
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('an AbortSignal ends the call at once, during a request or a backoff wait', async () => {
    const { client } = recordingClient({ realSleep: true });
    const during = AbortSignal.timeout(200);
    let started = performance.now();
    await expect(client.realtimeMedias({ user_id: INSTAGRAM_SIM_USERS.hangs }, { signal: during })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(2_000);

    const controller = new AbortController();
    started = performance.now();
    const call = client.realtimeMedias({ user_id: INSTAGRAM_SIM_USERS.serverError }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    // The first backoff wait is 1 s: the abort cut it short.
    expect(performance.now() - started).toBeLessThan(900);
  });
});

describe('types', () => {
  it('request types are the REST-level schemas and agree with openapi.json', () => {
    type DocumentedBody<Operation extends 'searchCreators' | 'searchVideos' | 'searchLiveStreams'> = NonNullable<
      operations[Operation]['requestBody']
    >['content']['application/json'];
    expectTypeOf<SearchCreatorsBody>().toEqualTypeOf<DocumentedBody<'searchCreators'>>();
    expectTypeOf<SearchVideosBody>().toEqualTypeOf<DocumentedBody<'searchVideos'>>();
    expectTypeOf<SearchLiveStreamsBody>().toEqualTypeOf<DocumentedBody<'searchLiveStreams'>>();

    // Compile-time only: what the wire refuses, the types refuse.
    const typeChecks = (client: CreatorDataClient) => {
      // @ts-expect-error camelCase names are unknown fields on the wire
      void client.searchCreators({ followerCountMin: 1 });
      // @ts-expect-error gender travels as 0, 1 or 2
      void client.searchCreators({ gender: 'female' });
      // @ts-expect-error sort_by is lowercase on the wire
      void client.searchCreators({ sort_by: 'FOLLOWER_COUNT' });
      // @ts-expect-error user_id is required
      void client.realtimeMedias({});
    };
    expect(typeof typeChecks).toBe('function');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/store/connect.js';
import { replaceSnapshot } from '../src/store/live-streams.js';
import { createInstagramClient } from '../src/upstreams/instagram/client.js';
import { INSTAGRAM_SIM_USERS, startInstagramSimulator, type InstagramSimulator } from '../src/upstreams/instagram/simulator.js';
import { createTestApp, type TestApp } from './support/app.js';
import { loadCatalog } from './support/catalog.js';
import { createResponseChecker } from './support/openapi.js';

// Real answers of every route, successes and errors, against openapi.json: each body must match
// the response schema documented for its status (no missing or extra field, right types and
// formats) and each documented header must be there and well formed.

const CREATORS = '/api/v1/search/twitter/user';
const VIDEOS = '/api/v1/search/youtube/video';
const LIVE = '/api/v1/twitch/search/live';
const MEDIAS = '/api/v1/instagram/realtime/user/medias';
const PING = '/api/ping';
const check = createResponseChecker();

let app: TestApp;
let sim: InstagramSimulator;
const keys: Record<'pro' | 'trial' | 'noQuota', string> = { pro: '', trial: '', noQuota: '' };

beforeAll(async () => {
  sim = await startInstagramSimulator();
  app = await createTestApp({}, { instagram: createInstagramClient({ baseUrl: sim.url, timeoutMs: 30_000 }) });
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
      type: i === 2 ? '' : 'live',
      title: `stream ${i}`,
      viewerCount: i === 0 ? 15_000_000_000 : 100 * i,
      startedAt: new Date(Date.UTC(2026, 4, 1, i)),
      language: i === 4 ? 'other' : 'en',
      thumbnailUrl: `https://cdn.example/live_${i}-{width}x{height}.jpg`,
      tags: i % 2 ? [] : ['English'],
      isMature: i === 3,
    })),
  );
  keys.pro = await app.newKey({ plan: 'pro', ratePerSecond: 10_000 });
  keys.trial = await app.newKey({ plan: 'trial', ratePerSecond: 10_000 });
  keys.noQuota = await app.newKey({ plan: 'pro', quota: 0, ratePerSecond: 10_000 });
});
afterAll(async () => {
  await app?.close();
  await sim?.close();
});

type Call = { path: string; method: 'GET' | 'POST'; body?: unknown; key?: string | null; headers?: Record<string, string> };

/** Sends a real request, expects `status`, and checks the answer against the document. */
async function expectDocumented(call: Call, status: number) {
  const answer = await app.rest(call.path, { method: call.method, body: call.body, key: call.key === undefined ? keys.pro : call.key, headers: call.headers });
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(check(call.path.split('?')[0], call.method, answer), JSON.stringify(answer.body).slice(0, 500)).toEqual([]);
  return answer;
}

const routes: (Call & { name: string })[] = [
  { name: 'creator search', path: CREATORS, method: 'POST', body: { page_size: 40, sort_by: 'follower_count' } },
  { name: 'video search', path: VIDEOS, method: 'POST', body: { page_size: 30 } },
  { name: 'live-stream search', path: LIVE, method: 'POST', body: { first: 3 } },
  { name: 'realtime media list', path: `${MEDIAS}?user_id=${INSTAGRAM_SIM_USERS.standard}`, method: 'GET' },
  { name: 'ping', path: PING, method: 'GET' },
];

describe('successes match the documented 200 answer', () => {
  it.each(routes)('$name', async (route) => {
    const { body } = await expectDocumented(route, 200);
    const items = body.data.items ?? body.data.data ?? body.data.medias;
    if (route.path !== PING) expect(items.length, 'the item schema must be exercised').toBeGreaterThan(0);
  });

  it('and so do pages that exercise the other shapes: a backward live page, an empty feed, a filtered search', async () => {
    const first = await expectDocumented({ path: LIVE, method: 'POST', body: { first: 2 } }, 200);
    await expectDocumented({ path: LIVE, method: 'POST', body: { first: 2, after: first.body.data.offset } }, 200);
    await expectDocumented({ path: LIVE, method: 'POST', body: { first: 1, before: first.body.data.offset, type: 'live' } }, 200);
    await expectDocumented({ path: `${MEDIAS}?user_id=${INSTAGRAM_SIM_USERS.noPosts}`, method: 'GET' }, 200);
    await expectDocumented({ path: CREATORS, method: 'POST', body: { query: 'alpha', gender: 2, verified: 0, page: 2, page_size: 2 } }, 200);
    await expectDocumented({ path: VIDEOS, method: 'POST', body: { video_type: 2, query: 'nothing matches this' } }, 200);
  });
});

describe('errors match their documented answers', () => {
  it.each(routes)('$name: 401 without a key, with a Bearer prefix, with an unknown key', async (route) => {
    await expectDocumented({ ...route, key: null }, 401);
    await expectDocumented({ ...route, key: `Bearer ${keys.pro}` }, 401);
    await expectDocumented({ ...route, key: 'cds_not_a_key' }, 401);
  });

  it('400 with every bad field named', async () => {
    const bad = await expectDocumented({ path: CREATORS, method: 'POST', body: { gender: 3, followerCountMin: 1, page_size: 0 } }, 400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['followerCountMin', 'gender', 'page_size']);
    await expectDocumented({ path: VIDEOS, method: 'POST', body: '{"video_type": ', headers: { 'content-type': 'application/json' } }, 400);
    await expectDocumented({ path: VIDEOS, method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } }, 400);
    await expectDocumented({ path: LIVE, method: 'POST', body: { after: 'x', before: 'y' } }, 400);
    await expectDocumented({ path: `${MEDIAS}?user_id=someone`, method: 'GET' }, 400);
  });

  it('403 for an endpoint outside the plan and for an exhausted quota', async () => {
    await expectDocumented({ path: `${MEDIAS}?user_id=${INSTAGRAM_SIM_USERS.standard}`, method: 'GET', key: keys.trial }, 403);
    for (const route of routes.filter((r) => r.path !== PING)) await expectDocumented({ ...route, key: keys.noQuota }, 403);
  });

  it('404 for an account the photo platform does not have', async () => {
    await expectDocumented({ path: `${MEDIAS}?user_id=${INSTAGRAM_SIM_USERS.notFound}`, method: 'GET' }, 404);
  });

  it('500 upstream unavailable when the photo platform fails', async () => {
    const failed = await expectDocumented({ path: `${MEDIAS}?user_id=${INSTAGRAM_SIM_USERS.serverError}`, method: 'GET' }, 500);
    expect(failed.body.message).toMatch(/upstream unavailable/i);
  });

  it.each(routes)('$name: 429 with Retry-After once the rate is exceeded', async (route) => {
    // 1 request per second, burst 2: the third request within a second is refused.
    const key = await app.newKey({ plan: 'pro', ratePerSecond: 1 });
    const answers: Awaited<ReturnType<TestApp['rest']>>[] = [];
    while (answers.length < 8 && !answers.some((a) => a.status === 429)) {
      answers.push(await app.rest(route.path, { method: route.method, body: route.body, key }));
    }
    const refused = answers.find((a) => a.status === 429);
    expect(refused, JSON.stringify(answers.map((a) => a.status))).toBeDefined();
    expect(check(route.path.split('?')[0], route.method, refused!)).toEqual([]);
  });

  it('503 with Retry-After while the database is unreachable', async () => {
    // The catalogue's database goes away (nothing listens on port 1); keys still check out.
    const unreachable = await openStore({ databaseUrl: 'postgres://postgres@127.0.0.1:1/gone', connectTimeoutMs: 500 });
    const reachable = app.services.store;
    app.services.store = unreachable;
    try {
      for (const route of routes.filter((r) => r.path === CREATORS || r.path === VIDEOS || r.path === LIVE)) {
        const answer = await expectDocumented(route, 503);
        expect(answer.body.message).toMatch(/retry/i);
      }
    } finally {
      app.services.store = reachable;
      await unreachable.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { rotateKey, setKeyStatus, issueKey, createAccount } from '../../src/store/accounts.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { loadCatalog } from '../support/catalog.js';

const CREATORS = '/api/v1/search/twitter/user';
const VIDEOS = '/api/v1/search/youtube/video';
const creatorsQuery = '{ creators(first: 1) { totalCount } }';
let app: TestApp;
let logged = '';

// Identities are reused for KEY_CACHE_MS: short here, so the bound can be waited out.
const KEY_CACHE_MS = 300;
/** What the polling request itself may take on a loaded machine, on top of the cache's bound. */
const SLOW_REQUEST_MS = 700;

beforeAll(async () => {
  app = await createTestApp({ keyCacheMs: KEY_CACHE_MS });
  const log = app.services.log;
  app.services.log = {
    info: (m, d) => ((logged += JSON.stringify([m, d])), log.info(m, d)),
    warn: (m, d) => ((logged += JSON.stringify([m, d])), log.warn(m, d)),
    error: (m, d) => ((logged += JSON.stringify([m, d])), log.error(m, d)),
  };
  await loadCatalog(app.store.db);
});
afterAll(() => app?.close());

async function keyWithId(options: Parameters<typeof createAccount>[1] = { plan: 'pro' }) {
  return issueKey(app.store.db, await createAccount(app.store.db, options));
}

describe('the key check (401), REST and GraphQL alike', () => {
  const cases: [string, (key: string) => string | null][] = [
    ['no Authorization header', () => null],
    ['an empty header', () => ''],
    ['a Bearer prefix', (key) => `Bearer ${key}`],
    ['whitespace inside the value', (key) => `${key.slice(0, 5)} ${key.slice(5)}`],
    ['a tab after the key', (key) => `${key}\tx`],
    ['an unknown key', () => 'cds_thisKeyDoesNotExist0000000000000'],
  ];
  it.each(cases)('rejects %s', async (_name, header) => {
    const { key } = await keyWithId();
    const rest = await app.rest(CREATORS, { body: {}, key: header(key) });
    expect(rest.status).toBe(401);
    expect(rest.body).toMatchObject({ success: false, code: 401 });
    const gql = await app.graphql(creatorsQuery, {}, header(key));
    expect(gql.status).toBe(401);
    expect(gql.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  /** Polls until the key gets `status`; how long that took. */
  async function until(key: string, status: number): Promise<number> {
    const started = performance.now();
    while ((await app.rest(CREATORS, { body: {}, key })).status !== status) {
      if (performance.now() - started > KEY_CACHE_MS * 10) throw new Error(`still not ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return performance.now() - started;
  }

  it('takes disable, enable, rotate and delete into account within KEY_CACHE_MS', async () => {
    const issued = await keyWithId();
    expect((await app.rest(CREATORS, { body: {}, key: issued.key })).status).toBe(200);
    await setKeyStatus(app.store.db, issued.id, 'disabled');
    expect(await until(issued.key, 401)).toBeLessThan(KEY_CACHE_MS + SLOW_REQUEST_MS);
    await setKeyStatus(app.store.db, issued.id, 'active');
    expect(await until(issued.key, 200)).toBeLessThan(KEY_CACHE_MS + SLOW_REQUEST_MS);
    const rotated = (await rotateKey(app.store.db, issued.id))!;
    expect(await until(issued.key, 401)).toBeLessThan(KEY_CACHE_MS + SLOW_REQUEST_MS);
    expect((await app.graphql(creatorsQuery, {}, rotated.key)).status).toBe(200);
    await setKeyStatus(app.store.db, issued.id, 'deleted');
    expect(await until(rotated.key, 401)).toBeLessThan(KEY_CACHE_MS + SLOW_REQUEST_MS);
    expect(await setKeyStatus(app.store.db, issued.id, 'active')).toBeNull();
  });

  it('reuses a known key without asking the database again within KEY_CACHE_MS', async () => {
    const issued = await keyWithId();
    expect((await app.rest('/api/ping', { key: issued.key })).status).toBe(200);
    const before = app.store.queries.length;
    for (let i = 0; i < 5; i++) expect((await app.rest('/api/ping', { key: issued.key })).status).toBe(200);
    expect(app.store.queries.slice(before).filter((q) => q.includes('api_keys'))).toEqual([]);
  });

  it('checks the key before the request shape, and the route before the key', async () => {
    expect((await app.rest(CREATORS, { body: '{oops', key: null })).status).toBe(401);
    expect((await app.rest('/api/v1/search/twitter/nothing', { body: {}, key: null })).status).toBe(404);
  });

  it('lets an introspection-only operation through without a key', async () => {
    const { status, body } = await app.graphql('{ __schema { queryType { name } } __typename }', {}, null);
    expect(status).toBe(200);
    expect(body.data.__schema.queryType.name).toBe('Query');
  });
});

describe('quota (403) and costs', () => {
  const remaining = (headers: Headers) => Number(headers.get('x-quota-remaining'));

  it('charges 100 per search and 0 for ping, seen through X-Quota-Remaining', async () => {
    const key = await app.newKey({ plan: 'pro', quota: 1000 });
    const first = await app.rest(CREATORS, { body: {}, key });
    expect(remaining(first.headers)).toBe(900);
    const second = await app.rest(VIDEOS, { body: {}, key });
    expect(remaining(second.headers)).toBe(800);
    const ping = await app.rest('/api/ping', { key });
    expect(ping.body).toMatchObject({ success: true, code: 200, message: 'pong' });
    expect(new Date(ping.body.data.time).toISOString()).toBe(ping.body.data.time);
    expect(remaining(ping.headers)).toBe(800);
    // HEAD is GET on a free path (docs/decisions.md): a client may check its key and quota so.
    const head = await app.server.fetch('http://test/api/ping', { method: 'HEAD', headers: { authorization: key } });
    expect(head.status).toBe(200);
    expect(remaining(head.headers)).toBe(800);
    expect(head.headers.get('x-quota-cost')).toBe('0');
    expect((await app.server.fetch('http://test/api/ping', { method: 'HEAD' })).status).toBe(401);
    const both = await app.graphql('{ creators(first: 1) { totalCount } videos(first: 1) { totalCount } }', {}, key);
    expect(remaining(both.headers)).toBe(600);
    const viewer = await app.graphql('{ viewer { plan quotaAllowance quotaUsed quotaRemaining } }', {}, key);
    expect(viewer.body.data.viewer).toEqual({ plan: 'pro', quotaAllowance: 1000, quotaUsed: 400, quotaRemaining: 600 });
    expect(remaining(viewer.headers)).toBe(600);
  });

  it('charges nothing for a 400, a 404 or a 500', async () => {
    const key = await app.newKey({ plan: 'pro', quota: 1000 });
    const bad = await app.rest(CREATORS, { body: { page: 0 }, key });
    expect(bad.status).toBe(400);
    expect(remaining(bad.headers)).toBe(1000);
    const badCategory = await app.rest(CREATORS, { body: { category_ids: [1] }, key });
    expect(badCategory.status).toBe(400);
    expect(remaining(badCategory.headers)).toBe(1000);
    const gqlBad = await app.graphql('{ creators(first: 500) { totalCount } }', {}, key);
    expect(gqlBad.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(remaining(gqlBad.headers)).toBe(1000);
    // A 500: the videos table is briefly unreachable under its name; the reservation is refunded.
    await sql`ALTER TABLE videos RENAME TO videos_away`.execute(app.store.db);
    try {
      const failed = await app.rest(VIDEOS, { body: {}, key });
      expect(failed.status).toBe(500);
      expect(failed.body).toEqual({ success: false, code: 500, message: 'Internal Server Error' });
      expect(remaining(failed.headers)).toBe(1000);
    } finally {
      await sql`ALTER TABLE videos_away RENAME TO videos`.execute(app.store.db);
    }
    expect(logged).toContain('videos');
    expect(logged).not.toContain(key);
  });

  it('answers 403 once the units are used up, saying so, and a refused call costs nothing', async () => {
    const key = await app.newKey({ plan: 'trial', quota: 250 });
    expect((await app.rest(CREATORS, { body: {}, key })).status).toBe(200);
    expect((await app.rest(CREATORS, { body: {}, key })).status).toBe(200);
    const refused = await app.rest(CREATORS, { body: {}, key });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/quota exhausted/);
    expect(remaining(refused.headers)).toBe(50);
    const gql = await app.graphql(creatorsQuery, {}, key);
    expect(gql.body.errors[0].extensions.code).toBe('QUOTA_EXHAUSTED');
    expect((await app.rest('/api/ping', { key })).status).toBe(200);
  });

  it('answers 403 for an ended subscription', async () => {
    const key = await app.newKey({ plan: 'pro', subscriptionEndsAt: new Date(Date.now() - 1000) });
    const refused = await app.rest(CREATORS, { body: {}, key });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/subscription has ended/);
    const gql = await app.graphql(creatorsQuery, {}, key);
    expect(gql.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('validates before it checks the plan or quota (400 before 403)', async () => {
    const key = await app.newKey({ plan: 'trial', quota: 0 });
    expect((await app.rest(CREATORS, { body: { page_size: 0 }, key })).status).toBe(400);
    expect((await app.rest(CREATORS, { body: {}, key })).status).toBe(403);
  });

  it('with units for exactly 10 searches, 60 concurrent ones yield 10 successes and 50 refusals', async () => {
    const accountId = await createAccount(app.store.db, { plan: 'pro', quota: 1000 });
    // Six keys of one account: quota is per account, in-flight limits per key.
    const keys = await Promise.all(Array.from({ length: 6 }, () => issueKey(app.store.db, accountId)));
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => app.rest(CREATORS, { body: {}, key: keys[i % 6].key }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 403)).toHaveLength(50);
    const [{ remaining: left }] = (
      await sql<{ remaining: string }>`SELECT quota_allowance - quota_used AS remaining FROM accounts WHERE id = ${accountId}`.execute(app.store.db)
    ).rows;
    expect(Number(left)).toBe(0);
  });
});

describe('rate and concurrency limits (429)', () => {
  it('refuses past the burst with Retry-After in whole seconds, REST and GraphQL alike', async () => {
    const key = await app.newKey({ plan: 'trial', ratePerSecond: 1 });
    // Rate 1/s gives a burst of 2.
    expect((await app.rest('/api/ping', { key })).status).toBe(200);
    expect((await app.rest('/api/ping', { key })).status).toBe(200);
    const refused = await app.rest('/api/ping', { key });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, code: 429 });
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    const gql = await app.graphql(creatorsQuery, {}, key);
    expect(gql.status).toBe(429);
    expect(gql.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(gql.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    // The key was known: the refusal tells the operation's price and what is left, as every data answer does.
    expect(gql.body.extensions.cost).toEqual({ requested: 100, charged: 0, remaining: 10_000 });
    // A document that does not validate is refused at its turn: the rate first.
    const invalid = await app.graphql('{ creators { nope } }', {}, key);
    expect(invalid.status).toBe(429);
    expect(invalid.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(invalid.body.extensions.cost).toEqual({ requested: 0, charged: 0, remaining: 10_000 });
  });
});

describe('errors reveal nothing internal', () => {
  it('answers 404 with the envelope for unknown /api paths and methods', async () => {
    const response = await app.rest('/api/v1/unknown', { key: null });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, code: 404, message: 'Not Found' });
  });

  it('limits GraphQL depth, root fields and body size', async () => {
    const deep = await app.graphql('{ videos(first: 1) { edges { node { channel { title } } } pageInfo { hasNextPage } } }');
    expect(deep.status).toBe(200);
    const many = Array.from({ length: 11 }, (_, i) => `a${i}: viewer { plan }`).join(' ');
    const tooMany = await app.graphql(`{ ${many} }`);
    expect(tooMany.body.errors[0].message).toMatch(/at most 10 root fields/);
    const huge = await app.server.fetch('http://test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: await app.newKey() },
      body: JSON.stringify({ query: `{ viewer { plan } } # ${'x'.repeat(70_000)}` }),
    });
    expect(huge.status).toBe(413);
    const hugeRest = await app.rest(CREATORS, { body: JSON.stringify({ query: 'x'.repeat(70_000) }) });
    expect(hugeRest.status).toBe(400);
  });

  it('serves /healthz and /readyz without a key', async () => {
    expect((await app.rest('/healthz', { key: null })).body).toEqual({ status: 'ok' });
    expect((await app.rest('/readyz', { key: null })).body).toEqual({ status: 'ok' });
  });
});

describe('calls from a browser on another origin (CORS)', () => {
  const EVIL = 'https://evil.example';
  const preflight = (path: string, method: string) =>
    app.server.fetch(`http://test${path}`, {
      method: 'OPTIONS',
      headers: { origin: EVIL, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
    });

  it('allows any origin without credentials: keys travel in Authorization, never in cookies', async () => {
    for (const [path, method] of [
      ['/graphql', 'POST'],
      [CREATORS, 'POST'],
      ['/api/v1/instagram/realtime/user/medias', 'GET'],
      ['/api/ping', 'GET'],
    ]) {
      const answer = await preflight(path, method);
      expect(answer.status, path).toBe(204);
      expect(answer.headers.get('access-control-allow-origin'), path).toBe('*');
      expect(answer.headers.get('access-control-allow-credentials'), path).toBeNull();
      expect(answer.headers.get('access-control-allow-methods'), path).toContain(method);
      const allowed = answer.headers.get('access-control-allow-headers')?.toLowerCase().split(/\s*,\s*/);
      expect(allowed, path).toEqual(expect.arrayContaining(['authorization', 'content-type']));
    }
    expect((await preflight('/api/v1/nowhere', 'POST')).status).toBe(404);
  });

  it('lets the page read every answer and its quota headers, errors included', async () => {
    const key = await app.newKey();
    const headers = { origin: EVIL, authorization: key, 'content-type': 'application/json', accept: 'application/json' };
    for (const answer of [
      await app.server.fetch(`http://test${CREATORS}`, { method: 'POST', headers, body: '{}' }),
      await app.server.fetch(`http://test${CREATORS}`, { method: 'POST', headers, body: '{' }),
      await app.server.fetch('http://test/graphql', { method: 'POST', headers, body: '{"query": "{ viewer { plan } }"}' }),
      await app.server.fetch('http://test/api/ping', { headers: { origin: EVIL } }),
    ]) {
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(answer.headers.get('access-control-allow-credentials')).toBeNull();
      expect(answer.headers.get('access-control-expose-headers')?.toLowerCase()).toContain('x-quota-remaining');
    }
  });
});

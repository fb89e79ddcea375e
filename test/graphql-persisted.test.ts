import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERSISTED_MAX_CHARS, PERSISTED_MAX_DOCUMENTS, PersistedDocuments } from '../src/http/persisted.js';
import { createTestApp, type TestApp } from './support/app.js';
import { loadCatalog } from './support/catalog.js';

// Automatic Persisted Queries (src/http/persisted.ts): the hash first, the text once, then the
// hash alone, by POST and by GET, priced and charged as the text would be.

let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await createTestApp();
  await loadCatalog(app.store.db);
  key = await app.newKey({ plan: 'pro', quota: 1_000 });
});
afterAll(() => app?.close());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const persisted = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: sha256(query) } });

async function post(body: Record<string, unknown>, authorization: string | null = key) {
  const response = await app.server.fetch('http://test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(authorization === null ? {} : { authorization }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function get(parameters: Record<string, unknown>) {
  const query = new URLSearchParams(Object.entries(parameters).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]));
  const response = await app.server.fetch(`http://test/graphql?${query}`, { headers: { accept: 'application/json', authorization: key } });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

describe('persisted operations', () => {
  it('asks for the text of an unknown hash, keeps it, then runs the hash alone by GET at the same price', async () => {
    const query = 'query Top($n: Int) { creators(first: $n, sortBy: FOLLOWER_COUNT) { totalCount nodes { userId } } }';
    const variables = { n: 3 };

    const unknown = await post({ variables, extensions: persisted(query) });
    expect(unknown.status).toBe(404);
    expect(unknown.body.errors[0]).toMatchObject({ message: 'PersistedQueryNotFound', extensions: { code: 'NOT_FOUND' } });
    expect(unknown.headers.get('x-quota-cost')).toBeNull();

    const registered = await post({ query, variables, extensions: persisted(query) });
    expect(registered.status).toBe(200);
    expect(registered.body.errors).toBeUndefined();
    expect(registered.body.data.creators.nodes).toHaveLength(3);
    expect(registered.body.extensions.cost).toEqual({ requested: 100, charged: 100, remaining: 900 });

    const byHash = await get({ variables, extensions: persisted(query) });
    expect(byHash.status).toBe(200);
    expect(byHash.body.data).toEqual(registered.body.data);
    expect(byHash.body.extensions.cost).toEqual({ requested: 100, charged: 100, remaining: 800 });
    expect(byHash.headers.get('x-quota-cost')).toBe('100');

    // By POST too, and as a dry run: the price without the work.
    const dry = await post({ variables, extensions: { ...persisted(query), dryRun: true } });
    expect(dry.body).toEqual({ data: null, extensions: { cost: { requested: 100, charged: 0, remaining: 800 } } });
  });

  it('refuses a text that does not match its hash', async () => {
    const refused = await post({ query: '{ viewer { plan } }', extensions: persisted('{ viewer { quotaUsed } }') });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ message: 'PersistedQueryMismatch', extensions: { code: 'BAD_REQUEST' } });
  });

  it('keeps the GET parameters strict and the key check first', async () => {
    const bad = await get({ extensions: '{"persistedQuery": ' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].message).toBe('extensions must be a JSON object');
    const query = '{ liveStreams(first: 1) { totalCount } }';
    await post({ query, extensions: persisted(query) });
    const anonymous = await app.server.fetch(`http://test/graphql?extensions=${encodeURIComponent(JSON.stringify(persisted(query)))}`, {
      headers: { accept: 'application/json' },
    });
    expect(anonymous.status).toBe(401);
  });

  it('keeps a text only once its request carried a valid key: requests without one cannot push paying clients\' documents out', async () => {
    const mine = '{ liveStreams(first: 2) { totalCount } }';
    expect((await post({ query: mine, extensions: persisted(mine) })).status).toBe(200);
    // More texts than the store keeps, each sent without a key, or with a wrong one: 401, none kept.
    for (let i = 0; i <= PERSISTED_MAX_DOCUMENTS; i++) {
      const text = `{ liveStreams(first: 1) { totalCount } a${i}: __typename }`;
      expect((await post({ query: text, extensions: persisted(text) }, i % 2 ? null : 'cds_wrong')).status).toBe(401);
    }
    const text = '{ a: __typename }';
    await post({ query: text, extensions: persisted(text) }, null);
    expect((await post({ extensions: persisted(text) })).status).toBe(404);
    const again = await post({ extensions: persisted(mine) });
    expect(again.status).toBe(200);
    expect(again.body.data.liveStreams.totalCount).toEqual(expect.any(Number));
  });
});

describe('the store of persisted documents', () => {
  it('stays within its bounds, the least recently used leaving first', () => {
    const store = new PersistedDocuments();
    for (let i = 0; i < PERSISTED_MAX_DOCUMENTS; i++) store.set(`h${i}`, `{ d${i} }`);
    expect(store.get('h0')).toBe('{ d0 }');
    store.set('new', '{ new }');
    expect(store.get('h1')).toBeNull();
    expect(store.get('h0')).toBe('{ d0 }');
    const big = 'x'.repeat(Math.ceil(PERSISTED_MAX_CHARS * 0.6));
    store.set('big1', big);
    store.set('big2', big);
    expect(store.get('big1')).toBeNull();
    expect(store.get('big2')).toBe(big);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../src/domain/cursors.js';
import { createTestApp, type TestApp } from './support/app.js';
import { loadCatalog } from './support/catalog.js';

// Inputs a hostile or careless client sends: each must be a 400 naming the field, before any
// charge, and never a 500 or a log line an operator has to read.

const CREATORS = '/api/v1/search/twitter/user';
const VIDEOS = '/api/v1/search/youtube/video';
const LIVE = '/api/v1/twitch/search/live';
const MEDIAS = '/api/v1/instagram/realtime/user/medias';
const prototypeNames = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'];

let app: TestApp;
let key: string;
const logged: { level: string; message: string; details?: Record<string, unknown> }[] = [];

beforeAll(async () => {
  app = await createTestApp();
  await loadCatalog(app.store.db);
  // Many requests in a row: a rate no test here reaches.
  key = await app.newKey({ plan: 'pro', ratePerSecond: 10_000 });
  const record = (level: string) => (message: string, details?: Record<string, unknown>) => logged.push({ level, message, details });
  app.services.log = { info: record('info'), warn: record('warn'), error: record('error') };
});
afterAll(() => app?.close());

async function quotaUsed(): Promise<number> {
  return (await app.graphql('{ viewer { quotaUsed } }', undefined, key)).body.data.viewer.quotaUsed;
}

/** A 400 in the contract's envelope whose `errors` name `field`. */
function expectBadRequest(response: { status: number; body: any }, field: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(400);
  expect(response.body).toMatchObject({ success: false, code: 400, message: 'Bad Request' });
  expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
}

describe('keys named after Object.prototype members', () => {
  it.each(prototypeNames)('a top-level body key %s is an unknown field on every POST route', async (name) => {
    for (const path of [CREATORS, VIDEOS, LIVE]) {
      // Written as text: a JS object literal would turn __proto__ into a prototype, not a key.
      expectBadRequest(await app.rest(path, { body: `{"${name}": 1}`, key }), name);
    }
  });

  it.each(prototypeNames)('a query parameter %s is an unknown field', async (name) => {
    expectBadRequest(await app.rest(`${MEDIAS}?user_id=1003&${encodeURIComponent(name)}=1`, { key }), name);
  });

  it.each(prototypeNames)('%s nested in a body value is a 400 naming the outer field', async (name) => {
    expectBadRequest(await app.rest(CREATORS, { body: `{"locations": {"${name}": "US"}}`, key }), 'locations');
    expectBadRequest(await app.rest(CREATORS, { body: `{"gender": {"${name}": 1}}`, key }), 'gender');
  });

  it.each(prototypeNames)('%s in a GraphQL input object is a BAD_REQUEST, not INTERNAL', async (name) => {
    const response = await app.server.fetch('http://test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: key },
      body: `{"query": "query($f: CreatorFilter) { creators(filter: $f) { totalCount } }", "variables": {"f": {"${name}": 1}}}`,
    });
    const body = await response.json();
    expect(body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(body.errors[0].message).toContain(name);
  });

  it('a parameter given twice is a 400 rather than one of them silently', async () => {
    expectBadRequest(await app.rest(`${MEDIAS}?user_id=1003&user_id=1004`, { key }), 'user_id');
  });
});

describe('numbers that do not fit their column', () => {
  const cases: [string, string, unknown][] = [
    [CREATORS, 'follower_count_min', 1.5],
    [CREATORS, 'follower_count_max', 1e300],
    [CREATORS, 'follower_count_min', 2 ** 53],
    [CREATORS, 'follower_count_min', -1],
    [CREATORS, 'recent_month_publish_count_min', 3e9],
    [CREATORS, 'recent_month_publish_count_max', 2.5],
    [CREATORS, 'avg_like_count_min', 1e300],
    [CREATORS, 'avg_engagement_rate_max', 1e18],
    [CREATORS, 'retweet_ratio_max', -0.5],
    [CREATORS, 'category_ids', [3e9]],
    [CREATORS, 'category_ids', [1.5]],
    [VIDEOS, 'follower_count_min', 0.1],
    [VIDEOS, 'recent_month_publish_count_min', 1e10],
    [VIDEOS, 'categorys', [2 ** 31]],
    [VIDEOS, 'avg_play_count_max', 1e19],
  ];
  it.each(cases)('%s with %s = %s is a 400 naming it, and charges nothing', async (path, field, value) => {
    const before = await quotaUsed();
    expectBadRequest(await app.rest(path, { body: { [field]: value }, key }), field);
    expect(await quotaUsed()).toBe(before);
  });

  it('the largest values each column holds are accepted', async () => {
    const ok = await app.rest(CREATORS, {
      body: { follower_count_min: 2 ** 53 - 1, recent_month_publish_count_max: 2 ** 31 - 1, avg_like_count_max: 999_999_999_999_999_900, category_ids: [100] },
      key,
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.total).toBe(0);
  });

  it('GraphQL checks the same bounds, naming the argument path', async () => {
    const query = 'query($f: CreatorFilter) { creators(filter: $f) { totalCount } }';
    for (const f of [{ followerCountMin: 1.5 }, { recentMonthPublishCountMin: 3e9 }, { avgLikeCountMin: 1e300 }]) {
      const response = await app.graphql(query, { f }, key);
      expect(response.body.errors[0].extensions.code, JSON.stringify(response.body)).toBe('BAD_REQUEST');
    }
    const literal = await app.graphql('{ videos(filter: { categorys: [3000000000] }) { totalCount } }', undefined, key);
    expect(literal.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    const bounded = await app.graphql('{ creators(filter: { avgLikeCountMin: 1e300 }) { totalCount } }', undefined, key);
    expect(bounded.body.errors[0].extensions.fields[0].field).toBe('filter.avgLikeCountMin');
  });

  it('a cursor whose integer does not fit bigint is a 400 naming the argument', async () => {
    const after = encodeCursor('c:followers', ['9999999999999999999', 'u001']);
    const response = await app.graphql(`{ creators(after: "${after}") { totalCount } }`, undefined, key);
    expect(response.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'after' }] });
  });
});

describe('variables that do not coerce', () => {
  it('name the variable and the path to the bad value in it, and charge nothing', async () => {
    const query = 'query($f: CreatorFilter) { creators(filter: $f, first: 5) { totalCount } }';
    const before = await quotaUsed();
    for (const [f, path, field, why] of [
      [{ followerCountMin: 1e20 }, 'f.followerCountMin', '$f.followerCountMin', 'SafeInt must be an integer up to 2^53 - 1'],
      [{ locations: ['US', 7] }, 'f.locations[1]', '$f.locations.1', 'String cannot represent a non string value: 7'],
      [{ verified: 'yes; at "f.gender"; no' }, 'f.verified', '$f.verified', 'Boolean cannot represent a non boolean value: "yes; at \\"f.gender\\"; no"'],
    ] as const) {
      const { body } = await app.graphql(query, { f }, key);
      expect(body.data ?? null).toBeNull();
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0].extensions.code).toBe('BAD_REQUEST');
      expect(body.errors[0].message).toContain('Variable "$f"');
      expect(body.errors[0].message).toContain(`"${path}"`);
      // Named as every other 400 names its field, with the reason alone beside it.
      expect(body.errors[0].extensions.fields).toEqual([{ field, message: why }]);
    }
    // The whole variable wrong, a printed value holding "; " and quotes, a required one missing.
    const whole = await app.graphql(query, { f: 'a "; b' }, key);
    expect(whole.body.errors[0].extensions.fields).toEqual([{ field: '$f', message: 'Expected type "CreatorFilter" to be an object.' }]);
    const required = await app.graphql('query($n: Int!) { creators(first: $n) { totalCount } }', {}, key);
    expect(required.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: '$n', message: 'of required type "Int!" was not provided.' }] });
    expect(await quotaUsed()).toBe(before);
  });
});

describe('literals that do not fit their argument', () => {
  it('name the argument and the path to the bad value in it, as variables do, and charge nothing', async () => {
    const before = await quotaUsed();
    for (const [query, field, why] of [
      ['{ creators(filter: { followerCountMin: 1e308 }) { totalCount } }', 'filter.followerCountMin', 'SafeInt must be an integer up to 2^53 - 1'],
      ['{ creators(filter: { followerCountMin: 1.5 }) { totalCount } }', 'filter.followerCountMin', 'SafeInt must be an integer up to 2^53 - 1'],
      ['{ creators(filter: { locations: ["US", 7] }) { totalCount } }', 'filter.locations.1', 'String cannot represent a non string value: 7'],
      ['{ creators(filter: { nope: 1 }) { totalCount } }', 'filter.nope', 'Field "nope" is not defined by type "CreatorFilter".'],
      ['{ creators(first: "x") { totalCount } }', 'first', 'Int cannot represent non-integer value: "x"'],
      ['{ creators(first: 1) { facets { followerCount(edges: [1, 1e308]) { count } } } }', 'edges.1', 'SafeInt must be an integer up to 2^53 - 1'],
    ] as const) {
      const { body } = await app.graphql(query, undefined, key);
      expect(body.data ?? null, query).toBeNull();
      expect(body.errors, query).toHaveLength(1);
      expect(body.errors[0].extensions, query).toEqual({ code: 'BAD_REQUEST', fields: [{ field, message: why }] });
      expect(body.errors[0].locations, query).toHaveLength(1);
    }
    expect(await quotaUsed()).toBe(before);
  });
});

describe('client mistakes are not server errors in the log', () => {
  it('logs variable coercion errors, malformed GET parameters and REST 400s at info at most, one line, no stack', async () => {
    logged.length = 0;
    const query = 'query($f: CreatorFilter) { creators(filter: $f) { totalCount } }';
    expect((await app.graphql(query, { f: { createAtStart: 5 } }, key)).body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect((await app.graphql(query, { f: { followerCountMin: 'many' } }, key)).body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect((await app.graphql('{ creators(first: "x") { totalCount } }', undefined, key)).body.errors[0].extensions.code).toBe('BAD_REQUEST');
    // An explicit null where a facet's edges are non-null, through a nullable variable with a default.
    const nullEdges = 'query($e: [SafeInt!] = [1]) { creators(first: 1) { facets { followerCount(edges: $e) { count } } } }';
    expect((await app.graphql(nullEdges, { e: null }, key)).body.errors[0].extensions.code).toBe('BAD_REQUEST');
    const badGet = await app.server.fetch('http://test/graphql?query=%7Bviewer%7Bplan%7D%7D&variables=%7Bbad', {
      headers: { accept: 'application/json', authorization: key },
    });
    expect((await badGet.json()).errors[0].extensions.code).toBe('BAD_REQUEST');
    expect((await app.rest(CREATORS, { body: '{not json', key })).status).toBe(400);
    expect((await app.rest(CREATORS, { body: { gender: 7 }, key })).status).toBe(400);
    expect(logged.filter((line) => line.level !== 'info')).toEqual([]);
    expect(JSON.stringify(logged)).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
  });
});

describe('a 400 message names its field once', () => {
  it('says what is wrong after the field, never the field again (REST and GraphQL)', async () => {
    const rest = await app.rest(CREATORS, { key, body: { page: 101, page_size: 100 } });
    expectBadRequest(rest, 'page');
    expect(rest.body.errors).toEqual([{ field: 'page', message: 'reaches past result 10000 (page × page_size); use the GraphQL connection cursors for deeper traversal' }]);
    const ids = Array.from({ length: 101 }, (_, i) => `"x${i}"`).join(', ');
    for (const [document, field, said] of [
      ['{ creators(first: 50, offset: 9990) { totalCount } }', 'offset', 'reaches past result 10000 (offset + first); use after/before cursors for deeper traversal'],
      ['{ creators(offset: 5, after: "x") { totalCount } }', 'offset', 'cannot be combined with after, before or last'],
      ['{ videos(first: 1, last: 1) { totalCount } }', 'last', 'cannot be combined with first; use one of them'],
      [`{ nodes(ids: [${ids}]) { id } }`, 'ids', 'must hold at most 100 ids'],
    ]) {
      const { body } = await app.graphql(document!, undefined, key);
      expect(body.errors, document).toEqual([expect.objectContaining({ message: `Bad Request: ${field} ${said}`, extensions: { code: 'BAD_REQUEST', fields: [{ field, message: said }] } })]);
    }
  });
});

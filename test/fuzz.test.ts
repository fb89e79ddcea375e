import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creatorSearchBody } from '../src/inputs/creators.js';
import { liveStreamSearchBody } from '../src/inputs/live-streams.js';
import { videoSearchBody } from '../src/inputs/videos.js';
import { toSnake } from '../src/rest/codecs.js';
import { createInstagramClient } from '../src/upstreams/instagram/client.js';
import { INSTAGRAM_SIM_USERS, startInstagramSimulator, type InstagramSimulator } from '../src/upstreams/instagram/simulator.js';
import { seededRandom, type SeededRandom } from '../src/upstreams/seeded-random.js';
import { createTestApp, type TestApp } from './support/app.js';
import { loadCatalog } from './support/catalog.js';

// A seeded fuzz of the front doors: REST bodies, query strings and GraphQL variables built from
// the real field names mixed with hostile values. Whatever comes in, the answer is a 4xx (or a
// 200), never a 5xx other than an upstream's own failure, and never a stack, SQL or a path.

const SEED = 'fuzz-2026-11';
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2_500);
const LEAK = /\n\s+at |node_modules|\/work\/|\.ts:\d+|\bSELECT\b|\bINSERT\b|syntax error at|invalid input syntax|violates|relation "|pg_|ECONNREFUSED|TypeError|ReferenceError|undefined is not/i;

const routes = [
  { path: '/api/v1/search/twitter/user', fields: Object.keys(creatorSearchBody.shape).map(toSnake) },
  { path: '/api/v1/search/youtube/video', fields: Object.keys(videoSearchBody.shape).map(toSnake) },
  { path: '/api/v1/twitch/search/live', fields: Object.keys(liveStreamSearchBody.shape).map(toSnake) },
];
const hostileNames = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '', ' ', 'followerCountMin', 'page_size ', 'PAGE', '\u0000', '💥'];
const hostileStrings = [
  '', ' ', 'a', 'US', 'us', 'en', 'male', 'follower_count', 'relevance', 'LIVE', '2026-01-31', '2026-02-30', '2026-01-31T08:00:00Z',
  '2026-01-31T25:00:00Z', '0000-01-01', '9999-12-31', '-1', '1e309', 'NaN', "'; DROP TABLE creators; --", '%_\\', '%%', '\\',
  '\u0000', 'a\u0000b', '\ud800', '𝒳𝒴', 'ǅ', 'İ', 'x'.repeat(300), 'x'.repeat(70_000).slice(0, 5_000), '{}', '[]', 'null', 'eyJ4Ijox', 'WyJjOmZvbGxvd2VycyIsMSwidSJd',
];
const hostileNumbers = [0, 1, -1, 0.5, 1.5, 2 ** 31, 2 ** 31 - 1, 2 ** 53, 2 ** 53 - 1, 2 ** 63, 1e18, 1e300, -1e300, 5e-324, 100, 101, 10_000, 10_001];

function value(rng: SeededRandom, depth = 0): unknown {
  switch (rng.int(0, depth > 1 ? 4 : 7)) {
    case 0:
      return rng.pick(hostileNumbers);
    case 1:
      return rng.pick(hostileStrings);
    case 2:
      return rng.chance(0.5);
    case 3:
      return null;
    case 4:
      return rng.int(-5, 200);
    case 5:
    case 6:
      return Array.from({ length: rng.int(0, 4) }, () => value(rng, depth + 1));
    default:
      return object(rng, [...hostileNames, 'us', 'page'], depth + 1);
  }
}

function object(rng: SeededRandom, names: readonly string[], depth = 0): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (let i = rng.int(0, 4); i > 0; i--) {
    // defineProperty: a key named __proto__ must be a key, as JSON.parse would make it.
    Object.defineProperty(result, rng.pick(names), { value: value(rng, depth), enumerable: true, configurable: true, writable: true });
  }
  return result;
}

const asText = (item: unknown): string => (typeof item === 'object' && item !== null ? JSON.stringify(item) : String(item));

/** Text that JSON.stringify never produces: numbers past double range, broken or non-object JSON. */
function rawBody(rng: SeededRandom, fields: readonly string[]): string {
  const field = rng.pick(fields);
  return rng.pick([
    `{"${field}": 1e999}`,
    `{"${field}": -1e999}`,
    `{"${field}": 123456789012345678901234567890}`,
    `{"${field}": 1`,
    `{"${field}": "\\ud800"}`,
    `{"${field}": 1, "${field}": "twice"}`,
    '[]',
    '"text"',
    '42',
    'null',
    '',
    '\u0000',
    '{"__proto__": {"polluted": true}}',
  ]);
}

const graphqlDocuments = [
  'query($filter: CreatorFilter, $sortBy: CreatorSort, $first: Int, $after: String, $offset: Int) { creators(filter: $filter, sortBy: $sortBy, first: $first, after: $after, offset: $offset) { totalCount pageInfo { endCursor } nodes { userId followerCount } } }',
  'query($filter: VideoFilter, $sortBy: VideoSort, $last: Int, $before: String) { videos(filter: $filter, sortBy: $sortBy, last: $last, before: $before) { totalCount nodes { videoId channel { title } } } }',
  'query($filter: LiveStreamFilter, $first: Int, $after: String) { liveStreams(filter: $filter, first: $first, after: $after) { edges { cursor node { id } } } }',
  'query($userId: String!, $offset: String) { realtimeMedias(userId: $userId, offset: $offset) { more offset medias { mediaId } } }',
];
const variableNames = ['filter', 'sortBy', 'first', 'last', 'after', 'before', 'offset', 'userId', ...hostileNames];
const filterNames = [
  'query', 'categoryIds', 'categorys', 'locations', 'followerCountMin', 'followerCountMax', 'avgEngagementRateMin', 'gender', 'createAtStart',
  'createAtEnd', 'hasEmail', 'verified', 'videoType', 'userLogin', 'type', 'language', 'languages', 'retweetRatioMax', ...hostileNames,
];

interface Case {
  describe: string;
  request: () => Response | Promise<Response>;
  /** Realtime fetches may fail upstream: that 500 is the contract's, not ours. */
  upstream: boolean;
}

let app: TestApp;
let sim: InstagramSimulator;
let key: string;

beforeAll(async () => {
  sim = await startInstagramSimulator();
  const instagram = createInstagramClient({ baseUrl: sim.url, timeoutMs: 300, breaker: { minimumFailingKeys: Number.MAX_SAFE_INTEGER } });
  app = await createTestApp({}, { instagram });
  await loadCatalog(app.store.db);
  key = await app.newKey({ plan: 'pro', ratePerSecond: 1_000_000 });
});
afterAll(async () => {
  await app?.close();
  await sim?.close();
});

function cases(rng: SeededRandom): Case[] {
  const post = (path: string, body: string, contentType = 'application/json'): (() => Response | Promise<Response>) => () =>
    app.server.fetch(`http://test${path}`, { method: 'POST', headers: { authorization: key, 'content-type': contentType }, body });
  return Array.from({ length: REQUESTS }, (_, index): Case => {
    const kind = rng.int(0, 9);
    if (kind <= 3) {
      const route = rng.pick(routes);
      const body = rng.chance(0.85) ? JSON.stringify(object(rng, [...route.fields, ...route.fields, ...hostileNames])) : rawBody(rng, route.fields);
      const contentType = rng.chance(0.95) ? 'application/json' : rng.pick(['text/plain', 'application/json; charset=latin1', '']);
      return { describe: `#${index} POST ${route.path} ${body.slice(0, 200)}`, request: post(route.path, body, contentType), upstream: false };
    }
    if (kind <= 5) {
      const params = new URLSearchParams();
      if (rng.chance(0.8)) {
        params.append('user_id', asText(rng.chance(0.5) ? rng.pick(Object.values(INSTAGRAM_SIM_USERS).filter((u) => u !== INSTAGRAM_SIM_USERS.hangs)) : value(rng)));
      }
      for (let i = rng.int(0, 2); i > 0; i--) params.append(rng.pick(['offset', 'user_id', ...hostileNames]), asText(value(rng)));
      const path = `/api/v1/instagram/realtime/user/medias?${params}`;
      return { describe: `#${index} GET ${path.slice(0, 200)}`, request: () => app.server.fetch(`http://test${path}`, { headers: { authorization: key } }), upstream: true };
    }
    const document = rng.pick(graphqlDocuments);
    const variables = object(rng, variableNames);
    if (rng.chance(0.6)) variables.filter = object(rng, filterNames);
    const body = JSON.stringify({ query: rng.chance(0.95) ? document : document.slice(0, rng.int(0, document.length)), variables });
    return {
      describe: `#${index} POST /graphql ${body.slice(0, 300)}`,
      request: () => app.server.fetch('http://test/graphql', { method: 'POST', headers: { authorization: key, 'content-type': 'application/json', accept: 'application/json' }, body }),
      upstream: document.includes('realtimeMedias'),
    };
  });
}

describe('seeded fuzz of REST bodies, query strings and GraphQL variables', () => {
  it(`answers ${REQUESTS} hostile requests without a 5xx or a leak (seed ${SEED})`, { timeout: 120_000 }, async () => {
    const problems: string[] = [];
    const statuses = new Map<number, number>();
    for (const testCase of cases(seededRandom(SEED))) {
      const response = await testCase.request();
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        problems.push(`${testCase.describe}\n  → ${response.status}, not JSON: ${text.slice(0, 200)}`);
        continue;
      }
      const messages = JSON.stringify(body.message ?? '') + JSON.stringify(body.errors ?? '');
      if (LEAK.test(messages)) problems.push(`${testCase.describe}\n  → leaks: ${messages.slice(0, 300)}`);
      const internal = (body.errors ?? []).filter((e: any) => e.extensions?.code === 'INTERNAL');
      const upstreamFailure = testCase.upstream && /upstream unavailable/.test(messages) && !/Internal Server Error/.test(messages);
      if ((response.status >= 500 || internal.length > 0) && !upstreamFailure) {
        problems.push(`${testCase.describe}\n  → ${response.status}: ${text.slice(0, 300)}`);
      }
      if (response.status === 400 && !testCase.describe.includes('/graphql')) {
        if (!Array.isArray(body.errors) || body.errors.some((e: any) => typeof e.field !== 'string')) {
          problems.push(`${testCase.describe}\n  → a 400 that names no field: ${text.slice(0, 300)}`);
        }
      }
    }
    expect(problems.slice(0, 20).join('\n')).toBe('');
    // The fuzz must reach the work, not only the validation: some of each.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(REQUESTS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(REQUESTS / 5);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo, seedScale } from '../src/cli/seed.js';
import type { CreatorFacet, FacetRequest } from '../src/domain/facets.js';
import type { CreatorSearch } from '../src/inputs/creators.js';
import type { SearchThread } from '../src/search/runtime/thread.js';
import type { Search } from '../src/search/types.js';
import { createAccount, issueKey } from '../src/store/accounts.js';
import { createTestApp, type TestApp } from './support/app.js';

// One account's heavy searches must not hold up another's: the index thread serves its callers in
// turn (src/search/runtime/fair-queue.ts). Each search reaches the index with its account, from
// both doors; in the thread, a caller arriving behind another's burst is served next.

const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

/** Where each Search method takes its caller. */
const callerAt = { creators: 3, videos: 4, channelVideos: 4, liveStreams: 3 } as const;
type Method = keyof typeof callerAt;

/** The index, recording the caller each search names. */
function recording(index: Search, seen: { method: Method; caller: unknown }[]): Search {
  return new Proxy(index, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      if (!(property in callerAt)) return value.bind(target);
      const method = property as Method;
      return (...args: unknown[]) => {
        seen.push({ method, caller: args[callerAt[method]] });
        return value.apply(target, args);
      };
    },
  });
}

describe('every search reaches the index with the account asking', () => {
  let app: TestApp;
  let index: Search;
  const keys = new Map<string, string>();

  beforeAll(async () => {
    app = await createTestApp({ searchIndex: true, searchPollMs: 200, searchThread: onPostgres });
    await seedDemo(app.store.db, quiet);
    index = app.services.search!;
    await index.start();
    for (let i = 0; i < 2; i++) {
      const account = await createAccount(app.store.db, { plan: 'pro', ratePerSecond: 1000 });
      keys.set(account, (await issueKey(app.store.db, account)).key);
    }
  }, 120_000);
  afterAll(() => app?.close());

  it('from REST and GraphQL, nested connections included', async () => {
    for (const [account, key] of keys) {
      const seen: { method: Method; caller: unknown }[] = [];
      app.services.search = recording(index, seen);
      try {
        expect((await app.rest('/api/v1/search/twitter/user', { body: { follower_count_min: 10 }, key })).status).toBe(200);
        expect((await app.rest('/api/v1/search/youtube/video', { body: {}, key })).status).toBe(200);
        expect((await app.rest('/api/v1/twitch/search/live', { body: {}, key })).status).toBe(200);
        const { body } = await app.graphql(
          `{ creators(first: 2) { totalCount facets { country { value count } } }
             videos(first: 3) { totalCount nodes { channel { videos(first: 2) { totalCount } } } }
             liveStreams(first: 2) { totalCount } }`,
          undefined,
          key,
        );
        expect(body.errors).toBeUndefined();
        expect(body.data.videos.nodes[0].channel.videos.totalCount).toBeGreaterThan(0);
      } finally {
        app.services.search = index;
      }
      expect(seen.map((call) => call.method).sort()).toEqual(['channelVideos', 'creators', 'creators', 'liveStreams', 'liveStreams', 'videos', 'videos']);
      expect(seen.filter((call) => call.caller !== account)).toEqual([]);
    }
  });
});

describe.runIf(onPostgres)('in the index thread', () => {
  let app: TestApp;
  let thread: SearchThread;

  beforeAll(async () => {
    app = await createTestApp({ searchIndex: true, searchPollMs: 200, searchThread: true });
    // Enough creators that a search with every facet takes milliseconds: the thread is busy with
    // the first while the rest arrive.
    await seedScale(app.store, { creators: 60_000, channels: 0, videos: 0, live: 0 }, quiet);
    thread = app.services.search as SearchThread;
    await thread.start();
    expect(thread.constructor.name).toBe('SearchThread');
  }, 180_000);
  afterAll(() => app?.close());

  const everyFacet = (excludeOwn: boolean): FacetRequest<CreatorFacet>[] => [
    ...(['country', 'language', 'gender', 'category', 'verified', 'hasEmail'] as const).map((facet) => ({ facet, excludeOwn })),
    { facet: 'followerCount', excludeOwn, edges: Array.from({ length: 50 }, (_, i) => Math.round(100 * 1.3 ** i)) },
    { facet: 'avgEngagementRate', excludeOwn, edges: Array.from({ length: 50 }, (_, i) => i / 200) },
  ];
  const search = (min: number): CreatorSearch => ({
    platform: 'twitter',
    filter: { followerCountMin: min, avgEngagementRateMin: 0.001 },
    categoryIds: null,
    sort: 'FOLLOWER_COUNT',
  });

  it('serves a caller arriving behind another caller’s burst next, not after the burst', async () => {
    const answered: string[] = [];
    const asked = Array.from({ length: 12 }, (_, i) =>
      thread.creators(search(i), { first: 20 }, everyFacet(true), 'heavy-account').then((page) => {
        expect(page?.facets).toHaveLength(8);
        answered.push(`heavy${i}`);
      }),
    );
    asked.push(
      thread.creators(search(0), { first: 20 }, undefined, 'light-account').then((page) => {
        expect(page?.total).toBeGreaterThan(0);
        answered.push('light');
      }),
    );
    await Promise.all(asked);
    // In arrival order it would be thirteenth. The thread may have started on one or two of the
    // burst before the rest (and the light search) reached it.
    expect(answered.indexOf('light')).toBeLessThanOrEqual(3);
    expect(answered.filter((name) => name !== 'light')).toEqual(Array.from({ length: 12 }, (_, i) => `heavy${i}`));
  });

  it('still answers one caller in the order asked', async () => {
    const answered: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => thread.creators(search(i * 10), { first: 5 }, undefined, 'one-account').then(() => answered.push(i))));
    expect(answered).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  // Last: it stops the thread.
  it('answers the searches still in line when it stops with null (their callers run SQL), never an error', async () => {
    const asked = Array.from({ length: 12 }, (_, i) => thread.creators(search(i), { first: 20 }, everyFacet(true), `account${i % 3}`));
    await thread.stop();
    const answers = await Promise.all(asked);
    // The thread may have started on one or two before the stop reached it; the rest never ran.
    expect(answers.filter((answer) => answer !== null).length).toBeLessThanOrEqual(2);
    expect(answers.filter((answer) => answer !== null).every((answer) => answer!.facets?.length === 8)).toBe(true);
  });
});

describe.runIf(onPostgres)("the database's connections", () => {
  it("keep room for another account while one account's statements hold theirs", async () => {
    // Ten connections (the default pool); account A's creator searches block on a locked table,
    // more of them than the pool holds. B's video search must still get a connection.
    const app = await createTestApp({}, { pool: { statementTimeoutMs: 6_000 } });
    const pg = (await import('pg')).default;
    const locker = new pg.Client({ connectionString: app.store.databaseUrl });
    try {
      await seedDemo(app.store.db, quiet);
      const a = await app.newKey({ plan: 'pro', ratePerSecond: 1_000 });
      const b = await app.newKey({ plan: 'pro' });
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE creators IN ACCESS EXCLUSIVE MODE');
      const blocked = Array.from({ length: 14 }, () => app.graphql('{ creators(first: 3, sortBy: FOLLOWER_COUNT) { nodes { username } } }', undefined, a));
      await new Promise((resolve) => setTimeout(resolve, 500));

      const started = performance.now();
      const other = await app.graphql('{ videos(first: 1) { totalCount } }', undefined, b);
      expect(other.status).toBe(200);
      expect(other.body.data.videos.totalCount).toBeGreaterThan(0);
      expect(performance.now() - started).toBeLessThan(1_500);

      await locker.query('COMMIT');
      const answers = await Promise.all(blocked);
      // A's own statements past its share waited for its own connections (within the connect timeout).
      expect(answers.filter((answer) => answer.status === 200).length).toBeGreaterThanOrEqual(5);
    } finally {
      await locker.end().catch(() => {});
      await app.close();
    }
  }, 60_000);
});

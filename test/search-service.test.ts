import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runImport } from '../src/cli/import.js';
import { seedDemo } from '../src/cli/seed.js';
import { processCpuSeconds, threadCpuSeconds } from '../bench/load.js';
import type { PartitionedSearch } from '../src/search/runtime/partitioned.js';
import { SEARCH_THREAD_NAME, type SearchThread } from '../src/search/runtime/thread.js';
import type { Search } from '../src/search/types.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { createTestApp, type TestApp } from './support/app.js';
import { runCli } from './support/cli.js';

// The index behind the real pipeline: REST and GraphQL answers are the SQL path's answers, and a
// row written by an import, by another process or by the realtime write-through is found within
// 5 seconds, with no manual step. On PostgreSQL all of it runs twice: the index in the
// pipeline's thread, in a worker thread of its own (as `serve` runs it there), and split over
// three threads (SEARCH_PARTITIONS), whose answers are merged.

const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < ms) {
    if (await check()) return performance.now() - started;
    await sleep(50);
  }
  throw new Error(`not visible within ${ms} ms`);
}

const modes = process.env.TEST_DATABASE_URL
  ? [
      { thread: false, partitions: 1 },
      { thread: true, partitions: 1 },
      { thread: true, partitions: 3 },
    ]
  : [{ thread: false, partitions: 1 }];

describe.each(modes)('with the index in its own thread: $thread, in $partitions partition(s)', ({ thread, partitions }) => {
  let app: TestApp;
  let index: Search;
  /** A key whose rate never gets in the way: each comparison asks twice. */
  let key: string;

  beforeAll(async () => {
    app = await createTestApp({ searchIndex: true, searchPollMs: 200, searchThread: thread, searchPartitions: partitions });
    await seedDemo(app.store.db, quiet);
    index = app.services.search!;
    expect(index.constructor.name).toBe(partitions > 1 ? 'PartitionedSearch' : thread ? 'SearchThread' : 'LocalSearch');
    key = await app.newKey({ plan: 'pro', ratePerSecond: 100_000 });
    await index.refresh();
    expect(index.stats().creators).toBeGreaterThan(0);
  }, 120_000);
  afterAll(() => app?.close());

  /** The same request answered from the index and from SQL (the index switched off for a moment). */
  async function both(path: string, body: unknown) {
    const fromIndex = await app.rest(path, { body, key });
    app.services.search = null;
    try {
      const fromSql = await app.rest(path, { body, key });
      return { fromIndex, fromSql };
    } finally {
      app.services.search = index;
    }
  }

  describe('searches through the index', () => {
    const rng = seededRandom('search-service');
    const creatorBodies = () => [
      {},
      { page: rng.int(1, 20), page_size: rng.int(1, 100) },
      { locations: ['US', 'GB'], follower_count_min: rng.int(0, 100_000), sort_by: 'engagement_rate' },
      { query: rng.pick(['tech', 'a', 'emma', 'ar', 'food']), page_size: 50 },
      { query: 'music', sort_by: 'follower_count', page: 2 },
      { gender: rng.int(0, 2), verified: 1, avg_engagement_rate_min: rng.int(0, 50) / 10 },
      { create_at_start: '2026-06-01', create_at_end: '2026-10-31', has_email: 1, languages: ['en', 'es'] },
      { category_ids: [rng.pick([101, 102, 110, 1001, 1005])], page_size: 100 },
      // Bounds on the order's own key: the page lies inside the order, not at its top.
      { follower_count_max: rng.int(1_000, 1_000_000), sort_by: 'follower_count', page: rng.int(1, 3) },
      { avg_engagement_rate_min: rng.int(0, 20) / 10, avg_engagement_rate_max: rng.int(20, 80) / 10, sort_by: 'engagement_rate', page: rng.int(1, 3) },
    ];
    const videoBodies = () => [
      {},
      { query: rng.pick(['review', 'tech', 'shorts', 'a']) },
      { categorys: [rng.int(1, 40)], create_at_start: '2026-03-01', page: rng.int(1, 3) },
      { locations: ['US', 'KR'], follower_count_min: rng.int(0, 1_000_000), video_type: rng.int(1, 2) },
      { gender: 1, avg_play_count_min: 1000, page_size: 100 },
      { create_at_end: `2026-0${rng.int(1, 9)}-15`, page: rng.int(1, 3) },
    ];

    it('answers creator and video searches exactly as SQL does, through REST', async () => {
      for (let round = 0; round < 5; round++) {
        for (const body of creatorBodies()) {
          const { fromIndex, fromSql } = await both('/api/v1/search/twitter/user', body);
          expect(fromIndex.status, `${JSON.stringify(body)} ${JSON.stringify(fromIndex.body)}`).toBe(200);
          expect(fromIndex.body, JSON.stringify(body)).toEqual(fromSql.body);
        }
        for (const body of videoBodies()) {
          const { fromIndex, fromSql } = await both('/api/v1/search/youtube/video', body);
          expect(fromIndex.status, `${JSON.stringify(body)} ${JSON.stringify(fromIndex.body)}`).toBe(200);
          expect(fromIndex.body, JSON.stringify(body)).toEqual(fromSql.body);
        }
      }
    });

    it('walks live streams and GraphQL cursors exactly as SQL does', async () => {
      let offset = '';
      for (let page = 0; page < 5; page++) {
        const body = offset ? { first: 25, after: offset } : { first: 25 };
        const { fromIndex, fromSql } = await both('/api/v1/twitch/search/live', body);
        expect(fromIndex.body.data.data.map((s: { id: string }) => s.id)).toEqual(fromSql.body.data.data.map((s: { id: string }) => s.id));
        expect(fromIndex.body.data.more).toBe(fromSql.body.data.more);
        offset = fromIndex.body.data.offset;
        if (!offset) break;
      }
      const liveQuery = 'query($filter: LiveStreamFilter) { liveStreams(filter: $filter, first: 50) { totalCount pageInfo { hasNextPage } nodes { id } } }';
      const sample = (await app.graphql('{ liveStreams(first: 100) { nodes { userId userLogin gameId type language } } }', {}, key)).body.data
        .liveStreams.nodes as { userId: string; userLogin: string; gameId: string; type: string; language: string }[];
      expect(sample.length).toBeGreaterThan(10);
      // Every subset of the five conditions, from streams of the snapshot and from values no stream has.
      const fields = ['userId', 'userLogin', 'gameId', 'type', 'language'] as const;
      let nonEmpty = 0;
      for (const [round, stream] of [sample[3], sample[40], sample[77]].entries()) {
        for (let subset = 0; subset < 1 << fields.length; subset++) {
          const filter: Record<string, string> = {};
          fields.forEach((field, i) => {
            if (!(subset & (1 << i))) return;
            if (field === 'type') filter.type = 'LIVE';
            else if (field === 'userLogin') filter.userLogin = stream.userLogin.toUpperCase();
            else filter[field] = round === 2 && field === 'gameId' ? 'no-such-game' : stream[field];
          });
          const fromIndex = await app.graphql(liveQuery, { filter }, key);
          app.services.search = null;
          const fromSql = await app.graphql(liveQuery, { filter }, key).finally(() => (app.services.search = index));
          expect(fromIndex.body.errors, JSON.stringify(filter)).toBeUndefined();
          expect(fromIndex.body.data, JSON.stringify(filter)).toEqual(fromSql.body.data);
          if (fromIndex.body.data.liveStreams.totalCount > 0) nonEmpty++;
        }
      }
      expect(nonEmpty).toBeGreaterThan(40);
      const query = 'query($after: String) { creators(first: 40, after: $after, sortBy: FOLLOWER_COUNT) { totalCount pageInfo { hasNextPage endCursor } nodes { userId } } }';
      let after: string | null = null;
      for (let page = 0; page < 10; page++) {
        const fromIndex = await app.graphql(query, { after }, key);
        app.services.search = null;
        const fromSql = await app.graphql(query, { after }, key).finally(() => (app.services.search = index));
        expect(fromIndex.body.data.creators.nodes).toEqual(fromSql.body.data.creators.nodes);
        expect(fromIndex.body.data.creators.totalCount).toBe(fromSql.body.data.creators.totalCount);
        // The cursor made from the index's place of the row is the one SQL makes from its values.
        expect(fromIndex.body.data.creators.pageInfo).toEqual(fromSql.body.data.creators.pageInfo);
        after = fromIndex.body.data.creators.pageInfo.endCursor;
      }
    });

    it('walks a newest-first video page nobody asked the total of (in its thread too): the same page, no total counted', async () => {
      const filters = [{}, { videoType: 'SHORT' as const }, { locations: ['US', 'KR'] }, { createAtEnd: '2026-06-15', followerCountMin: 1_000 }];
      for (const filter of filters) {
        for (const page of [{ first: 20 }, { first: 10, offset: 15 }]) {
          const counted = await index.videos({ filter, sort: 'NEWEST' }, page);
          const walked = await index.videos({ filter, sort: 'NEWEST' }, page, undefined, false);
          expect(counted!.total, JSON.stringify(filter)).toBeGreaterThan(0);
          // A null total says the index walked the order testing rows: the worker was told none was asked.
          expect(walked!.total, JSON.stringify(filter)).toBeNull();
          expect(walked!.ids, JSON.stringify(filter)).toEqual(counted!.ids);
          expect(walked!.sortKeys).toEqual(counted!.sortKeys);
          expect(walked!.hasNextPage).toBe(counted!.hasNextPage);
        }
      }
      // Facets need the filter's bitset: asked with them, the page is counted whatever needsTotal says.
      const withFacets = await index.videos({ filter: {}, sort: 'NEWEST' }, { first: 5 }, [{ facet: 'videoType', excludeOwn: false }], false);
      expect(withFacets!.total).toBeGreaterThan(0);
    });
  });

  describe('statements per search', () => {
    // What a search costs the database once it is answered from the index: no count, no filter
    // evaluation, no statement per row. Key, limits and quota are the pipeline's (cached and leased);
    // the change feed is read in the background. Everything else is the page's rows, by key.
    const background = /catalog_changes|pg_current_snapshot|pg_snapshot|quota_leases|"?accounts"?|api_keys|^(start|set) transaction|^(begin|commit|rollback)/i;
    async function statementsOf(path: string, body: unknown) {
      await app.rest(path, { body, key }); // the key and a quota lease in place: measure the second one
      index.rows.forgetAll(); // rows read cold, as a page no search has shown yet
      app.store.queries.length = 0;
      const answer = await app.rest(path, { body: { ...(body as object), page: 2 }, key });
      expect(answer.status).toBe(200);
      return app.store.queries.filter((statement) => !background.test(statement));
    }

    it('reads no creator row again for a page whose rows were read before and did not change', async () => {
      const body = { locations: ['US', 'GB'], page_size: 30 };
      const first = await app.rest('/api/v1/search/twitter/user', { body, key });
      app.store.queries.length = 0;
      const again = await app.rest('/api/v1/search/twitter/user', { body, key });
      expect(again.body).toEqual(first.body);
      expect(app.store.queries.filter((statement) => !background.test(statement))).toEqual([]);
    });

    it('reads no video or channel row again for a video page read twice before, unchanged', async () => {
      const body = { locations: ['US'], page_size: 30 };
      const first = await app.rest('/api/v1/search/youtube/video', { body, key });
      expect(first.body.data.items.length).toBeGreaterThan(0);
      // A row is kept on its second miss (src/search/row-cache.ts).
      await app.rest('/api/v1/search/youtube/video', { body, key });
      app.store.queries.length = 0;
      const again = await app.rest('/api/v1/search/youtube/video', { body, key });
      expect(again.body).toEqual(first.body);
      expect(app.store.queries.filter((statement) => !background.test(statement))).toEqual([]);
    });

    it('reads a creator page and a video page (with its channels) with one statement each, whatever the filter', async () => {
      for (const body of [{}, { query: 'a', page_size: 50 }, { locations: ['US', 'GB'], follower_count_min: 1000, verified: 1 }]) {
        const statements = await statementsOf('/api/v1/search/twitter/user', body);
        expect(statements, `${JSON.stringify(body)}: ${statements.join(' | ')}`).toHaveLength(1);
        expect(statements[0]).not.toMatch(/count\(/i);
      }
      for (const body of [{}, { query: 'review' }, { locations: ['US'], follower_count_min: 1000, page_size: 100 }]) {
        const statements = await statementsOf('/api/v1/search/youtube/video', body);
        // The videos by key, joined with their channels.
        expect(statements, `${JSON.stringify(body)}: ${statements.join(' | ')}`).toHaveLength(1);
        expect(statements[0]).toMatch(/join "channels"/i);
        expect(statements[0]).not.toMatch(/count\(/i);
      }
    });

    it('counts a totalCount asked in a second node of the same field on the index, and none that @include leaves out', async () => {
      // GraphQL merges fields asked twice under one response name: the total is asked, though not
      // by the first node. Counted by SQL on 2M videos it would take seconds.
      const merged = 'query($first: Int) { videos(first: $first) { nodes { videoId } } ...Total }  fragment Total on Query { videos(first: $first) { totalCount } }';
      const skipped = 'query($withTotal: Boolean!) { videos(first: 4) { nodes { videoId } totalCount @include(if: $withTotal) } }';
      const sqlTotal = await (async () => {
        app.services.search = null;
        try {
          return (await app.graphql('{ videos(first: 4) { totalCount } }', {}, key)).body.data.videos.totalCount as number;
        } finally {
          app.services.search = index;
        }
      })();
      for (const [query, variables, total] of [
        [merged, { first: 4 }, sqlTotal],
        [skipped, { withTotal: true }, sqlTotal],
        [skipped, { withTotal: false }, undefined],
      ] as const) {
        await app.graphql(query, variables, key); // rows and quota lease in place
        app.store.queries.length = 0;
        const answer = await app.graphql(query, variables, key);
        expect(answer.body.errors, JSON.stringify(answer.body.errors)).toBeUndefined();
        expect(answer.body.data.videos.nodes).toHaveLength(4);
        expect(answer.body.data.videos.totalCount, query).toBe(total);
        const statements = app.store.queries.filter((statement) => !background.test(statement));
        expect(statements.filter((statement) => /count\(/i.test(statement)), `${query} ${JSON.stringify(variables)}`).toEqual([]);
      }
    });

    it('keeps the channels read with a video page read twice: cached videos whose channels are cached read nothing', async () => {
      const body = { locations: ['US', 'GB'], page_size: 40 };
      const page = (pageNumber: number) => app.rest('/api/v1/search/youtube/video', { body: { ...body, page: pageNumber }, key });
      await page(1);
      index.rows.forgetAll();
      const cold = await page(3);
      expect(cold.body.data.items.length).toBeGreaterThan(0);
      await page(3); // kept on this second miss
      app.store.queries.length = 0;
      const warm = await page(3);
      expect(warm.body).toEqual(cold.body);
      expect(app.store.queries.filter((statement) => !background.test(statement))).toEqual([]);
      // Channels forgotten, videos still cached: the channels alone, in one batch.
      index.rows.forget({ creators: [], videos: [], channels: 'all', liveStreams: false });
      app.store.queries.length = 0;
      expect((await page(3)).body).toEqual(cold.body);
      const statements = app.store.queries.filter((statement) => !background.test(statement));
      expect(statements, statements.join(' | ')).toHaveLength(1);
      expect(statements[0]).toMatch(/from "channels"/i);
    });
  });

  describe('text in any script', () => {
    it("finds a name by its own letters, 'İ' and a final 'Σ' too, from the index as from SQL", async () => {
      const channel = await app.store.db.selectFrom('channels').select('channel_id').limit(1).executeTakeFirstOrThrow();
      const creator = { user_id: '77770011', username: 'ilker_tr', full_name: 'İlker Yılmaz ΟΔΥΣΣΕΑΣ', follower_count: 77 };
      const video = { video_id: 'caseVideo01', channel_id: channel.channel_id, title: 'İSTANBUL ΣΟΦΟΣ', create_at: '2026-03-01T00:00:00Z' };
      await runImport(app.store, 'creators', Readable.from([`${JSON.stringify(creator)}\n`]), quiet);
      await runImport(app.store, 'videos', Readable.from([`${JSON.stringify(video)}\n`]), quiet);
      await index.refresh();
      for (const query of ['İlker', 'İLKER', 'ilker', 'İlker Yılmaz ΟΔΥΣΣΕΑΣ', 'Yılmaz ΟΔΥΣΣΕΑΣ', 'οδυσσεασ', 'ΟΔΥΣΣΕΑΣ']) {
        const { fromIndex, fromSql } = await both('/api/v1/search/twitter/user', { query });
        expect(fromIndex.body, query).toEqual(fromSql.body);
        expect(fromIndex.body.data.items.map((c: { user_id: string }) => c.user_id), query).toContain(creator.user_id);
      }
      for (const query of ['İstanbul', 'İSTANBUL ΣΟΦΟΣ', 'σοφοσ', 'ΣΟΦΟΣ']) {
        const { fromIndex, fromSql } = await both('/api/v1/search/youtube/video', { query });
        expect(fromIndex.body, query).toEqual(fromSql.body);
        expect(fromIndex.body.data.items.map((v: { video_id: string }) => v.video_id), query).toContain(video.video_id);
      }
    });
  });

  describe('freshness', () => {
    const search = (body: unknown) => app.rest('/api/v1/search/twitter/user', { body, key });

    it('finds a creator loaded by import within 5 seconds, on its own', async () => {
      const line = JSON.stringify({ user_id: '77770001', username: 'freshlyimported', full_name: 'Fresh Import', country: 'IS', follower_count: 123 });
      expect(await search({ query: 'freshlyimported' })).toMatchObject({ body: { data: { total: 0 } } });
      await runImport(app.store, 'creators', Readable.from([`${line}\n`]), quiet);
      const tookMs = await within(5_000, async () => (await search({ query: 'freshlyimported' })).body.data.total === 1);
      expect(tookMs).toBeLessThan(5_000);
      const found = await search({ locations: ['IS'] });
      expect(found.body.data.items.map((c: { user_id: string }) => c.user_id)).toEqual(['77770001']);
    });

    it.skipIf(!process.env.TEST_DATABASE_URL)('finds a row written by another process within 5 seconds, and forgets a deleted one', async () => {
      const env = { DATABASE_URL: app.store.databaseUrl! };
      const file = `${JSON.stringify({ user_id: '77770002', username: 'otherprocess', follower_count: 5 })}\n`;
      const imported = await runCli(['import', 'creators', '-'], env, file);
      expect(imported.code).toBe(0);
      await within(5_000, async () => (await search({ query: 'otherprocess' })).body.data.total === 1);
      await app.store.db.deleteFrom('creators').where('user_id', '=', '77770002').execute();
      await within(5_000, async () => (await search({ query: 'otherprocess' })).body.data.total === 0);
    });

    it("serves a cached row's new values once the change feed reports the change", async () => {
      const body = { locations: ['US'], page_size: 5 };
      const [top] = (await search(body)).body.data.items as { user_id: string; full_name: string; follower_count: number }[];
      await search(body);
      await search(body); // now served from the row cache (a row is kept on its second miss)
      await app.store.db
        .updateTable('creators')
        .set({ full_name: 'Renamed While Cached' })
        .where('platform', '=', 'twitter')
        .where('user_id', '=', top.user_id)
        .execute();
      await within(5_000, async () => (await search(body)).body.data.items[0].full_name === 'Renamed While Cached');
      expect(top.full_name).not.toBe('Renamed While Cached');
    });

    it("serves a cached channel's new values on the videos once the change feed reports the change", async () => {
      const videos = (body: unknown) => app.rest('/api/v1/search/youtube/video', { body, key });
      const body = { page_size: 5 };
      const [top] = (await videos(body)).body.data.items as { channel_id: string; channel_title: string }[];
      await videos(body);
      await videos(body); // its channel now served from the row cache (kept on its second miss)
      await app.store.db.updateTable('channels').set({ title: 'Channel Renamed While Cached' }).where('channel_id', '=', top.channel_id).execute();
      await within(5_000, async () => (await videos(body)).body.data.items[0].channel_title === 'Channel Renamed While Cached');
      expect(top.channel_title).not.toBe('Channel Renamed While Cached');
    });

    it('reloads the live-stream snapshot after the collector replaces it', async () => {
      const before = await app.rest('/api/v1/twitch/search/live', { body: { first: 1 }, key });
      const { replaceSnapshot } = await import('../src/store/live-streams.js');
      await replaceSnapshot(app.store.db, [
        {
          id: 'fresh-stream',
          userId: '1',
          userLogin: 'freshstreamer',
          userName: 'Fresh',
          gameId: '9',
          gameName: 'Game',
          type: 'live',
          title: 'new',
          viewerCount: 5,
          startedAt: new Date(),
          language: 'en',
          thumbnailUrl: '',
          tags: [],
          isMature: false,
        },
      ]);
      await within(5_000, async () => {
        const now = await app.rest('/api/v1/twitch/search/live', { body: { first: 10 }, key });
        return now.body.data.data.length === 1 && now.body.data.data[0].id === 'fresh-stream';
      });
      expect(before.body.data.data[0].id).not.toBe('fresh-stream');
    });
  });

  // Only where there is a thread and Linux's /proc, where a thread can name itself.
  if (thread && existsSync('/proc/thread-self')) describe('its thread', () => {
    it("is named, so the bench tells its CPU from the event loop's and V8's", () => {
      const names = readdirSync('/proc/self/task').map((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim());
      expect(names.filter((name) => name === SEARCH_THREAD_NAME)).toHaveLength(partitions);
      const spent = threadCpuSeconds(process.pid);
      // It loaded the index (seconds of work at any scale); this test's own thread ran the rest.
      expect(spent.search).toBeGreaterThan(0);
      expect(spent.main).toBeGreaterThan(0);
      // Every live thread counted once: the process's figure holds the ended ones too.
      expect(spent.main + spent.search + spent.runtime).toBeLessThanOrEqual(processCpuSeconds(process.pid) + 0.05);
    });
  });

  // Only where there is a thread (registered, not skipped, elsewhere: nothing to skip).
  if (thread) describe('when the search thread dies', () => {
    it('answers every search by SQL meanwhile, in flight ones too, and serves from a new thread within seconds', async () => {
      // Split over partitions, one of them dies: the others cannot answer alone.
      const thread = (partitions > 1 ? (index as PartitionedSearch).parts[1] : index) as SearchThread;
      const body = { locations: ['US', 'GB'], sort_by: 'engagement_rate', page_size: 30 };
      const { fromIndex, fromSql } = await both('/api/v1/search/twitter/user', body);
      expect(fromIndex.body).toEqual(fromSql.body);
      // Searches sent just before the thread ends lose their answer from it: they run SQL.
      const inFlight = Array.from({ length: 8 }, () => app.rest('/api/v1/search/twitter/user', { body, key }));
      await thread.crash();
      expect(thread.ready).toBe(false);
      expect(index.ready).toBe(false);
      for (const answer of await Promise.all(inFlight)) expect(answer.body).toEqual(fromSql.body);
      app.store.queries.length = 0;
      expect((await app.rest('/api/v1/search/twitter/user', { body, key })).body).toEqual(fromSql.body);
      expect(app.store.queries.some((statement) => /count\(/i.test(statement))).toBe(true);
      const tookMs = await within(10_000, async () => index.ready);
      expect(tookMs).toBeLessThan(10_000);
      app.store.queries.length = 0;
      expect((await app.rest('/api/v1/search/twitter/user', { body, key })).body).toEqual(fromSql.body);
      expect(app.store.queries.some((statement) => /count\(/i.test(statement))).toBe(false);
    });
  });
});

import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../src/cli/seed.js';
import { loadConfig } from '../src/config.js';
import type { PageArgs } from '../src/domain/cursors.js';
import type { ChannelIndexRow, CreatorIndexRow, VideoIndexRow } from '../src/domain/index-rows.js';
import type { CreatorFacet, FacetRequest, LiveStreamFacet, VideoFacet } from '../src/domain/facets.js';
import { creatorOrders, liveStreamOrder, videoOrders, videoSorts } from '../src/domain/orders.js';
import { cursorsOf } from '../src/search/tables/paging.js';
import type { CreatorSearch } from '../src/inputs/creators.js';
import { defaultVideoSort, videosArgs, type VideoSearch } from '../src/inputs/videos.js';
import type { Logger } from '../src/observability/log.js';
import { SearchRows } from '../src/search/row-cache.js';
import { partition } from '../src/search/runtime/partition.js';
import { PartitionedSearch } from '../src/search/runtime/partitioned.js';
import { LocalSearch } from '../src/search/runtime/search-index.js';
import { createSearch } from '../src/search/runtime/thread.js';
import type { Search } from '../src/search/types.js';
import { channelIndexRows } from '../src/store/channels.js';
import { creatorIndexRows } from '../src/store/creators.js';
import { videoIndexRows } from '../src/store/videos.js';
import { seededRandom, type SeededRandom } from '../src/upstreams/seeded-random.js';
import { pick, randomCreatorSearch, randomPage, randomVideoFilter } from './support/random-searches.js';
import { createTestStore, type TestStore } from './support/store.js';

// The index split over partitions (SEARCH_PARTITIONS) answers exactly what the whole index
// answers: the same ids and cursors in the same order, totals, page flags and facets, for random
// searches and every kind of window (first, offset, last, after, before), on the demo data set,
// before and after writes that the partitions take from the change feed each for its own rows.

const RUNS = process.env.TEST_DATABASE_URL ? 200 : 100;
const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };
let store: TestStore;
let rows: CreatorIndexRow[];
let videoRows: VideoIndexRow[];
let channelRows: ChannelIndexRow[];
let categoryIds: number[];
let whole: LocalSearch;
let parts: LocalSearch[];
let split: PartitionedSearch;

const creatorFacets: FacetRequest<CreatorFacet>[] = [
  { facet: 'country', excludeOwn: false },
  { facet: 'gender', excludeOwn: true },
  { facet: 'category', excludeOwn: true },
  { facet: 'followerCount', excludeOwn: false, edges: [0, 1_000, 100_000, 1_000_000] },
  { facet: 'avgEngagementRate', excludeOwn: true, edges: [0.5, 2, 5] },
];
const videoFacets: FacetRequest<VideoFacet>[] = [
  { facet: 'category', excludeOwn: true },
  { facet: 'videoType', excludeOwn: false },
  { facet: 'channelCountry', excludeOwn: false },
  { facet: 'month', excludeOwn: false },
];
const liveFacets: FacetRequest<LiveStreamFacet>[] = [
  { facet: 'game', excludeOwn: true },
  { facet: 'language', excludeOwn: false },
];

beforeAll(async () => {
  store = await createTestStore();
  await seedDemo(store.db, { write: () => true } as unknown as NodeJS.WritableStream);
  rows = await creatorIndexRows(store.db, null, 1_000_000);
  videoRows = await videoIndexRows(store.db, null, 1_000_000);
  channelRows = await channelIndexRows(store.db, null, 1_000_000);
  categoryIds = (await store.db.selectFrom('categories').select(['id', 'level']).execute()).filter((c) => c.level > 1).map((c) => c.id);
  whole = new LocalSearch({ db: store.db, log: quiet, pollMs: 3_600_000 });
  parts = [0, 1, 2].map((index) => new LocalSearch({ db: store.db, log: quiet, pollMs: 3_600_000, partition: partition(index, 3) }));
  split = new PartitionedSearch(parts, new SearchRows());
  await whole.start();
  await split.start();
}, 120_000);

afterAll(async () => {
  await whole?.stop();
  await split?.stop();
  await store?.close();
});

/** Windows of every kind: random first/offset/last ones, and from a cursor of the whole index's first page. */
function windows(rng: SeededRandom, cursors: readonly string[]): PageArgs[] {
  const found = [randomPage(rng), { first: rng.int(1, 30), offset: rng.int(0, 60) }, { last: rng.int(1, 20), offset: rng.int(0, 40) }];
  if (cursors.length === 0) return found;
  const cursor = pick(rng, cursors);
  return [
    ...found,
    { first: rng.int(1, 25), after: cursor },
    { last: rng.int(1, 25), before: cursor },
    { first: rng.int(1, 25), before: cursor },
    { before: cursor },
    { first: rng.int(1, 10), after: cursors[0], before: cursors.at(-1)!, offset: rng.int(0, 3) },
  ];
}

/** The same question to the whole index and to its partitions. */
async function expectSame<T>(ask: (search: Search) => Promise<T>, context: unknown): Promise<T> {
  const expected = await ask(whole);
  expect(await ask(split), JSON.stringify(context)).toEqual(expected);
  return expected;
}

async function compareRandomSearches(seed: string): Promise<{ creators: number; videos: number; nonEmpty: number }> {
  const rng = seededRandom(seed);
  let creators = 0;
  let videos = 0;
  let nonEmpty = 0;
  for (let run = 0; run < RUNS; run++) {
    const search = await randomCreatorSearch(rng, store.db, rows, categoryIds);
    if (search) {
      const first = await expectSame((index) => index.creators(search, { first: 30 }, creatorFacets), { search });
      if ((first?.total ?? 0) > 0) nonEmpty++;
      for (const page of windows(rng, first ? cursorsOf(creatorOrders[search.sort], first) : [])) await expectSame((index) => index.creators(search, page), { search, page });
      creators++;
    }
    const videoArgs = videosArgs.safeParse({ filter: randomVideoFilter(rng, videoRows, channelRows), sortBy: pick(rng, [undefined, ...videoSorts]) });
    if (videoArgs.success) {
      const videoFilter = videoArgs.data.filter ?? {};
      const search: VideoSearch = { filter: videoFilter, sort: videoArgs.data.sortBy ?? defaultVideoSort(videoFilter) };
      const first = await expectSame((index) => index.videos(search, { first: 30 }, videoFacets), { search });
      for (const page of windows(rng, first ? cursorsOf(videoOrders[search.sort], first) : [])) {
        await expectSame((index) => index.videos(search, page), { search, page });
        // Without a total: each partition walks its order testing rows.
        if (search.sort === 'NEWEST') await expectSame((index) => index.videos(search, page, undefined, false), { search, page, needsTotal: false });
      }
      const channels = Array.from({ length: 4 }, () => pick(rng, channelRows).channelId);
      const window = { first: rng.int(1, 8) };
      await expectSame((index) => index.channelVideos(search, channels, window, videoFacets.slice(0, 2)), { search, channels, window });
      videos++;
    }
  }
  for (const filter of [{}, { type: 'LIVE' as const }, { language: 'en' }]) {
    const first = await expectSame((index) => index.liveStreams(filter, { first: 25 }, liveFacets), { filter });
    for (const page of windows(rng, first ? cursorsOf(liveStreamOrder, first) : [])) await expectSame((index) => index.liveStreams(filter, page), { filter, page });
  }
  return { creators, videos, nonEmpty };
}

describe('an index split over partitions', () => {
  it('holds every row in exactly one partition (channels in all)', () => {
    const stats = parts.map((part) => part.stats());
    for (const stats_ of stats) expect(stats_.creators).toBeGreaterThan(0);
    expect(split.stats().creators).toBe(whole.stats().creators);
    expect(split.stats().videos).toBe(whole.stats().videos);
    expect(split.stats().liveStreams).toBe(whole.stats().liveStreams);
    for (const stats_ of stats) expect(stats_.channels).toBe(whole.stats().channels);
    expect(split.ready).toBe(true);
  });

  it('answers random searches, windows and facets exactly as the whole index does', async () => {
    const { creators, videos, nonEmpty } = await compareRandomSearches('partitions');
    expect(creators).toBeGreaterThan(RUNS / 2);
    expect(videos).toBeGreaterThan(RUNS / 2);
    expect(nonEmpty).toBeGreaterThan(RUNS / 4);
  }, 120_000);

  it('still does after rows are added, changed and removed, each partition reading the feed for its own', async () => {
    await sql`UPDATE creators SET follower_count = follower_count * 3 + 11, username = username || 'p'
              WHERE user_id IN (SELECT user_id FROM creators ORDER BY user_id LIMIT 60)`.execute(store.db);
    await sql`DELETE FROM creators WHERE user_id IN (SELECT user_id FROM creators ORDER BY user_id DESC LIMIT 9)`.execute(store.db);
    await sql`UPDATE channels SET country = 'JP' WHERE channel_id IN (SELECT channel_id FROM channels ORDER BY channel_id LIMIT 5)`.execute(store.db);
    await sql`UPDATE videos SET play_count = play_count + 1000, title = title || 'p'
              WHERE video_id IN (SELECT video_id FROM videos ORDER BY video_id LIMIT 40)`.execute(store.db);
    await sql`DELETE FROM videos WHERE video_id IN (SELECT video_id FROM videos ORDER BY video_id DESC LIMIT 7)`.execute(store.db);
    await whole.refresh();
    await split.refresh();
    expect(split.stats().creators).toBe(whole.stats().creators);
    expect(split.stats().videos).toBe(whole.stats().videos);
    await compareRandomSearches('partitions after writes');
  }, 120_000);
});

describe('partition snapshots', () => {
  it('are written one file per partition, and a partition never loads another one’s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cds-partition-snapshots-'));
    try {
      const snapshots = { dir, everyMs: 0 };
      const writers = [0, 1].map((index) => new LocalSearch({ db: store.db, log: quiet, pollMs: 3_600_000, snapshots, partition: partition(index, 2) }));
      await new PartitionedSearch(writers, new SearchRows()).start();
      const files = readdirSync(dir).sort();
      expect(files).toEqual([expect.stringMatching(/\.part1of2\.snapshot$/), expect.stringMatching(/\.part2of2\.snapshot$/)]);
      // Partition 1's file where partition 2's belongs: refused (its own record says which it holds), rebuilt.
      copyFileSync(join(dir, files[0]), join(dir, files[1]));
      const lines: string[] = [];
      const log: Logger = { info: () => {}, warn: (message, details) => void lines.push(`${message} ${JSON.stringify(details)}`), error: () => {} };
      const second = new LocalSearch({ db: store.db, log, pollMs: 3_600_000, snapshots, partition: partition(1, 2) });
      await second.start();
      expect(lines.join('\n')).toMatch(/not used.*holds partition 1 of 2, not 2 of 2/);
      expect(second.stats().loadedFrom).toBe('database');
      const first = new LocalSearch({ db: store.db, log: quiet, pollMs: 3_600_000, snapshots, partition: partition(0, 2) });
      await first.start();
      expect(first.stats().loadedFrom).toBe('snapshot');
      const loaded = new PartitionedSearch([first, second], new SearchRows());
      const search: CreatorSearch = { platform: 'twitter', filter: {}, categoryIds: null, sort: 'FOLLOWER_COUNT' };
      expect(await loaded.creators(search, { first: 50 }, creatorFacets)).toEqual(await whole.creators(search, { first: 50 }, creatorFacets));
      for (const index of [...writers, first, second]) await index.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('SEARCH_PARTITIONS', () => {
  it('is 1 unless set, and refuses what is not 1 to 16', () => {
    expect(loadConfig({}).searchPartitions).toBe(1);
    expect(loadConfig({ SEARCH_PARTITIONS: '2' }).searchPartitions).toBe(2);
    for (const bad of ['0', '17', '1.5', 'two', '-1']) expect(() => loadConfig({ SEARCH_PARTITIONS: bad }), bad).toThrow(/SEARCH_PARTITIONS/);
  });

  it('is ignored, with a warning, where the index runs in the server’s own thread', () => {
    const warnings: string[] = [];
    const log: Logger = { info: () => {}, warn: (message) => void warnings.push(message), error: () => {} };
    const search = createSearch({ store, log, pollMs: 3_600_000, thread: false, partitions: 2 });
    expect(search).toBeInstanceOf(LocalSearch);
    expect(warnings).toEqual([expect.stringMatching(/SEARCH_PARTITIONS is ignored/)]);
    expect(createSearch({ store, log, pollMs: 3_600_000, thread: false, partitions: 1 })).toBeInstanceOf(LocalSearch);
    expect(warnings).toHaveLength(1);
  });
});

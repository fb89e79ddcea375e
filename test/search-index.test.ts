import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { seedDemo } from '../src/cli/seed.js';
import type { PageArgs } from '../src/domain/cursors.js';
import type { ChannelIndexRow, CreatorIndexRow, VideoIndexRow } from '../src/domain/index-rows.js';
import { creatorOrders, videoOrders } from '../src/domain/orders.js';
import { type CreatorFilter, creatorsArgs, type CreatorSearch, defaultCreatorSort } from '../src/inputs/creators.js';
import { channelVideoFilter, channelVideoFilterShape, defaultVideoSort, type VideoFilter, videosArgs, type VideoSearch } from '../src/inputs/videos.js';
import { RangeIndex } from '../src/search/primitives/range-index.js';
import { SortOrder } from '../src/search/primitives/sort-order.js';
import { TextIndex } from '../src/search/primitives/text-index.js';
import { loadVideoIndex } from '../src/search/runtime/search-index.js';
import { CreatorIndex } from '../src/search/tables/creators.js';
import { cursorsOf, type SearchProbe } from '../src/search/tables/paging.js';
import { VideoIndex } from '../src/search/tables/videos.js';
import type { IndexPage } from '../src/search/types.js';
import { expandCategoryIds } from '../src/store/categories.js';
import { channelIndexRows, channelIndexRowsById } from '../src/store/channels.js';
import { countCreators, creatorIndexRows, creatorIndexRowsByKey, searchCreators } from '../src/store/creators.js';
import { countVideos, searchVideos, videoIndexRows, videoIndexRowsById } from '../src/store/videos.js';
import { seededRandom, type SeededRandom } from '../src/upstreams/seeded-random.js';
import { boundSortKey, pick, randomCreatorFilter, randomPage, randomVideoFilter } from './support/random-searches.js';
import { createTestStore, type TestStore } from './support/store.js';

// The in-memory index answers exactly what the SQL path answers: the same total, the same ids in
// the same order, the same page flags, for random filter sets (a property test with a fixed seed)
// on the demo data set, before and after random writes.

// PGlite runs SQL several times slower than PostgreSQL: half as many runs keeps the embedded CI
// pass short, while each strategy still sees every kind of filter.
// Half as many on PGlite, whose plain SQL (the answers they are held to) is several times slower.
const SEARCHES = Number(process.env.SEARCH_PROPERTY_RUNS ?? (process.env.TEST_DATABASE_URL ? 150 : 75));
/** Rounds of writes so far: each inserts rows of its own. */
let writeRounds = 0;
let store: TestStore;
let rows: CreatorIndexRow[];
let categoryIds: number[];

beforeAll(async () => {
  store = await createTestStore();
  await seedDemo(store.db, { write: () => true } as unknown as NodeJS.WritableStream);
  rows = await loadAll();
  const categories = await store.db.selectFrom('categories').select(['id', 'level']).execute();
  categoryIds = categories.filter((c) => c.level > 1).map((c) => c.id);
}, 120_000);
afterAll(() => store?.close());

async function loadAll(): Promise<CreatorIndexRow[]> {
  const all: CreatorIndexRow[] = [];
  for (let batch = await creatorIndexRows(store.db, null, 1000); batch.length > 0; ) {
    all.push(...batch);
    const last = batch[batch.length - 1];
    batch = await creatorIndexRows(store.db, { platform: last.platform, userId: last.userId }, 1000);
  }
  return all;
}

function buildIndex(from: CreatorIndexRow[]): CreatorIndex {
  const index = new CreatorIndex();
  for (const row of from) index.upsert(row);
  index.finishLoad();
  return index;
}

async function searchOf(filter: CreatorFilter, sort: CreatorSearch['sort'] | null): Promise<CreatorSearch> {
  const check = filter.categoryIds?.length ? await expandCategoryIds(store.db, filter.categoryIds) : null;
  return { platform: 'twitter', filter, categoryIds: check ? check.expanded : null, sort: sort ?? defaultCreatorSort(filter) };
}

/** Both answers to one page request, SQL's as the reference. */
async function compare(index: CreatorIndex, search: CreatorSearch, page: PageArgs, label: string, probe?: SearchProbe) {
  const [sqlPage, sqlTotal] = await Promise.all([searchCreators(store.db, search, page), countCreators(store.db, search)]);
  const fast = index.search(search, page, { ...tuning, ...probe });
  const context = `${label}: ${JSON.stringify({ filter: search.filter, sort: search.sort, page })}`;
  expect(fast.total, context).toBe(sqlTotal);
  expect(fast.ids, context).toEqual(sqlPage.rows.map((row) => row.userId));
  expect([fast.hasNextPage, fast.hasPreviousPage], context).toEqual([sqlPage.hasNextPage, sqlPage.hasPreviousPage]);
  return fast;
}

async function randomSearches(index: CreatorIndex, rng: SeededRandom, runs: number, label: string): Promise<number> {
  let nonEmpty = 0;
  for (let run = 0; run < runs; run++) {
    const sort = rng.chance(0.5) ? null : pick(rng, ['FOLLOWER_COUNT', 'ENGAGEMENT_RATE', 'RELEVANCE'] as const);
    let filter = randomCreatorFilter(rng, rows, categoryIds);
    if (rng.chance(0.3)) filter = boundSortKey(rng, rows, filter, sort ?? defaultCreatorSort(filter));
    const parsed = creatorsArgs.safeParse({ filter });
    if (!parsed.success) continue;
    const search = await searchOf(parsed.data.filter!, sort);
    const page = randomPage(rng);
    const first = await compare(index, search, page, `${label} #${run}`);
    const cursors = cursorsOf(creatorOrders[search.sort], first);
    if (first.total! > 0) nonEmpty++;
    // Follow the cursors one page on, forward and back, as a client walks.
    if (cursors.length > 0 && page.offset == null) {
      await compare(index, search, { first: page.first ?? page.last ?? 20, after: cursors.at(-1) }, `${label} #${run} after`);
      await compare(index, search, { last: page.first ?? page.last ?? 20, before: cursors[0] }, `${label} #${run} before`);
      // An offset from a cursor counts across relevance tiers, as SQL's OFFSET does.
      const skip = 1 + (run % 7);
      await compare(index, search, { first: 10, after: cursors[0], offset: skip }, `${label} #${run} after + offset`);
      await compare(index, search, { last: 10, before: cursors.at(-1), offset: skip }, `${label} #${run} before + offset`);
    }
  }
  return nonEmpty;
}

const strategies = [
  ['choosing the cheaper way for each page', 256, undefined],
  ['walking the sort orders for every page', 0, 'walk'],
  ['keeping the best matches in a heap for every page', 0, 'heap'],
] as const;

/** How the searches of the running test walk their pages (passed into each search). */
let tuning: SearchProbe = {};

describe.each(strategies)('the in-memory creator index, %s', (_mode, smallRows, strategy) => {
  beforeAll(() => {
    tuning = { smallSegmentRows: smallRows, strategy };
  });
  afterAll(() => {
    tuning = {};
  });

  it(`answers ${SEARCHES} random searches exactly as SQL does (${process.env.TEST_DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`, { timeout: 300_000 }, async () => {
    const index = buildIndex(rows);
    const nonEmpty = await randomSearches(index, seededRandom('creator-index'), SEARCHES, 'loaded');
    // The filters must select something often enough for the comparison to mean anything.
    expect(nonEmpty).toBeGreaterThan(SEARCHES / 4);
  });

  it('stays exact after random inserts, updates and deletes applied through the change path', { timeout: 300_000 }, async () => {
    const index = buildIndex(rows);
    const rng = seededRandom('creator-writes');
    for (let round = writeRounds; round < writeRounds + 3; round++) {
      const victims = Array.from({ length: 40 }, () => pick(rng, rows));
      await sql`UPDATE creators SET follower_count = (follower_count * 3 + 7) % 100000, username = username || 'x', country = 'NZ', category_ids = '{}'
        WHERE platform = 'twitter' AND user_id = ANY(${victims.slice(0, 20).map((r) => r.userId)})`.execute(store.db);
      await sql`DELETE FROM creators WHERE platform = 'twitter' AND user_id = ANY(${victims.slice(20, 30).map((r) => r.userId)})`.execute(store.db);
      await sql`INSERT INTO creators (platform, user_id, username, full_name, country, follower_count, avg_engagement_rate, avg_video_engagement_rate,
          avg_comment_count, avg_like_count, avg_retweet_count, avg_view_count, retweet_ratio, reply_ratio, post_count, video_count, evaluation_min, evaluation_max)
        SELECT 'twitter', 'new' || ${round} || '_' || g, 'newcomer' || g, 'New Comer', 'NZ', g * 1000, g, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
        FROM generate_series(1, 10) g`.execute(store.db);
      const touched = [...victims.map((r) => ({ platform: r.platform, userId: r.userId })), ...Array.from({ length: 10 }, (_, g) => ({ platform: 'twitter', userId: `new${round}_${g + 1}` }))];
      const current = await creatorIndexRowsByKey(store.db, touched);
      const present = new Set(current.map((row) => row.userId));
      for (const row of current) index.upsert(row);
      for (const key of touched) if (!present.has(key.userId)) index.remove(key);
      rows = await loadAll();
      await randomSearches(index, rng, 60, `after writes ${round}`);
      const nz = await searchOf({ locations: ['NZ'] } as CreatorFilter, 'FOLLOWER_COUNT');
      await compare(index, nz, { first: 50 }, `NZ after writes ${round}`);
    }
    writeRounds += 3;
  });
});

/** Records the sort key of every row a search reads from its order. */
/** TextIndex.rowsMatching watched until the test ends: whether, and how, a search made its query's bits. */
function watchRowsMatching() {
  const spy = vi.spyOn(TextIndex.prototype, 'rowsMatching');
  onTestFinished(() => spy.mockRestore());
  return spy;
}

function watch(): { probe: SearchProbe; keys: number[] } {
  const keys: number[] = [];
  return { probe: { visit: (key) => keys.push(key) }, keys };
}

/** The value at `share` of the sorted values: a bound with rows on both sides of it. */
const quantile = (values: number[], share: number) => [...values].sort((a, b) => a - b)[Math.floor(share * (values.length - 1))];

/**
 * What a page bounded on its sort key may read: at most one row outside the bounds (the one past
 * the far bound that ends the walk) and, where one order holds every match, no more rows than the
 * offset, the page and the row telling whether more exist, plus that one.
 */
/**
 * A walk reads the rows of its page (and one past it) from the bound on; a heap reads each match
 * once (`page` null: only the bounds are held).
 */
function expectReadWithin(keys: number[], found: IndexPage, bounds: { min?: number; max?: number }, page: PageArgs | null, context: string, rows = found.total!) {
  expect(keys.length, `rows read, the page's own at least: ${context}`).toBeGreaterThanOrEqual(found.ids.length);
  const outside = keys.filter((key) => (bounds.max !== undefined && key > bounds.max) || (bounds.min !== undefined && key < bounds.min));
  expect(outside.length, `rows read outside the bounds: ${context}`).toBeLessThanOrEqual(1);
  if (page) expect(keys.length, `rows read: ${context}`).toBeLessThanOrEqual((page.offset ?? 0) + (page.first ?? page.last ?? 20) + 2);
  else expect(keys.length, `rows read, each match (or each row within the bounds) at most once: ${context}`).toBeLessThanOrEqual(rows + 1);
}

describe('a creator search bounded on its sort key', () => {
  /** Sort, filter, and the bounds in the order's stored unit (cents for engagement). */
  function cases() {
    const followers = rows.map((row) => row.followerCount);
    const engagement = rows.map((row) => row.avgEngagementRate);
    const [f20, f50, f60] = [0.2, 0.5, 0.6].map((share) => quantile(followers, share));
    const [e30, e50, e70] = [0.3, 0.5, 0.7].map((share) => quantile(engagement, share));
    return [
      { sort: 'FOLLOWER_COUNT', filter: { followerCountMax: f50 }, bounds: { max: f50 } },
      { sort: 'FOLLOWER_COUNT', filter: { followerCountMin: f20, followerCountMax: f60 }, bounds: { min: f20, max: f60 } },
      { sort: 'ENGAGEMENT_RATE', filter: { avgEngagementRateMax: e50 / 100 }, bounds: { max: e50 } },
      { sort: 'ENGAGEMENT_RATE', filter: { avgEngagementRateMin: e30 / 100, avgEngagementRateMax: e70 / 100 }, bounds: { min: e30, max: e70 } },
      // Relevance: each tier walks the follower order within the same bounds.
      { sort: 'RELEVANCE', filter: { query: 'a', followerCountMax: f50 }, bounds: { max: f50 } },
    ] as const;
  }
  const pages: PageArgs[] = [{ first: 20 }, { first: 10, offset: 30 }, { last: 15 }];

  it.each(strategies)('reads its pages from the bound on, not from the top of the order, and answers as SQL does, %s', async (_mode, smallRows, strategy) => {
    tuning = { smallSegmentRows: smallRows, strategy };
    onTestFinished(() => {
      tuning = {};
    });
    const index = buildIndex(rows);
    for (const { sort, filter, bounds } of cases()) {
      const search = await searchOf(filter as CreatorFilter, sort);
      // One order holds every match only without relevance's tiers; a heap reads every match.
      const single = sort !== 'RELEVANCE' && strategy !== 'heap';
      for (const page of pages) {
        const { probe, keys } = watch();
        const context = JSON.stringify({ filter, sort, page });
        const found = await compare(index, search, page, 'bounded on the sort key', probe);
        expect(found.total, context).toBeGreaterThan(100);
        expectReadWithin(keys, found, bounds, single ? page : null, context);
        const cursors = cursorsOf(creatorOrders[search.sort], found);
        if (page.offset != null || cursors.length === 0) continue;
        for (const next of [{ first: 20, after: cursors.at(-1) }, { last: 20, before: cursors[0] }]) {
          const watched = watch();
          const following = await compare(index, search, next, 'bounded on the sort key, by cursor', watched.probe);
          expectReadWithin(watched.keys, following, bounds, single ? next : null, `${context} then ${JSON.stringify(next)}`);
        }
      }
    }
  });

  // With one platform in the index, a filter that only bounds the order's key is counted on the
  // order itself (binary searches less the changed slots), without a bitset. Otherwise, and with
  // other conditions beside the bound, their matches are counted within the bound one of three
  // ways (src/search/tables/own-key.ts: the order's run inside the bound, its runs outside it, the
  // range index's passes), or from their ranks along the order: each way, and the cheapest chosen,
  // must give the same totals.
  it.each([
    ['another platform in the index beside it', false],
    ['one platform in the index: totals counted on the order', true],
  ])('still reads only within the bound once rows changed since the order was sorted, %s', async (_label, onePlatform) => {
    const byBits = [
      vi.spyOn(SortOrder.prototype, 'countKeyRangeIn'),
      vi.spyOn(SortOrder.prototype, 'countKeyOutsideIn'),
      vi.spyOn(RangeIndex.prototype, 'countWithin'),
    ] as const;
    onTestFinished(() => byBits.forEach((spy) => spy.mockRestore()));
    const held = rows.filter((row) => row.platform === 'twitter');
    // The other platform's rows share the orders, so a total on the order would count them too.
    const others = onePlatform ? [] : held.slice(0, 300).map((row) => ({ ...row, platform: 'tiktok' }));
    const index = buildIndex([...held, ...others]);
    const rng = seededRandom('bounded-sort-key-writes');
    // Changed rows leave the sorted snapshot for the list of changed slots, walked beside it.
    const current = new Map(held.map((row) => [row.userId, row]));
    for (let i = 0; i < 300; i++) {
      const row = pick(rng, held);
      const changed = { ...row, followerCount: pick(rng, held).followerCount + rng.int(-1, 1), avgEngagementRate: pick(rng, held).avgEngagementRate };
      index.upsert(changed);
      current.set(row.userId, changed);
    }
    for (let i = 0; i < 30; i++) {
      const row = pick(rng, held);
      index.remove(row);
      current.delete(row.userId);
    }
    for (let i = 0; i < 40; i++) {
      const added = { ...pick(rng, held), userId: `added${i}`, followerCount: pick(rng, held).followerCount };
      index.upsert(added);
      current.set(added.userId, added);
    }
    const twitter = [...current.values()].filter((row) => row.platform === 'twitter');
    // A bound few rows pass: a segment that small is sorted on the spot, which must not take every row.
    const f1 = quantile(held.map((row) => row.followerCount), 0.01);
    const few = { sort: 'FOLLOWER_COUNT' as const, filter: { followerCountMax: f1 }, bounds: { max: f1 } as { min?: number; max: number } };
    // The commonest country, and a rarer one, beside the bound: the other conditions' bits.
    const perCountry = new Map<string, number>();
    for (const row of twitter) perCountry.set(row.country, (perCountry.get(row.country) ?? 0) + 1);
    const byCountry = [...perCountry.keys()].sort((a, b) => perCountry.get(b)! - perCountry.get(a)!);
    const withCountry = cases()
      .filter(({ sort }) => sort !== 'RELEVANCE')
      .flatMap((bounded, i) => [byCountry[0], byCountry[3 + i]].map((country) => ({ ...bounded, filter: { ...bounded.filter, locations: [country] } })));
    for (const { sort, filter, bounds } of [...cases(), few, ...withCountry]) {
      if (sort === 'RELEVANCE') continue;
      const country = 'locations' in filter ? filter.locations[0] : null;
      const keyOf = (row: CreatorIndexRow) => (sort === 'ENGAGEMENT_RATE' ? row.avgEngagementRate : row.followerCount);
      // The order SQL gives: key descending, then the id descending bytewise.
      const expected = twitter
        .filter((row) => keyOf(row) <= bounds.max && !('min' in bounds && keyOf(row) < (bounds.min as number)) && (country === null || row.country === country))
        .sort((a, b) => keyOf(b) - keyOf(a) || Buffer.compare(Buffer.from(b.userId), Buffer.from(a.userId)))
        .map((row) => row.userId);
      const search = await searchOf(filter as CreatorFilter, sort);
      const othersWithin = others.filter((row) => keyOf(row) <= bounds.max && !('min' in bounds && keyOf(row) < (bounds.min as number)));
      for (const page of pages) {
        for (const boundCount of [undefined, 'inside', 'outside', 'pass', 'ranks'] as const) {
          byBits.forEach((spy) => spy.mockClear());
          const { probe, keys } = watch();
          const context = JSON.stringify({ filter, sort, page, boundCount });
          const found = index.search(search, page, { ...tuning, ...probe, boundCount });
          expect(found.total, context).toBe(expected.length);
          const offset = page.offset ?? 0;
          expect(found.ids, context).toEqual(page.last ? expected.slice(-page.last) : expected.slice(offset, offset + page.first!));
          // Another platform's rows in the order are read and passed over; beside a country, rows
          // of other countries within the bound too, or the country's rows, by a heap, wherever they are.
          if (country === null) expectReadWithin(keys, found, bounds, onePlatform ? page : null, context, expected.length + othersWithin.length);
          // The bound alone on one platform: two binary searches, no bit tested. Otherwise the way asked.
          const [inside, outside, pass] = byBits.map((spy) => spy.mock.calls.length);
          if (onePlatform && country === null) expect([inside, outside, pass], context).toEqual([0, 0, 0]);
          else if (boundCount !== undefined) {
            // A pass may read an edge bucket from the order's run (countKeyRangeIn) itself; ranks are read by it too.
            expect({ inside: inside > 0, outside: outside > 0, pass: pass > 0, ranks: inside > 0 }[boundCount], context).toBe(true);
            expect([boundCount === 'outside' ? 0 : outside, boundCount === 'pass' ? 0 : pass], context).toEqual([0, 0]);
          }
        }
      }
    }
  });
  // A country beside random maxima: once the counts of its rows in one table version have cost as
  // much as ranking them along the order (one pass over it), they are ranked, and every later bound
  // is counted from those ranks, not a run of rows or a pass; any change starts over. Each total as
  // SQL gives it.
  it('ranks the other conditions along the order once their counts in a version cost as much as ranking, and counts from the ranks after', async () => {
    const rank = vi.spyOn(SortOrder.prototype, 'rank');
    onTestFinished(() => rank.mockRestore());
    const many = Array.from({ length: 60 }, (_, copy) => rows.map((row) => ({ ...row, userId: `${row.userId}-${copy}` }))).flat();
    const index = buildIndex(many);
    const perCountry = new Map<string, number>();
    for (const row of many) perCountry.set(row.country, (perCountry.get(row.country) ?? 0) + 1);
    const country = [...perCountry.keys()].sort((a, b) => perCountry.get(b)! - perCountry.get(a)!)[0];
    const followers = many.map((row) => row.followerCount).sort((a, b) => a - b);
    const expectedTotal = (max: number, of: CreatorIndexRow[]) => of.filter((row) => row.country === country && row.followerCount <= max).length;
    const searchUnder = (quantileOf: number) => {
      const max = followers[Math.floor(quantileOf * (followers.length - 1))];
      return { max, search: searchOf({ followerCountMax: max, locations: [country] }, 'FOLLOWER_COUNT') };
    };
    // Each count a pass over the words (under a row a word), a ranking every row: tens of counts first.
    const rankedAt: number[] = [];
    for (let step = 0; step < 150; step++) {
      const { max, search } = searchUnder(0.3 + step / 400);
      const found = index.search(await search, { first: 20 });
      expect(found.total, `bound ${step}`).toBe(expectedTotal(max, many));
      if (rank.mock.calls.length > rankedAt.length) rankedAt.push(step);
    }
    expect(rankedAt).toHaveLength(1);
    expect(rankedAt[0]).toBeGreaterThan(10);
    // A change is a new version: the ranks are made again, never read stale (asked for here: the
    // counts would pay for a ranking only tens of bounds later).
    const changed = { ...many[0], followerCount: followers[Math.floor(followers.length / 2)] - 1, country };
    index.upsert(changed);
    many[0] = changed;
    for (const [step, q] of [0.55, 0.65, 0.35].entries()) {
      const { max, search } = searchUnder(q);
      const found = index.search(await search, { first: 20 }, { boundCount: 'ranks' });
      expect(found.total, `after the change, bound ${step}`).toBe(expectedTotal(max, many));
    }
    expect(rank).toHaveBeenCalledTimes(2);
  });

  // A pass costs under a row of the order a word (the kernel compares a word's slices; a row is a
  // bit tested at a random place), so a bound holding a fifth of the rows beside a country is
  // counted by the pass: taken as ten rows a word, it read the fifth's rows one by one, 2-10x
  // slower at 10M creators (docs/performance.md). A maximum alone on a column without NULL is one
  // pass: every match is at or above no minimum.
  it('counts a bound holding a fifth of the rows by a pass of the range index, not by the rows of its run', async () => {
    // The pass (countWithin) may read its edge bucket from the order's run itself (countKeyRangeIn).
    const ways = [vi.spyOn(SortOrder.prototype, 'countKeyOutsideIn'), vi.spyOn(RangeIndex.prototype, 'countWithin'), vi.spyOn(RangeIndex.prototype, 'countAtLeast')] as const;
    onTestFinished(() => ways.forEach((spy) => spy.mockRestore()));
    const held = rows.filter((row) => row.platform === 'twitter');
    // Another platform's rows share the order: the count is not two binary searches.
    const index = buildIndex([...held, ...held.slice(0, 300).map((row) => ({ ...row, userId: `${row.userId}-t`, platform: 'tiktok' }))]);
    const perCountry = new Map<string, number>();
    for (const row of held) perCountry.set(row.country, (perCountry.get(row.country) ?? 0) + 1);
    const country = [...perCountry.keys()].sort((a, b) => perCountry.get(b)! - perCountry.get(a)!)[0];
    const followers = held.map((row) => row.followerCount).sort((a, b) => a - b);
    for (const bounds of [{ min: followers[Math.floor(followers.length * 0.8)] }, { max: followers[Math.floor(followers.length * 0.2)] }]) {
      ways.forEach((spy) => spy.mockClear());
      const filter = { locations: [country], ...(bounds.min !== undefined ? { followerCountMin: bounds.min } : { followerCountMax: bounds.max }) };
      const found = index.search(await searchOf(filter, 'FOLLOWER_COUNT'), { first: 20 });
      const within = (row: CreatorIndexRow) => (bounds.min !== undefined ? row.followerCount >= bounds.min : row.followerCount <= bounds.max!);
      expect(found.total, JSON.stringify(filter)).toBe(held.filter((row) => row.country === country && within(row)).length);
      expect(ways.map((spy) => spy.mock.calls.length), JSON.stringify(filter)).toEqual([0, 1, 1]);
    }
  });
});

describe('facets without their own condition', () => {
  const valueFacets = ['country', 'language', 'gender', 'category', 'verified', 'hasEmail'] as const;

  it("count on the filter's own match when the filter sets nothing of their field", async () => {
    const index = buildIndex(rows);
    const search = await searchOf({ followerCountMin: 1_000, avgEngagementRateMin: 1 }, null);
    const plain = index.facets(search, valueFacets.map((facet) => ({ facet, excludeOwn: false })));
    expect(index.cachedMatches).toBe(1);
    // Each leaves out a field the filter never set: the same rows, so the same match, not six more.
    expect(index.facets(search, valueFacets.map((facet) => ({ facet, excludeOwn: true })))).toEqual(plain);
    expect(index.cachedMatches).toBe(1);
    // A facet whose own field the filter does bound counts on a match of its own.
    index.facets(search, [{ facet: 'followerCount', excludeOwn: true, edges: [1_000] }]);
    expect(index.cachedMatches).toBe(2);
  });

  it('share the match on videos too', async () => {
    const index = await loadVideoIndex(store.db);
    const search: VideoSearch = { filter: { videoType: 'VIDEO' }, sort: 'NEWEST' };
    const plain = index.facets(search, [{ facet: 'channelCountry', excludeOwn: false }, { facet: 'month', excludeOwn: false }]);
    expect(index.cachedMatches).toBe(1);
    expect(index.facets(search, [{ facet: 'channelCountry', excludeOwn: true }, { facet: 'month', excludeOwn: true }])).toEqual(plain);
    expect(index.cachedMatches).toBe(1);
  });
});

describe('the in-memory video index', () => {
  let index: VideoIndex;
  /** Pages found without their total by testing rows (compareVideos): the path must be taken. */
  let walkedWithoutTotal = 0;
  let videoRows: VideoIndexRow[];
  let channelRows: ChannelIndexRow[];

  beforeAll(async () => {
    // Built as a server builds it: slots in date order, so date windows narrow the words searched.
    index = await loadVideoIndex(store.db);
    channelRows = await channelIndexRows(store.db, null, 100_000);
    videoRows = await videoIndexRows(store.db, null, 100_000);
  });

  async function compareVideos(search: VideoSearch, page: PageArgs, label: string, probe?: SearchProbe, on: VideoIndex = index) {
    const [sqlPage, sqlTotal] = await Promise.all([searchVideos(store.db, search, page), countVideos(store.db, search)]);
    const fast = on.search(search, page, { ...tuning, ...probe });
    const context = `${label}: ${JSON.stringify({ filter: search.filter, sort: search.sort, page })}`;
    expect(fast.total, context).toBe(sqlTotal);
    expect(fast.ids, context).toEqual(sqlPage.rows.map((row) => row.videoId));
    expect([fast.hasNextPage, fast.hasPreviousPage], context).toEqual([sqlPage.hasNextPage, sqlPage.hasPreviousPage]);
    // A value condition beside dates is counted by codes (VideoIndex#countWithinDates): row by row
    // and from the column's ranks alike.
    for (const boundCount of ['inside', 'ranks'] as const) {
      expect(on.search(search, page, { ...tuning, boundCount }).total, `${boundCount}: ${context}`).toBe(sqlTotal);
    }
    // Nobody asks for the total: the same page, walked testing rows where the filter allows it
    // (then without a total), with a budget small enough that some pages fall back to the bitset.
    const untotaled = on.search(search, page, { ...tuning, rowTestBudget: 2_000 }, false);
    expect(untotaled.total === null || untotaled.total === sqlTotal, context).toBe(true);
    const { total: _total, ...shape } = untotaled;
    const { total: _counted, ...expected } = fast;
    expect(shape, `without its total: ${context}`).toEqual(expected);
    if (untotaled.total === null) walkedWithoutTotal++;
    return fast;
  }

  /** One page, then (without an offset) one page on from its last cursor and one back from its first. */
  async function compareVideoPages(search: VideoSearch, page: PageArgs, label: string) {
    const first = await compareVideos(search, page, label);
    const cursors = cursorsOf(videoOrders[search.sort], first);
    if (cursors.length > 0 && page.offset == null) {
      await compareVideos(search, { first: 20, after: cursors.at(-1) }, `${label} after`);
      await compareVideos(search, { last: 20, before: cursors[0] }, `${label} before`);
      await compareVideos(search, { first: 10, after: cursors[0], offset: 3 }, `${label} after + offset`);
      await compareVideos(search, { last: 10, before: cursors.at(-1), offset: 3 }, `${label} before + offset`);
    }
    return first;
  }

  /** An end date (and sometimes a start) on the newest-first order's own key: one of `ends`' days. */
  function boundDates(rng: SeededRandom, filter: VideoFilter, ends = videoRows.map((video) => video.createAt)): VideoFilter {
    const day = (t: number) => new Date(t).toISOString().slice(0, 10);
    const end = pick(rng, ends);
    return { ...filter, createAtEnd: day(end), createAtStart: rng.chance(0.4) ? day(end - rng.int(0, 60) * 86_400_000) : undefined };
  }

  it.each(strategies)(`answers random video searches exactly as SQL does, %s`, { timeout: 300_000 }, async (mode, smallRows, strategy) => {
    tuning = { smallSegmentRows: smallRows, strategy };
    const rng = seededRandom(`video-index-${mode}`);
    let nonEmpty = 0;
    try {
      for (let run = 0; run < SEARCHES; run++) {
        const drawn = randomVideoFilter(rng, videoRows, channelRows);
        const parsed = videosArgs.safeParse({ filter: rng.chance(0.3) ? boundDates(rng, drawn) : drawn });
        if (!parsed.success) continue;
        const filter = parsed.data.filter!;
        const sort = rng.chance(0.5) ? defaultVideoSort(filter) : pick(rng, ['NEWEST', 'RELEVANCE'] as const);
        const first = await compareVideoPages({ filter, sort }, randomPage(rng), `video #${run}`);
        if (first.total! > 0) nonEmpty++;
        // One channel's videos (Channel.videos): the same filter without its channel conditions.
        const own = channelVideoFilter.safeParse(Object.fromEntries(Object.entries(filter).filter(([field]) => field in channelVideoFilterShape)));
        if (own.success) {
          const channelId = rng.chance(0.9) ? pick(rng, videoRows).channelId : 'no-such-channel';
          const inChannel = await compareVideos({ filter: own.data, sort, channelId }, { first: rng.int(1, 10) }, `channel video #${run}`);
          const cursors = cursorsOf(videoOrders[sort], inChannel);
          if (cursors.length > 0) {
            await compareVideos({ filter: own.data, sort, channelId }, { first: 3, after: cursors.at(-1) }, `channel video #${run} after`);
            await compareVideos({ filter: own.data, sort, channelId }, { last: 3, before: cursors[0] }, `channel video #${run} before`);
          }
        }
      }
    } finally {
      tuning = {};
    }
    expect(nonEmpty).toBeGreaterThan(SEARCHES / 4);
    expect(walkedWithoutTotal).toBeGreaterThan(SEARCHES / 10);
  });

  it('walks a newest-first page nobody asked the total of by testing rows, and counts when the match is too rare', async () => {
    const counts = new Map<number, number>();
    for (const video of videoRows) counts.set(video.categoryId, (counts.get(video.categoryId) ?? 0) + 1);
    const common = [...counts].sort((a, b) => b[1] - a[1])[0][0];
    const search: VideoSearch = { filter: { categorys: [common], videoType: 'VIDEO' }, sort: 'NEWEST' };
    const { probe, keys } = watch();
    const walked = index.search(search, { first: 20 }, probe, false);
    expect(walked.total).toBeNull();
    const sqlPage = await searchVideos(store.db, search, { first: 20 });
    expect(walked.ids).toEqual(sqlPage.rows.map((row) => row.videoId));
    // The rows read are the walk's, a few per match, not every row of the table.
    expect(keys.length).toBeLessThan(videoRows.length / 2);
    // A match rarer than the budget allows: the filter's bitset after all, and the total with it.
    const rare = index.search({ filter: { categorys: [-1] }, sort: 'NEWEST' }, { first: 20 }, { rowTestBudget: 100 }, false);
    expect(rare).toMatchObject({ ids: [], total: 0 });
  });

  it('reads a newest-first page from its end date on, not from the newest video', async () => {
    const day = (t: number) => new Date(t).toISOString().slice(0, 10);
    const times = videoRows.map((video) => video.createAt);
    const [t20, t50, t60] = [0.2, 0.5, 0.6].map((share) => quantile(times, share));
    const perCategory = new Map<number, number>();
    for (const video of videoRows) perCategory.set(video.categoryId, (perCategory.get(video.categoryId) ?? 0) + 1);
    const common = [...perCategory.keys()].sort((a, b) => perCategory.get(b)! - perCategory.get(a)!)[0];
    const filters: VideoFilter[] = [{ createAtEnd: day(t50) }, { createAtStart: day(t20), createAtEnd: day(t60) }];
    for (const filter of filters) {
      // The end day is inclusive: through its last millisecond.
      const bounds = { min: filter.createAtStart ? Date.parse(filter.createAtStart) : undefined, max: Date.parse(filter.createAtEnd!) + 86_400_000 - 1 };
      for (const page of [{ first: 20 }, { first: 10, offset: 30 }, { last: 15 }] as PageArgs[]) {
        const { probe, keys } = watch();
        const context = JSON.stringify({ filter, page });
        const found = await compareVideos({ filter, sort: 'NEWEST' }, page, 'bounded on the date', probe);
        expect(found.total, context).toBeGreaterThan(100);
        expectReadWithin(keys, found, bounds, page, context);
        // A category beside the dates: the filter's bitset, its page still read within the dates.
        const watched = watch();
        const inCategory = await compareVideos({ filter: { ...filter, categorys: [common] }, sort: 'NEWEST' }, page, 'bounded on the date, one category', watched.probe);
        expect(inCategory.total, context).toBeGreaterThan(20);
        const outside = watched.keys.filter((key) => key > bounds.max || (bounds.min !== undefined && key < bounds.min));
        expect(outside.length, `rows read outside the dates: ${context}`).toBeLessThanOrEqual(1);
      }
    }
  });

  // One or two categories beside random end dates (the end date workload): the total is the
  // category codes within the dates, read along the order until the counts in a table version have
  // read as many rows as ranking does (the whole order: here on the second count, half the rows
  // and more each), which ranks every category at once; every later count, of any categories, is
  // lookups; a change starts over. Totals and pages as the rows say.
  it('counts categories beside an end date from their codes, ranked once the counts in a version read as much as ranking', async () => {
    const rankCodes = vi.spyOn(SortOrder.prototype, 'rankCodes');
    onTestFinished(() => rankCodes.mockRestore());
    const copies = Math.ceil(60_000 / videoRows.length);
    const many = Array.from({ length: copies }, (_, copy) => videoRows.map((row) => ({ ...row, videoId: `${row.videoId}-${copy}` }))).flat();
    const index = new VideoIndex();
    for (const row of channelRows) index.upsertChannel(row);
    for (const row of many) index.upsert(row);
    index.finishLoad();
    const perCategory = new Map<number, number>();
    for (const row of many) perCategory.set(row.categoryId, (perCategory.get(row.categoryId) ?? 0) + 1);
    const [common, second] = [...perCategory.keys()].sort((a, b) => perCategory.get(b)! - perCategory.get(a)!);
    const times = many.map((row) => row.createAt).sort((a, b) => a - b);
    const day = (t: number) => new Date(t).toISOString().slice(0, 10);
    const check = (categorys: number[], share: number, label: string) => {
      const end = day(times[Math.floor(share * (times.length - 1))]);
      const last = Date.parse(end) + 86_400_000 - 1;
      // SQL's order: newest first, then the id descending bytewise.
      const expected = many
        .filter((row) => categorys.includes(row.categoryId) && row.createAt <= last)
        .sort((a, b) => b.createAt - a.createAt || Buffer.compare(Buffer.from(b.videoId), Buffer.from(a.videoId)))
        .map((row) => row.videoId);
      const found = index.search({ filter: { categorys, createAtEnd: end }, sort: 'NEWEST' }, { first: 20 });
      expect(found.total, label).toBe(expected.length);
      expect(found.ids, label).toEqual(expected.slice(0, 20));
      return rankCodes.mock.calls.length;
    };
    const counted = [0.5, 0.6, 0.7, 0.45].map((share, step) => check([common], share, `bound ${step}`));
    // The first count reads half the rows; the second would pass the whole order's read: it ranks; the next ones use those ranks.
    expect(counted).toEqual([0, 1, 1, 1]);
    // Two categories, and another one alone: the same ranks, every code ranked at once.
    expect([check([common, second], 0.55, 'two categories'), check([second], 0.4, 'the other category')]).toEqual([1, 1]);
    // A change is a new version: counted by rows again, then ranked again.
    const changed = { ...many[0], categoryId: second, createAt: times[Math.floor(times.length / 3)] };
    index.upsert(changed);
    many[0] = changed;
    for (const [step, share] of [0.55, 0.65, 0.35].entries()) check([second], share, `after the change, bound ${step}`);
    expect(rankCodes).toHaveBeenCalledTimes(2);
  });

  it('files every video the change path adds in its range buckets, from an empty start on', { timeout: 300_000 }, async () => {
    // A server started on an empty database (as the facet tests' app is) gets every row through
    // the feed, a new slot at a time: each column reaches its end and grows (at 1,024 slots, then
    // 2,048, 4,096). A slot there has no value yet; read as some bucket's, it landed in none, and
    // a follower bound found one video fewer than SQL.
    const fed = new VideoIndex();
    fed.finishLoad();
    for (const row of await channelIndexRowsById(store.db, channelRows.map((row) => row.channelId))) fed.upsertChannel(row);
    for (const row of await videoIndexRowsById(store.db, videoRows.map((row) => row.videoId))) fed.upsert(row);
    expect(fed.table.size).toBeGreaterThan(1024);
    const followers = [...new Set(channelRows.map((row) => row.followerCount))].sort((a, b) => a - b);
    for (const value of followers.filter((_, i) => i % 10 === 0)) {
      for (const filter of [{ followerCountMin: value }, { followerCountMax: value }] as VideoFilter[]) {
        await compareVideos({ filter, sort: 'NEWEST' }, { first: 20 }, 'fed from empty', undefined, fed);
      }
    }
  });

  it('stays exact after channel and video changes applied through the change path', { timeout: 300_000 }, async () => {
    // A channel's country, gender and followers are copied onto its videos: a changed, emptied or deleted
    // channel, and a video moved between channels, must leave no stale copy behind.
    const rng = seededRandom('video-writes');
    for (let round = 0; round < 3; round++) {
      const channels = Array.from({ length: 30 }, () => pick(rng, channelRows).channelId);
      const [changed, emptied, targets] = [channels.slice(0, 15), channels.slice(15, 18), channels.slice(18)];
      await sql`UPDATE channels SET country = 'NZ', gender = (gender + 1) % 3, follower_count = (follower_count * 7 + 11) % 5000000 WHERE channel_id = ANY(${changed})`.execute(store.db);
      const moved = Array.from({ length: 20 }, () => pick(rng, videoRows).videoId);
      await sql`UPDATE videos SET channel_id = ${pick(rng, targets)} WHERE video_id = ANY(${moved}) AND channel_id <> ALL(${emptied})`.execute(store.db);
      // Videos moved to other dates land outside the slots their new date had: a window must still find them.
      const redated = Array.from({ length: 20 }, () => pick(rng, videoRows));
      const dates = redated.map(() => new Date(pick(rng, videoRows).createAt + rng.int(-3, 3) * 86_400_000).toISOString());
      await sql`UPDATE videos SET create_at = d.at::timestamptz FROM unnest(${redated.map((v) => v.videoId)}::text[], ${dates}::text[]) AS d(id, at)
        WHERE video_id = d.id`.execute(store.db);
      const gone = (await sql<{ video_id: string }>`DELETE FROM videos WHERE channel_id = ANY(${emptied}) RETURNING video_id`.execute(store.db)).rows.map((r) => r.video_id);
      await sql`DELETE FROM channels WHERE channel_id = ANY(${emptied.slice(0, 2)})`.execute(store.db);

      const touchedChannels = [...new Set(channels)];
      const currentChannels = await channelIndexRowsById(store.db, touchedChannels);
      const presentChannels = new Set(currentChannels.map((row) => row.channelId));
      for (const row of currentChannels) index.upsertChannel(row);
      const touchedVideos = [...new Set([...moved, ...gone, ...redated.map((v) => v.videoId)])];
      const currentVideos = await videoIndexRowsById(store.db, touchedVideos);
      const presentVideos = new Set(currentVideos.map((row) => row.videoId));
      for (const row of currentVideos) index.upsert(row);
      for (const id of touchedVideos) if (!presentVideos.has(id)) index.remove(id);
      for (const id of touchedChannels) if (!presentChannels.has(id)) index.removeChannel(id);
      channelRows = await channelIndexRows(store.db, null, 100_000);
      videoRows = await videoIndexRows(store.db, null, 100_000);

      for (let run = 0; run < 40; run++) {
        const parsed = videosArgs.safeParse({ filter: randomVideoFilter(rng, videoRows, channelRows) });
        if (!parsed.success) continue;
        await compareVideos({ filter: parsed.data.filter!, sort: 'NEWEST' }, { first: 20 }, `after channel writes ${round} #${run}`);
      }
      // Each channel's own videos, moved ones and emptied or deleted channels included.
      for (const channelId of [...new Set(channels)]) {
        await compareVideos({ filter: {}, sort: 'NEWEST', channelId }, { first: 50 }, `channel ${channelId} after channel writes ${round}`);
      }
      // Redated videos sit in the order's changed slots: windows ending among them, paged every way.
      for (let run = 0; run < 20; run++) {
        const ends = rng.chance(0.5) ? dates.map((at) => Date.parse(at)) : undefined;
        const parsed = videosArgs.safeParse({ filter: boundDates(rng, rng.chance(0.5) ? randomVideoFilter(rng, videoRows, channelRows) : {}, ends) });
        if (!parsed.success) continue;
        await compareVideoPages({ filter: parsed.data.filter!, sort: 'NEWEST' }, randomPage(rng), `dates after writes ${round} #${run}`);
      }
      const genders = [{ gender: 'UNKNOWN' }, { gender: 'MALE' }, { gender: 'FEMALE' }, { locations: ['NZ'], gender: 'FEMALE' }, { locations: ['NZ'], gender: 'MALE', followerCountMin: 1000 }];
      for (const filter of [{ locations: ['NZ'] }, { locations: ['NZ'], followerCountMin: 1000 }, { followerCountMax: 100 }, {}, ...genders] as VideoFilter[]) {
        await compareVideos({ filter, sort: 'NEWEST' }, { first: 50 }, `${JSON.stringify(filter)} after channel writes ${round}`);
      }
      for (const [i, at] of dates.entries()) {
        const day = at.slice(0, 10);
        const filter = { createAtStart: day, createAtEnd: day, ...(i % 2 ? { categorys: [redated[i].categoryId] } : {}) } as VideoFilter;
        await compareVideos({ filter, sort: 'NEWEST' }, { first: 50 }, `the day a video moved to, round ${round}`);
      }
    }
  });

  // Texts that rarely repeat (real titles may all differ) make more combinations than are kept:
  // the table is given up and the query's bits answer, as exact as before.
  it('answers text queries from their bits once titles are too many to keep their combinations', { timeout: 120_000 }, () => {
    const fresh = new VideoIndex();
    const channel = channelRows[0];
    fresh.upsertChannel(channel);
    const template = { ...videoRows[0], channelId: channel.channelId };
    const many = Array.from({ length: 70_000 }, (_, i) => ({
      ...template,
      videoId: `many-${String(i).padStart(6, '0')}`,
      title: `clip ${i} of ${i % 3 === 0 ? 'cats' : 'dogs'}`,
      description: i % 5 === 0 ? 'about cats' : '',
      // The index row's type: 1 a video, 2 a short (as video_type is stored).
      videoType: i % 7 === 0 ? 2 : 1,
      createAt: template.createAt - (i % 997) * 60_000,
    }));
    for (const row of many) fresh.upsert(row);
    fresh.finishLoad();
    const rowsMatching = watchRowsMatching();
    for (const filter of [{ query: 'cats' }, { query: 'dogs', videoType: 'SHORT' }, { query: '9 of' }, { query: 'zebra' }] as VideoFilter[]) {
      const type = filter.videoType === 'SHORT' ? 2 : filter.videoType === 'VIDEO' ? 1 : null;
      // SQL's order: newest first, then the id descending.
      const expected = many
        .filter((row) => (row.title.includes(filter.query!) || row.description.includes(filter.query!)) && (type === null || row.videoType === type))
        .sort((a, b) => b.createAt - a.createAt || (a.videoId < b.videoId ? 1 : -1))
        .map((row) => row.videoId);
      rowsMatching.mockClear();
      const found = fresh.search({ filter, sort: 'NEWEST' }, { first: 20 });
      expect(found.total, JSON.stringify(filter)).toBe(expected.length);
      expect(found.ids, JSON.stringify(filter)).toEqual(expected.slice(0, 20));
      expect(rowsMatching, JSON.stringify(filter)).toHaveBeenCalled();
    }
  });

  // A text query alone, or with a type, newest first (the video text workload) is counted from the
  // live videos of each combination of title, description and type, and its page walked testing
  // rows: no bits of the query's rows. Totals and pages as SQL says, through changed titles,
  // descriptions and types, deleted videos, and videos removed from the index and added back.
  it('counts a text query alone or with a type from the combinations of title, description and type', { timeout: 300_000 }, async () => {
    const rowsMatching = watchRowsMatching();
    const rng = seededRandom('video-text-combinations');
    const fragment = () => {
      const video = pick(rng, videoRows);
      const source = rng.chance(0.6) || video.description === '' ? video.title : video.description;
      const start = rng.int(0, Math.max(0, source.length - 3));
      return source.slice(start, start + rng.int(2, 6));
    };
    const check = async (label: string) => {
      let withoutBits = 0;
      for (let run = 0; run < 25; run++) {
        const filter: VideoFilter = { query: fragment(), ...(rng.chance(0.4) ? { videoType: pick(rng, ['VIDEO', 'SHORT'] as const) } : {}) };
        // A write first (the same row again): no match of an earlier search is cached.
        index.upsert(pick(rng, videoRows));
        rowsMatching.mockClear();
        const found = index.search({ filter, sort: 'NEWEST' }, { first: 20 });
        if (rowsMatching.mock.calls.length === 0) withoutBits++;
        // No match at all needs neither bits nor a walk.
        if (found.total === 0) expect(rowsMatching, `${label} #${run}`).not.toHaveBeenCalled();
        const compared = await compareVideoPages({ filter, sort: 'NEWEST' }, randomPage(rng), `${label} #${run}`);
        expect(found.total, `${label} #${run}`).toBe(compared.total);
      }
      // Only a match too rare for the walk's budget takes the bits.
      expect(withoutBits, label).toBeGreaterThan(15);
    };
    /** Whether the search made the bits of its query's rows, and the rows its page read. */
    const searched = (filter: VideoFilter) => {
      index.upsert(pick(rng, videoRows));
      rowsMatching.mockClear();
      const { probe, keys } = watch();
      const found = index.search({ filter, sort: 'NEWEST' }, { first: 20 }, probe);
      return { found, bits: rowsMatching.mock.calls.length > 0, read: keys.length };
    };
    await check('as loaded');
    // What users type: capitals, SQL's LIKE wildcards and its escape, one character, blanks. Each
    // is a literal substring, lower-cased as SQL lower-cases it.
    for (const query of ['TECH', 'Everything About', '%', '_', 'a%b', '\\', 'e', '  ', 'Q&A', 'constructor']) {
      for (const videoType of [undefined, 'SHORT'] as const) await compareVideoPages({ filter: { query, videoType }, sort: 'NEWEST' }, { first: 7 }, `typed ${query}`);
    }
    // Empty lists ask for nothing (as SQL reads them): the same way, no bits of the query's rows.
    for (const query of ['abou', 'tech', 'e']) {
      const filter: VideoFilter = { query, categorys: [], locations: [] };
      const plain = searched({ query });
      const emptied = searched(filter);
      expect([emptied.found, emptied.bits], query).toEqual([plain.found, plain.bits]);
      await compareVideoPages({ filter, sort: 'NEWEST' }, { first: 5 }, `empty lists ${query}`);
      await compareVideoPages({ filter, sort: 'RELEVANCE' }, { first: 5, offset: 3 }, `empty lists, relevance ${query}`);
    }
    // A fragment of the short videos' titles and descriptions among the others: no match, no bits.
    const none = searched({ query: '#shorts', videoType: 'VIDEO' });
    expect([none.found.total, none.bits, none.read]).toEqual([0, false, 0]);
    await compareVideoPages({ filter: { query: '#shorts', videoType: 'VIDEO' }, sort: 'NEWEST' }, { first: 5 }, 'no match');
    for (let round = 0; round < 2; round++) {
      const retitled = Array.from({ length: 40 }, () => pick(rng, videoRows).videoId);
      const titles = retitled.map((_, i) => (i % 3 === 0 ? `fresh title ${round}-${i % 7}` : pick(rng, videoRows).title));
      const descriptions = retitled.map((_, i) => (i % 4 === 0 ? '' : i % 4 === 1 ? `fresh description ${i % 5}` : pick(rng, videoRows).description));
      await sql`UPDATE videos SET title = d.title, description = d.description, video_type = 3 - video_type
        FROM unnest(${retitled}::text[], ${titles}::text[], ${descriptions}::text[]) AS d(id, title, description) WHERE video_id = d.id`.execute(store.db);
      const gone = Array.from({ length: 10 }, () => pick(rng, videoRows).videoId);
      await sql`DELETE FROM videos WHERE video_id = ANY(${gone})`.execute(store.db);
      const touched = [...new Set([...retitled, ...gone])];
      const current = await videoIndexRowsById(store.db, touched);
      const present = new Set(current.map((row) => row.videoId));
      for (const row of current) index.upsert(row);
      for (const id of touched) if (!present.has(id)) index.remove(id);
      // Out of the index and back, as a video deleted and restored.
      const back = current.slice(0, 10);
      for (const row of back) index.remove(row.videoId);
      for (const row of back) index.upsert(row);
      videoRows = await videoIndexRows(store.db, null, 100_000);
      await check(`after text writes ${round}`);
      // A title a few videos have: a walk would read most of the order, the bits read only them.
      const rare = searched({ query: `fresh title ${round}-` });
      expect(rare.found.total).toBeGreaterThan(0);
      expect(rare.found.total).toBeLessThan(videoRows.length / 100);
      expect([rare.bits, rare.read <= rare.found.total!]).toEqual([true, true]);
      await compareVideoPages({ filter: { query: `fresh title ${round}-` }, sort: 'NEWEST' }, { first: 5 }, `rare, round ${round}`);
    }
  });

  // Relevance with a text query alone, or with a type (the REST video search with a query): each
  // tier (the title equal to the query, starting with it, containing it, else the description
  // containing it) counted from the combinations, and its page walked along the most-played order
  // tier by tier; a title tier too rare for a walk from its titles' rows. Totals, pages, offsets
  // across tiers and cursors as SQL says, through changed titles and types.
  it('pages a relevance text search tier by tier from the combinations', { timeout: 300_000 }, async () => {
    const rowsMatching = watchRowsMatching();
    const rng = seededRandom('video-relevance-tiers');
    /** A whole title (tier 3 for its videos), its start (2), a fragment of it (1) or of a description (0 where titles lack it). */
    const query = () => {
      const video = pick(rng, videoRows);
      const title = video.title;
      switch (rng.int(0, 3)) {
        case 0:
          return rng.chance(0.5) ? title : title.toUpperCase();
        case 1:
          return title.slice(0, rng.int(1, Math.max(1, title.length - 1)));
        case 2: {
          const start = rng.int(0, Math.max(0, title.length - 3));
          return title.slice(start, start + rng.int(2, 6));
        }
        default: {
          const source = video.description || title;
          const start = rng.int(0, Math.max(0, source.length - 3));
          return source.slice(start, start + rng.int(3, 8));
        }
      }
    };
    const check = async (label: string) => {
      let withoutBits = 0;
      const tiersSeen = new Set<number>();
      for (let run = 0; run < 30; run++) {
        const filter: VideoFilter = { query: query(), ...(rng.chance(0.4) ? { videoType: pick(rng, ['VIDEO', 'SHORT'] as const) } : {}) };
        // A write first (the same row again): no match of an earlier search is cached.
        index.upsert(pick(rng, videoRows));
        rowsMatching.mockClear();
        const found = index.search({ filter, sort: 'RELEVANCE' }, { first: 20 });
        if (rowsMatching.mock.calls.length === 0) withoutBits++;
        const tiersOf = (page: IndexPage) => page.ids.forEach((_, row) => tiersSeen.add(page.sortKeys[2 * row]));
        tiersOf(found);
        const compared = await compareVideoPages({ filter, sort: 'RELEVANCE' }, randomPage(rng), `${label} #${run}`);
        expect(found.total, `${label} #${run}`).toBe(compared.total);
        // Offsets that end a tier, start the next, and reach past the last.
        const total = found.total!;
        for (const offset of [Math.max(0, total - 25), Math.floor(total / 2), total]) {
          tiersOf(await compareVideos({ filter, sort: 'RELEVANCE' }, { first: 20, offset }, `${label} #${run} offset ${offset}`));
        }
      }
      // Every tier answered, most searches without any bits of the query's rows.
      expect([...tiersSeen].sort(), label).toEqual([0, 1, 2, 3]);
      expect(withoutBits, label).toBeGreaterThan(15);
    };
    await check('as loaded');
    for (const query of ['TECH', 'Everything About', '%', '_', '\\', 'e', '  ', 'constructor', '#shorts']) {
      for (const videoType of [undefined, 'VIDEO'] as const) await compareVideoPages({ filter: { query, videoType }, sort: 'RELEVANCE' }, { first: 7 }, `typed ${query}`);
    }
    // A title only a few videos have: its tier comes from its titles' rows, not a walk of the order.
    const retitled = Array.from({ length: 12 }, () => pick(rng, videoRows).videoId);
    await sql`UPDATE videos SET title = 'rare relevance title ' || (ord % 3), video_type = 3 - video_type
      FROM unnest(${retitled}::text[]) WITH ORDINALITY AS d(id, ord) WHERE video_id = d.id`.execute(store.db);
    const current = await videoIndexRowsById(store.db, [...new Set(retitled)]);
    for (const row of current) index.upsert(row);
    videoRows = await videoIndexRows(store.db, null, 100_000);
    rowsMatching.mockClear();
    const { probe, keys } = watch();
    // A budget this table's 5,000 videos can pass (the service's, 4,480 for this page, is for millions).
    const rare = index.search({ filter: { query: 'rare relevance title 1' }, sort: 'RELEVANCE' }, { first: 5 }, { ...probe, rowTestBudget: 500 });
    expect(rare.total).toBeGreaterThan(0);
    // The rows of the titles equal to it, not the four tiers' bits (each title match and the descriptions').
    expect(rowsMatching.mock.calls.map(([, , how]) => how)).toEqual(['equals']);
    expect(keys.length).toBeLessThanOrEqual(rare.total! + 1);
    for (const query of ['rare relevance title 1', 'rare relevance title', 'relevance', 'Rare Relevance']) {
      await compareVideoPages({ filter: { query }, sort: 'RELEVANCE' }, { first: 5 }, `rare ${query}`);
      await compareVideoPages({ filter: { query, videoType: 'SHORT' }, sort: 'RELEVANCE' }, { first: 5, offset: 2 }, `rare short ${query}`);
    }
    await check('after the rare titles');

    // A title of the least played 30 %: each combination knows the most plays its rows have had,
    // so the tier's walk starts there, not at the most played video of all.
    const byPlays = [...videoRows].sort((a, b) => a.playCount - b.playCount);
    const retitle = async (ids: string[], title: string) => {
      await sql`UPDATE videos SET title = ${title} || (ord % 3) FROM unnest(${ids}::text[]) WITH ORDINALITY AS d(id, ord) WHERE video_id = d.id`.execute(store.db);
      for (const row of await videoIndexRowsById(store.db, ids)) index.upsert(row);
      videoRows = await videoIndexRows(store.db, null, 100_000);
    };
    await retitle(byPlays.slice(0, 1_500).map((row) => row.videoId), 'gathered clip ');
    const queries = ['gathered clip', 'thered cli', 'gathered clip 2'];
    for (const query of queries) {
      for (const videoType of [undefined, 'VIDEO'] as const) {
        rowsMatching.mockClear();
        const { probe: watching, keys: read } = watch();
        const found = index.search({ filter: { query, videoType }, sort: 'RELEVANCE' }, { first: 20 }, watching);
        expect([found.total! > 20, read.length < 100, rowsMatching.mock.calls.length], query).toEqual([true, true, 0]);
        await compareVideoPages({ filter: { query, videoType }, sort: 'RELEVANCE' }, { first: 20 }, `gathered ${query}`);
      }
    }
    // The most played video takes the title too: the walk from the top reads down to the others,
    // gives up, and the tier is paged along its titles' rows (not the four tiers' bits, which ask
    // for the query's rows with no tier).
    await retitle([byPlays.at(-1)!.videoId], 'gathered clip ');
    for (const query of queries) {
      for (const videoType of [undefined, 'VIDEO'] as const) {
        rowsMatching.mockClear();
        // A budget below the 3,500 rows above the others (the service's, 5,440, is more than this table's 5,000 videos).
        const gathered = index.search({ filter: { query, videoType }, sort: 'RELEVANCE' }, { first: 20 }, { rowTestBudget: 1_000 });
        expect(gathered.total, query).toBeGreaterThan(20);
        expect(rowsMatching.mock.calls.map(([, , how]) => how).filter((how) => how === undefined), query).toEqual([]);
        await compareVideoPages({ filter: { query, videoType }, sort: 'RELEVANCE' }, { first: 20 }, `gathered ${query}`);
        await compareVideos({ filter: { query, videoType }, sort: 'RELEVANCE' }, { first: 20, offset: 90 }, `gathered ${query} offset`);
      }
    }
    rowsMatching.mockClear();
    index.search({ filter: { query: 'gathered clip' }, sort: 'RELEVANCE' }, { first: 20 }, { rowTestBudget: 1_000 });
    expect(rowsMatching.mock.calls.map(([, , how]) => how)).toEqual(['prefix']);
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../src/cli/seed.js';
import type { Creator, LiveStream, Video } from '../src/domain/records.js';
import { creatorsArgs, type CreatorFilter } from '../src/inputs/creators.js';
import { liveStreamsArgs, type LiveStreamFilter } from '../src/inputs/live-streams.js';
import { videosArgs, type VideoFilter } from '../src/inputs/videos.js';
import type { Search } from '../src/search/types.js';
import { expandCategoryIds } from '../src/store/categories.js';
import { searchCreators } from '../src/store/creators.js';
import { searchLiveStreams } from '../src/store/live-streams.js';
import { searchVideos } from '../src/store/videos.js';
import { seededRandom, type SeededRandom } from '../src/upstreams/seeded-random.js';
import { createTestApp, type TestApp } from './support/app.js';

// Facets (docs/contract/decisions.md §6.1) are exact: for random filters, with and without
// excludeOwn, before and after random writes through the change path, the index's counts, the SQL
// path's GROUP BY and a tally of the matching rows themselves (read with plain SQL and counted
// here, in the test's own words) are one answer. On PostgreSQL the index runs in its own thread too.

// Fewer on PGlite, whose plain SQL (the tally's rows) is several times slower.
const RUNS = Number(process.env.FACET_PROPERTY_RUNS ?? (process.env.TEST_DATABASE_URL ? 20 : 12));
// The index in its own thread counts with the same code; its runs check what crosses the thread.
const modes = process.env.TEST_DATABASE_URL
  ? [
      { thread: false, runs: RUNS },
      { thread: true, runs: Math.ceil(RUNS / 4) },
    ]
  : [{ thread: false, runs: RUNS }];
const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
const pick = <T>(rng: SeededRandom, items: readonly T[]): T => items[Math.floor(rng.next() * items.length)];

interface Count {
  value: string;
  label: string | null;
  count: number;
}
interface Range {
  min: number | null;
  max: number | null;
  count: number;
}

/** The test's own tally: each row's values (each once per row), zero counts absent, by count desc then value. */
function tally<R>(rows: readonly R[], valuesOf: (row: R) => string[], labelOf: (value: string, row: R) => string | null = () => null): Count[] {
  const counts = new Map<string, Count>();
  for (const row of rows) {
    for (const value of new Set(valuesOf(row))) {
      const label = labelOf(value, row);
      const seen = counts.get(value) ?? { value, label, count: 0 };
      // Rows of one value naming it differently: the smallest name.
      if (label !== null && (seen.label === null || label < seen.label)) seen.label = label;
      seen.count++;
      counts.set(value, seen);
    }
  }
  return [...counts.values()].map((c) => ({ ...c, label: c.label || null })).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
}

function histogram<R>(rows: readonly R[], valueOf: (row: R) => number, edges: readonly number[]): Range[] {
  const bounds = [null, ...edges, null];
  return bounds.slice(0, -1).map((min, i) => {
    const max = bounds[i + 1];
    return { min, max, count: rows.filter((row) => (min === null || valueOf(row) >= min) && (max === null || valueOf(row) < max)).length };
  });
}

/** Edges near real values: exact ones, a hair either side, round numbers; strictly increasing. */
function randomEdges(rng: SeededRandom, values: number[], cents: boolean): number[] {
  const edges = Array.from({ length: rng.int(1, 6) }, () => {
    const value = pick(rng, values);
    switch (rng.int(0, 2)) {
      case 0:
        return value;
      case 1:
        return cents ? value + pick(rng, [-0.005, 0.005, 0.01]) : value + pick(rng, [-1, 1]);
      default:
        return cents ? Math.round(value) : 10 ** rng.int(0, 7);
    }
  });
  return [...new Set(edges)].sort((a, b) => a - b);
}

describe.each(modes)('facets, with the index in its own thread: $thread', ({ thread, runs }) => {
  let app: TestApp;
  let index: Search;
  let key: string;
  let categoryName: Map<number, string>;
  let leafCategories: number[];

  beforeAll(async () => {
    app = await createTestApp({ searchIndex: true, searchPollMs: 60_000, searchThread: thread });
    await seedDemo(app.store.db, quiet);
    index = app.services.search!;
    key = await app.newKey({ plan: 'pro', ratePerSecond: 100_000, quota: 1_000_000_000 });
    await index.refresh();
    const categories = await app.store.db.selectFrom('categories').select(['id', 'name', 'level']).execute();
    categoryName = new Map(categories.map((c) => [c.id, c.name]));
    leafCategories = categories.filter((c) => c.level > 1).map((c) => c.id);
  }, 120_000);
  afterAll(() => app?.close());

  /** One operation answered by the index, then by SQL (the index switched off for a moment); both must agree. */
  async function both(query: string, variables: Record<string, unknown>) {
    const fromIndex = await app.graphql(query, variables, key);
    app.services.search = null;
    const fromSql = await app.graphql(query, variables, key).finally(() => (app.services.search = index));
    const context = JSON.stringify(variables);
    expect(fromIndex.body.errors, context).toBeUndefined();
    expect(fromSql.body.errors, context).toBeUndefined();
    expect(fromIndex.body.data, context).toEqual(fromSql.body.data);
    return fromIndex.body.data;
  }

  // ---- creators ----

  const creatorFacetQuery = `query($filter: CreatorFilter, $followers: [SafeInt!]!, $rates: [Float!]!) {
    creators(filter: $filter, first: 3) {
      totalCount
      facets {
        country { value label count } xCountry: country(excludeOwn: true) { value label count }
        language { value label count } xLanguage: language(excludeOwn: true) { value label count }
        gender { value label count } xGender: gender(excludeOwn: true) { value label count }
        category { value label count } xCategory: category(excludeOwn: true) { value label count }
        verified { value label count } xVerified: verified(excludeOwn: true) { value label count }
        hasEmail { value label count } xHasEmail: hasEmail(excludeOwn: true) { value label count }
        followerCount(edges: $followers) { min max count } xFollowerCount: followerCount(edges: $followers, excludeOwn: true) { min max count }
        avgEngagementRate(edges: $rates) { min max count } xAvgEngagementRate: avgEngagementRate(edges: $rates, excludeOwn: true) { min max count }
      }
    }
  }`;

  /** Every creator the filter matches, read with plain SQL. */
  async function creatorRows(filter: CreatorFilter): Promise<Creator[]> {
    const categoryIds = filter.categoryIds?.length ? (await expandCategoryIds(app.store.db, filter.categoryIds)).expanded : null;
    return (await searchCreators(app.store.db, { platform: 'twitter', filter, categoryIds, sort: 'FOLLOWER_COUNT' }, { first: 1_000_000 })).rows;
  }

  async function expectedCreatorFacets(filter: CreatorFilter, followers: number[], rates: number[]) {
    const rows = await creatorRows(filter);
    // Without conditions the filter does not have, it is the same filter: the same rows.
    const without = async (...fields: (keyof CreatorFilter)[]) =>
      fields.every((f) => filter[f] == null) ? rows : creatorRows({ ...filter, ...Object.fromEntries(fields.map((f) => [f, null])) });
    const facets = (own: Creator[], field: string) => {
      switch (field) {
        case 'country':
          return tally(own, (r) => [r.country]);
        case 'language':
          return tally(own, (r) => [r.language]);
        case 'gender':
          return tally(own, (r) => [r.gender.toLowerCase()]);
        case 'category':
          return tally(own, (r) => r.categoryIds.map(String), (value) => categoryName.get(Number(value)) ?? null);
        case 'verified':
          return tally(own, (r) => [String(r.isVerified)]);
        case 'hasEmail':
          return tally(own, (r) => [String(r.hasEmail)]);
        case 'followerCount':
          return histogram(own, (r) => r.followerCount, followers);
        default:
          return histogram(own, (r) => Number(r.avgEngagementRate), rates);
      }
    };
    const owned: Record<string, (keyof CreatorFilter)[]> = {
      country: ['locations'],
      language: ['languages'],
      gender: ['gender'],
      category: ['categoryIds'],
      verified: ['verified'],
      hasEmail: ['hasEmail'],
      followerCount: ['followerCountMin', 'followerCountMax'],
      avgEngagementRate: ['avgEngagementRateMin', 'avgEngagementRateMax'],
    };
    const expected: Record<string, unknown> = {};
    for (const [field, fields] of Object.entries(owned)) {
      expected[field] = facets(rows, field);
      expected[`x${field[0].toUpperCase()}${field.slice(1)}`] = facets(await without(...fields), field);
    }
    return { totalCount: rows.length, facets: expected };
  }

  function randomCreatorFilter(rng: SeededRandom, sample: Creator[]): CreatorFilter {
    const filter: Record<string, unknown> = {};
    const row = () => pick(rng, sample);
    if (rng.chance(0.2)) filter.query = row().username.slice(0, rng.int(1, 3));
    if (rng.chance(0.4)) filter.locations = Array.from({ length: rng.int(1, 3) }, () => row().country || 'US');
    if (rng.chance(0.3)) filter.languages = Array.from({ length: rng.int(1, 2) }, () => row().language || 'en');
    if (rng.chance(0.3)) filter.gender = pick(rng, ['UNKNOWN', 'MALE', 'FEMALE']);
    if (rng.chance(0.25)) filter.hasEmail = rng.chance(0.7);
    if (rng.chance(0.25)) filter.verified = rng.chance(0.7);
    if (rng.chance(0.3)) filter.categoryIds = Array.from({ length: rng.int(1, 3) }, () => pick(rng, leafCategories));
    if (rng.chance(0.3)) filter.followerCountMin = row().followerCount;
    if (rng.chance(0.2)) filter.followerCountMax = row().followerCount + rng.int(0, 1_000_000);
    if (rng.chance(0.25)) filter.avgEngagementRateMin = Number(row().avgEngagementRate);
    return filter as CreatorFilter;
  }

  async function checkCreators(rng: SeededRandom, runs: number, label: string) {
    const sample = await creatorRows({} as CreatorFilter);
    let nonEmpty = 0;
    for (let run = 0; run < runs; run++) {
      const parsed = creatorsArgs.safeParse({ filter: randomCreatorFilter(rng, sample) });
      if (!parsed.success) continue;
      const filter = parsed.data.filter!;
      const followers = randomEdges(rng, sample.map((r) => r.followerCount), false);
      const rates = randomEdges(rng, sample.map((r) => Number(r.avgEngagementRate)), true);
      const data = await both(creatorFacetQuery, { filter, followers, rates });
      const expected = await expectedCreatorFacets(filter, followers, rates);
      expect(data.creators.totalCount, `${label} #${run}`).toBe(expected.totalCount);
      expect(data.creators.facets, `${label} #${run}: ${JSON.stringify({ filter, followers, rates })}`).toEqual(expected.facets);
      if (expected.totalCount > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(runs / 4);
  }

  // ---- videos ----

  const videoFacetQuery = `query($filter: VideoFilter) {
    videos(filter: $filter, first: 3) {
      totalCount
      facets {
        category { value label count } xCategory: category(excludeOwn: true) { value label count }
        videoType { value label count } xVideoType: videoType(excludeOwn: true) { value label count }
        channelCountry { value label count } xChannelCountry: channelCountry(excludeOwn: true) { value label count }
        month { value label count } xMonth: month(excludeOwn: true) { value label count }
      }
    }
  }`;

  async function videoRows(filter: VideoFilter): Promise<Video[]> {
    return (await searchVideos(app.store.db, { filter, sort: 'NEWEST' }, { first: 1_000_000 })).rows;
  }

  async function expectedVideoFacets(filter: VideoFilter) {
    const channels = await app.store.db.selectFrom('channels').select(['channel_id', 'country']).execute();
    const countryOf = new Map(channels.map((c) => [c.channel_id, c.country]));
    const owned: Record<string, [(keyof VideoFilter)[], (v: Video) => string]> = {
      category: [['categorys'], (v) => String(v.categoryId)],
      videoType: [['videoType'], (v) => v.videoType.toLowerCase()],
      channelCountry: [['locations'], (v) => countryOf.get(v.channelId)!],
      month: [['createAtStart', 'createAtEnd'], (v) => v.createAt.toISOString().slice(0, 7)],
    };
    const rows = await videoRows(filter);
    const expected: Record<string, unknown> = {};
    for (const [field, [fields, valueOf]] of Object.entries(owned)) {
      const labelOf = (value: string) => (field === 'category' ? (categoryName.get(Number(value)) ?? null) : null);
      expected[field] = tally(rows, (v) => [valueOf(v)], labelOf);
      const others = fields.every((f) => filter[f] == null) ? rows : await videoRows({ ...filter, ...Object.fromEntries(fields.map((f) => [f, null])) });
      expected[`x${field[0].toUpperCase()}${field.slice(1)}`] = tally(others, (v) => [valueOf(v)], labelOf);
    }
    return { totalCount: rows.length, facets: expected };
  }

  function randomVideoFilter(rng: SeededRandom, sample: Video[], countries: string[]): VideoFilter {
    const filter: Record<string, unknown> = {};
    const video = () => pick(rng, sample);
    if (rng.chance(0.15)) filter.query = video().title.slice(0, rng.int(1, 3));
    if (rng.chance(0.35)) filter.categorys = Array.from({ length: rng.int(1, 3) }, () => video().categoryId);
    if (rng.chance(0.3)) filter.videoType = pick(rng, ['VIDEO', 'SHORT']);
    if (rng.chance(0.35)) filter.locations = Array.from({ length: rng.int(1, 3) }, () => pick(rng, countries));
    if (rng.chance(0.35)) {
      const at = video().createAt.getTime();
      filter.createAtStart = new Date(at - rng.int(0, 60) * 86_400_000).toISOString().slice(0, 10);
      if (rng.chance(0.6)) filter.createAtEnd = new Date(at + rng.int(0, 60) * 86_400_000).toISOString();
    }
    if (rng.chance(0.15)) filter.gender = pick(rng, ['UNKNOWN', 'MALE', 'FEMALE']);
    if (rng.chance(0.15)) filter.followerCountMin = rng.int(0, 500_000);
    return filter as VideoFilter;
  }

  async function checkVideos(rng: SeededRandom, runs: number, label: string) {
    const sample = await videoRows({} as VideoFilter);
    const countries = [...new Set((await app.store.db.selectFrom('channels').select('country').execute()).map((c) => c.country))];
    let nonEmpty = 0;
    for (let run = 0; run < runs; run++) {
      const parsed = videosArgs.safeParse({ filter: randomVideoFilter(rng, sample, countries) });
      if (!parsed.success) continue;
      const filter = parsed.data.filter!;
      const data = await both(videoFacetQuery, { filter });
      const expected = await expectedVideoFacets(filter);
      expect(data.videos.totalCount, `${label} #${run}`).toBe(expected.totalCount);
      expect(data.videos.facets, `${label} #${run}: ${JSON.stringify(filter)}`).toEqual(expected.facets);
      if (expected.totalCount > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(runs / 4);
  }

  // ---- live streams ----

  const liveFacetQuery = `query($filter: LiveStreamFilter) {
    liveStreams(filter: $filter, first: 3) {
      totalCount
      facets {
        game { value label count } xGame: game(excludeOwn: true) { value label count }
        language { value label count } xLanguage: language(excludeOwn: true) { value label count }
      }
    }
  }`;

  async function liveRows(filter: LiveStreamFilter): Promise<LiveStream[]> {
    return (await searchLiveStreams(app.store.db, filter, { first: 1_000_000 })).rows;
  }

  async function checkLiveStreams(rng: SeededRandom, runs: number, label: string) {
    const sample = await liveRows({});
    for (let run = 0; run < runs; run++) {
      const stream = pick(rng, sample);
      const raw: Record<string, unknown> = {};
      if (rng.chance(0.5)) raw.gameId = stream.gameId;
      if (rng.chance(0.5)) raw.language = stream.language.toUpperCase();
      if (rng.chance(0.3)) raw.type = 'LIVE';
      const filter = liveStreamsArgs.parse({ filter: raw }).filter!;
      const data = await both(liveFacetQuery, { filter });
      const gameLabel = (_value: string, row: LiveStream) => row.gameName;
      const rows = await liveRows(filter);
      const expected = {
        game: tally(rows, (r) => [r.gameId], gameLabel),
        xGame: tally(await liveRows({ ...filter, gameId: null }), (r) => [r.gameId], gameLabel),
        language: tally(rows, (r) => [r.language]),
        xLanguage: tally(await liveRows({ ...filter, language: null }), (r) => [r.language]),
      };
      expect(data.liveStreams.totalCount, `${label} #${run}`).toBe(rows.length);
      expect(data.liveStreams.facets, `${label} #${run}: ${JSON.stringify(filter)}`).toEqual(expected);
    }
  }

  /** Random writes to every faceted field, then the index reads the change feed. */
  async function randomWrites(rng: SeededRandom, round: number) {
    const db = app.store.db;
    const creators = (await sql<{ user_id: string }>`SELECT user_id FROM creators ORDER BY user_id`.execute(db)).rows.map((r) => r.user_id);
    const victims = Array.from({ length: 30 }, () => pick(rng, creators));
    await sql`UPDATE creators SET country = ${pick(rng, ['NZ', 'US', 'BR'])}, language = 'mi', gender = (gender + 1) % 3, is_verified = NOT is_verified,
        has_email = NOT has_email, follower_count = (follower_count * 3 + 7) % 1000000, avg_engagement_rate = (avg_engagement_rate * 7 + 1.13) % 20,
        category_ids = ${sql.val([pick(rng, leafCategories), pick(rng, leafCategories)])}::integer[]
      WHERE platform = 'twitter' AND user_id = ANY(${victims.slice(0, 20)})`.execute(db);
    await sql`DELETE FROM creators WHERE platform = 'twitter' AND user_id = ANY(${victims.slice(20)})`.execute(db);
    await sql`INSERT INTO creators (platform, user_id, username, country, language, follower_count, avg_engagement_rate, category_ids)
      SELECT 'twitter', 'facet' || ${round} || '_' || g, 'faceted' || g, 'NZ', 'mi', g * 1000, g * 0.25, ${sql.val([pick(rng, leafCategories)])}::integer[]
      FROM generate_series(1, 10) g`.execute(db);
    const channels = (await sql<{ channel_id: string }>`SELECT channel_id FROM channels ORDER BY channel_id`.execute(db)).rows.map((r) => r.channel_id);
    await sql`UPDATE channels SET country = 'NZ' WHERE channel_id = ANY(${Array.from({ length: 10 }, () => pick(rng, channels))})`.execute(db);
    const videos = (await sql<{ video_id: string }>`SELECT video_id FROM videos ORDER BY video_id`.execute(db)).rows.map((r) => r.video_id);
    await sql`UPDATE videos SET category_id = ${pick(rng, leafCategories)}, video_type = 3 - video_type, create_at = create_at - interval '40 days'
      WHERE video_id = ANY(${Array.from({ length: 40 }, () => pick(rng, videos))})`.execute(db);
    await sql`DELETE FROM videos WHERE video_id = ANY(${Array.from({ length: 10 }, () => pick(rng, videos))})`.execute(db);
    const streams = (await sql<{ id: string }>`SELECT id FROM live_streams ORDER BY id`.execute(db)).rows.map((r) => r.id);
    await sql`UPDATE live_streams SET language = 'mi', game_id = 'g' || ${round} WHERE id = ANY(${Array.from({ length: 20 }, () => pick(rng, streams))})`.execute(db);
    await index.refresh();
  }

  describe('on rows whose answers are known', () => {
    let categories: { id: number; name: string }[];

    beforeAll(async () => {
      const db = app.store.db;
      categories = (await db.selectFrom('categories').select(['id', 'name']).where('level', '=', 3).orderBy('id').limit(2).execute()).map((c) => c);
      const [a, b] = categories.map((c) => c.id);
      // Five creators a query finds alone; one carries a category twice (counted once).
      await sql`INSERT INTO creators (platform, user_id, username, country, language, gender, follower_count, is_verified, has_email, avg_engagement_rate, category_ids) VALUES
        ('twitter', 'fx1', 'zqfacet1', 'US', 'en', 2, 99, true, false, 1.49, ${sql.val([a, a])}::integer[]),
        ('twitter', 'fx2', 'zqfacet2', 'US', 'en', 1, 100, false, false, 1.5, ${sql.val([a, b])}::integer[]),
        ('twitter', 'fx3', 'zqfacet3', 'GB', 'fr', 2, 999, true, true, 2.25, ${sql.val([b])}::integer[]),
        ('twitter', 'fx4', 'zqfacet4', 'US', 'es', 0, 1000, true, false, 0, '{}'),
        ('twitter', 'fx5', 'zqfacet5', 'BR', 'en', 2, 5000000000, false, true, 9.99, ${sql.val([b])}::integer[])`.execute(db);
      await sql`INSERT INTO channels (channel_id, title, country) VALUES ('zq-channel-a', 'zq a', 'DE'), ('zq-channel-b', 'zq b', 'JP')`.execute(db);
      // 2026-03-31T23:30:00-02:00 is April in UTC.
      await sql`INSERT INTO videos (video_id, channel_id, title, create_at, video_type, category_id) VALUES
        ('zqv1', 'zq-channel-a', 'zqvideo one', '2026-03-01T00:00:00Z', 1, ${a}),
        ('zqv2', 'zq-channel-a', 'zqvideo two', '2026-03-31T23:30:00-02:00', 2, ${a}),
        ('zqv3', 'zq-channel-b', 'zqvideo three', '2026-02-28T23:59:59.999Z', 2, ${b}),
        ('zqv4', 'zq-channel-b', 'zqvideo four', '2026-03-15T12:00:00Z', 2, 0)`.execute(db);
      await sql`INSERT INTO live_streams (id, user_id, user_login, game_id, game_name, language, started_at) VALUES
        ('zqs1', 'zq-user', 'zq', '509658', 'Just Chatting', 'en', now()),
        ('zqs2', 'zq-user', 'zq', '509658', 'Just Chatting', 'de', now()),
        ('zqs3', 'zq-user', 'zq', '21779', 'League of Legends', 'en', now()),
        ('zqs4', 'zq-user', 'zq', '', '', 'other', now())`.execute(db);
      await index.refresh();
    });

    const count = (value: string, n: number, label: string | null = null) => ({ value, label, count: n });

    it('spells values as REST does, sorts by count then value, and leaves out zero counts', async () => {
      const [a, b] = categories;
      const data = await both(
        `{ creators(filter: { query: "zqfacet" }) { totalCount facets {
            country { value label count } language { value label count } gender { value label count }
            category { value label count } verified { value label count } hasEmail { value label count }
            followerCount(edges: [100, 1000, 5000000000]) { min max count }
            avgEngagementRate(edges: [1.5, 2.25]) { min max count } } } }`,
        {},
      );
      expect(data.creators.totalCount).toBe(5);
      expect(data.creators.facets).toEqual({
        country: [count('US', 3), count('BR', 1), count('GB', 1)],
        language: [count('en', 3), count('es', 1), count('fr', 1)],
        gender: [count('female', 3), count('male', 1), count('unknown', 1)],
        category: [count(String(b.id), 3, b.name), count(String(a.id), 2, a.name)].sort((x, y) => y.count - x.count || (x.value < y.value ? -1 : 1)),
        verified: [count('true', 3), count('false', 2)],
        hasEmail: [count('false', 3), count('true', 2)],
        followerCount: [
          { min: null, max: 100, count: 1 },
          { min: 100, max: 1000, count: 2 },
          { min: 1000, max: 5000000000, count: 1 },
          { min: 5000000000, max: null, count: 1 },
        ],
        avgEngagementRate: [
          { min: null, max: 1.5, count: 2 },
          { min: 1.5, max: 2.25, count: 1 },
          { min: 2.25, max: null, count: 2 },
        ],
      });
      // The REST answer spells the same rows the same way.
      const rest = await app.rest('/api/v1/search/twitter/user', { body: { query: 'zqfacet', page_size: 10 }, key });
      const items = rest.body.data.items as { country: string; gender: string }[];
      expect(new Set(items.map((item) => item.gender))).toEqual(new Set(['female', 'male', 'unknown']));
      expect(new Set(items.map((item) => item.country))).toEqual(new Set(['US', 'GB', 'BR']));

      // Disjunctive: the other countries stay visible once one is chosen.
      const chosen = await both(`{ creators(filter: { query: "zqfacet", locations: ["GB"] }) { totalCount facets {
          country { value count } others: country(excludeOwn: true) { value count } gender(excludeOwn: true) { value count } } } }`, {});
      expect(chosen.creators).toEqual({
        totalCount: 1,
        facets: {
          country: [{ value: 'GB', count: 1 }],
          others: [{ value: 'US', count: 3 }, { value: 'BR', count: 1 }, { value: 'GB', count: 1 }],
          gender: [{ value: 'female', count: 1 }],
        },
      });
    });

    it('counts videos by category, type, channel country and UTC month', async () => {
      const [a, b] = categories;
      const data = await both(
        `{ videos(filter: { query: "zqvideo" }) { totalCount facets {
            category { value label count } videoType { value label count } channelCountry { value label count } month { value label count } } } }`,
        {},
      );
      expect(data.videos.totalCount).toBe(4);
      expect(data.videos.facets).toEqual({
        category: [count('0', 1), count(String(a.id), 2, a.name), count(String(b.id), 1, b.name)].sort((x, y) => y.count - x.count || (x.value < y.value ? -1 : 1)),
        videoType: [count('short', 3), count('video', 1)],
        channelCountry: [count('DE', 2), count('JP', 2)],
        month: [count('2026-03', 2), count('2026-02', 1), count('2026-04', 1)],
      });
    });

    it('counts live streams by game, labelled with its name, and language', async () => {
      const data = await both(`{ liveStreams(filter: { userId: "zq-user" }) { totalCount facets { game { value label count } language { value label count } } } }`, {});
      expect(data.liveStreams).toEqual({
        totalCount: 4,
        facets: {
          game: [count('509658', 2, 'Just Chatting'), count('', 1), count('21779', 1, 'League of Legends')],
          language: [count('en', 2), count('de', 1), count('other', 1)],
        },
      });
    });

    it('refuses edges that are not strictly increasing, empty or too many, with BAD_REQUEST naming the histogram edges, before any charge', async () => {
      const usage = async () => (await app.graphql('{ viewer { quotaUsed } }', {}, key)).body.data.viewer.quotaUsed as number;
      const before = await usage();
      for (const edges of ['[5, 5]', '[10, 5]', '[]', `[${Array.from({ length: 51 }, (_, i) => i).join(', ')}]`]) {
        for (const field of ['followerCount', 'avgEngagementRate']) {
          const { status, body } = await app.graphql(`{ creators(first: 1) { totalCount facets { ${field}(edges: ${edges}) { count } } } }`, {}, key);
          expect(status, `${field} ${edges}`).toBe(200);
          expect(body.errors?.[0].extensions, `${field} ${edges}`).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: `facets.${field}.edges` }] });
          expect(JSON.stringify(body)).not.toMatch(/select|\.ts:|at /i);
        }
      }
      expect(await usage()).toBe(before);
      // Both histograms wrong: both named, each under its facet.
      const both = await app.graphql('{ creators(first: 1) { facets { followerCount(edges: [5, 5]) { count } avgEngagementRate(edges: [3, 2]) { count } } } }', {}, key);
      expect(both.body.errors?.[0].extensions.fields).toEqual([
        { field: 'facets.followerCount.edges', message: 'must be strictly increasing (5 follows 5)' },
        { field: 'facets.avgEngagementRate.edges', message: 'must be strictly increasing (2 follows 3)' },
      ]);
      expect(await usage()).toBe(before);
      // At the bound is fine.
      const fifty = Array.from({ length: 50 }, (_, i) => i * 10);
      const ok = await app.graphql('query($e: [SafeInt!]!) { creators(first: 1) { facets { followerCount(edges: $e) { count } } } }', { e: fifty }, key);
      expect(ok.body.errors).toBeUndefined();
      expect(ok.body.data.creators.facets.followerCount).toHaveLength(51);
    });

    it('refuses edges sent as an explicit null through a nullable variable with a default, naming them, before any charge', async () => {
      const usage = async () => (await app.graphql('{ viewer { quotaUsed } }', {}, key)).body.data.viewer.quotaUsed as number;
      const before = await usage();
      const cases = [
        { query: 'query($e: [SafeInt!] = [1]) { creators(first: 1) { facets { followerCount(edges: $e) { count } } } }', variables: { e: null }, field: 'facets.followerCount.edges' },
        { query: 'query($e: [Float!] = [1]) { creators(first: 1) { facets { avgEngagementRate(edges: $e) { count } } } }', variables: { e: null }, field: 'facets.avgEngagementRate.edges' },
        { query: 'query($x: SafeInt = 1) { creators(first: 1) { facets { followerCount(edges: [0, $x]) { count } } } }', variables: { x: null }, field: 'facets.followerCount.edges.1' },
      ];
      for (const { query, variables, field } of cases) {
        const { body } = await app.graphql(query, variables, key);
        expect(body.errors?.[0].extensions, field).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field }] });
      }
      expect(await usage()).toBe(before);
      // The default still applies when the variable is left out.
      const defaulted = await app.graphql(cases[0].query, {}, key);
      expect(defaulted.body.errors).toBeUndefined();
      expect(defaulted.body.data.creators.facets.followerCount).toHaveLength(2);
    });

    describe('statements', () => {
      // The pipeline's own statements (key, limits, quota) and the feed are not the search's.
      const background = /catalog_changes|pg_current_snapshot|pg_snapshot|quota_leases|"?accounts"?|api_keys|^(start|set) transaction|^(begin|commit|rollback)/i;
      async function statementsOf(query: string) {
        // The key and a quota lease in place, the page's rows cached (kept on their second miss).
        for (let warm = 0; warm < 2; warm++) await app.graphql(query, {}, key);
        app.store.queries.length = 0;
        const { body } = await app.graphql(query, {}, key);
        expect(body.errors).toBeUndefined();
        return app.store.queries.filter((statement) => !background.test(statement));
      }
      const creatorFacets = `facets { country { value count } gender(excludeOwn: true) { value count } verified { value count }
        followerCount(edges: [1000, 100000]) { count } avgEngagementRate(edges: [1, 2]) { count } }`;

      it('reads no row when the index answers: no statement at all for the facets', async () => {
        expect(await statementsOf(`{ creators(filter: { locations: ["US"] }, first: 5) { totalCount nodes { userId } ${creatorFacets} } }`)).toEqual([]);
        expect(await statementsOf(`{ videos(filter: { locations: ["US"] }, first: 5) { totalCount nodes { videoId } facets { videoType { value count } channelCountry(excludeOwn: true) { value count } month { value count } } } }`)).toEqual([]);
        expect(await statementsOf(`{ liveStreams(first: 5) { totalCount nodes { id } facets { game { value label count } language { value count } } } }`)).toEqual([]);
        // Category names for labels: one statement on the taxonomy per connection at most (one
        // batch when both answers arrive together), however many category facets it has.
        const labelled = await statementsOf(`{ creators(first: 5) { facets { category { value label count } other: category(excludeOwn: true) { label } } } videos(first: 5) { facets { category { label } } } }`);
        expect(labelled.length).toBeGreaterThanOrEqual(1);
        expect(labelled.length).toBeLessThanOrEqual(2);
        for (const statement of labelled) expect(statement).toMatch(/from "categories"/);
        expect(await statementsOf(`{ creators(first: 5) { facets { category { value label count } other: category(excludeOwn: true) { label } } } }`)).toHaveLength(1);
      });

      it('runs one GROUP BY statement per facet on the SQL path', async () => {
        app.services.search = null;
        try {
          const without = await statementsOf(`{ creators(filter: { locations: ["US"] }, first: 5) { totalCount nodes { userId } } }`);
          const withFacets = await statementsOf(`{ creators(filter: { locations: ["US"] }, first: 5) { totalCount nodes { userId } ${creatorFacets} } }`);
          const added = withFacets.filter((statement) => !without.includes(statement));
          expect(added).toHaveLength(5);
          for (const statement of added) expect(statement).toMatch(/group by 1/i);
        } finally {
          app.services.search = index;
        }
      });
    });
  });

  it(`creator, video and live-stream facets equal the rows' own tally for ${runs} random filters, index on and off`, { timeout: 600_000 }, async () => {
    const rng = seededRandom(`facets-${thread}`);
    await checkCreators(rng, runs, 'creators');
    await checkVideos(rng, runs, 'videos');
    await checkLiveStreams(rng, Math.ceil(runs / 2), 'live streams');
  });

  it('stay exact after random writes through the change path', { timeout: 600_000 }, async () => {
    const rng = seededRandom(`facet-writes-${thread}`);
    for (let round = 0; round < 2; round++) {
      await randomWrites(rng, round);
      await checkCreators(rng, Math.ceil(runs / 2), `creators after writes ${round}`);
      await checkVideos(rng, Math.ceil(runs / 2), `videos after writes ${round}`);
      await checkLiveStreams(rng, Math.ceil(runs / 4), `live streams after writes ${round}`);
    }
  });
});

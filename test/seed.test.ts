import { Writable } from 'node:stream';
import { sql, type RawBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreEmpty, seedDemo, seedScale } from '../src/cli/seed.js';
import { DEMO_SIZES, demoDataSet } from '../src/demo/data-set.js';
import { DAY_MS, isoInstant } from '../src/demo/random.js';
import { categoryRecord, channelRecord, creatorRecord, liveStreamRecord, videoRecord } from '../src/inputs/records.js';
import { createTestStore, type TestStore } from './support/store.js';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(() => store.close());

function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

async function count(from: RawBuilder<unknown>, where: RawBuilder<unknown> = sql`true`): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`SELECT count(*) AS n FROM ${from} WHERE ${where}`.execute(store.db);
  return Number(rows[0].n);
}

/** md5 of a whole table in key order: equal digests, equal contents. */
async function digest(table: string, key: string): Promise<string> {
  const { rows } = await sql<{ digest: string }>`
    SELECT md5(string_agg(t::text, '|' ORDER BY ${sql.raw(key)})) AS digest FROM ${sql.table(table)} t`.execute(store.db);
  return rows[0].digest;
}

describe('the demo data set', () => {
  const data = demoDataSet();

  it('is the same on every call', () => {
    expect(demoDataSet()).toEqual(data);
  });

  it('has the documented size and a three-level taxonomy', () => {
    expect(data.creators).toHaveLength(DEMO_SIZES.creators);
    expect(data.channels).toHaveLength(DEMO_SIZES.channels);
    expect(data.videos).toHaveLength(DEMO_SIZES.videos);
    expect(data.liveStreams).toHaveLength(DEMO_SIZES.liveStreams);
    const byId = new Map(data.categories.map((category) => [category.id, category]));
    const levelOf = (id: number): number => {
      const parent = byId.get(id)!.parent_id;
      return parent === null ? 1 : levelOf(parent) + 1;
    };
    const perLevel = [1, 2, 3].map((level) => data.categories.filter((category) => levelOf(category.id) === level).length);
    expect(perLevel).toEqual([8, 40, 145]);
  });

  it('is valid import input with unique ids', () => {
    const kinds = [
      [categoryRecord, data.categories, (r: { id: number }) => r.id],
      [creatorRecord, data.creators, (r: { user_id: string }) => r.user_id],
      [channelRecord, data.channels, (r: { channel_id: string }) => r.channel_id],
      [videoRecord, data.videos, (r: { video_id: string }) => r.video_id],
      [liveStreamRecord, data.liveStreams, (r: { id: string }) => r.id],
    ] as const;
    for (const [schema, records, id] of kinds) {
      for (const record of records) expect(schema.safeParse(record).error).toBeUndefined();
      expect(new Set(records.map((record) => id(record as never))).size).toBe(records.length);
    }
    expect(new Set(data.liveStreams.map((stream) => stream.user_login)).size).toBe(data.liveStreams.length);
  });
});

describe('isoInstant', () => {
  it('writes what toISOString writes, at day edges, leap days, odd values and both ends of its range', () => {
    const edges = [0, 1, 999, 1_000, DAY_MS - 1, DAY_MS, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(2000, 1, 29), Date.UTC(2100, 2, 1)];
    const ends = [253_402_300_799_999, 253_402_300_800_000, -1, -DAY_MS - 1, 1.5, Number.MAX_SAFE_INTEGER];
    // Deterministic spread over years 1970..9999: a multiplicative sequence modulo the range.
    const spread = Array.from({ length: 20_000 }, (_, i) => (i * 2_654_435_761_123) % 253_402_300_800_000);
    for (const ms of [...edges, ...ends, ...spread]) {
      const expected = Number.isFinite(new Date(ms).getTime()) ? new Date(ms).toISOString() : 'throws';
      expect(expected === 'throws' ? 'throws' : isoInstant(ms), String(ms)).toBe(expected);
    }
    // Twice for the same day: its prefix comes from the cache.
    expect(isoInstant(Date.UTC(2026, 10, 1, 7, 8, 9, 10))).toBe('2026-11-01T07:08:09.010Z');
    expect(isoInstant(Date.UTC(2026, 10, 1, 23, 0, 0, 5))).toBe('2026-11-01T23:00:00.005Z');
  });
});

describe('seedDemo', () => {
  it('loads the demo set into an empty store', async () => {
    expect(await isStoreEmpty(store.db)).toBe(true);
    const stderr = capture();
    const counts = await seedDemo(store.db, stderr.stream);
    expect(counts).toEqual({ categories: 193, creators: 3_000, channels: 400, videos: 5_000, liveStreams: 300 });
    expect(stderr.text()).toMatch(/^seed: demo data set loaded: 193 categories, 3,000 creators, 400 channels, 5,000 videos, 300 live streams in /);
    expect(await count(sql`categories`)).toBe(193);
    expect(await count(sql`creators`)).toBe(3_000);
    expect(await count(sql`channels`)).toBe(400);
    expect(await count(sql`videos`)).toBe(5_000);
    expect(await count(sql`live_streams`)).toBe(300);
    expect(await isStoreEmpty(store.db)).toBe(false);
  });

  it('changes nothing when loaded again', async () => {
    const tables = [
      ['categories', 'id'],
      ['creators', 'user_id'],
      ['channels', 'channel_id'],
      ['videos', 'video_id'],
      ['live_streams', 'id'],
    ] as const;
    const before = await Promise.all(tables.map(([table, key]) => digest(table, key)));
    await seedDemo(store.db, capture().stream);
    expect(await Promise.all(tables.map(([table, key]) => digest(table, key)))).toEqual(before);
  });

  // Every filter of creator search (contract §4.1, docs/contract/decisions.md §2) keeps some creators and drops others.
  it.each([
    ['query', sql`lower(username) LIKE '%tech%' OR lower(full_name) LIKE '%tech%'`],
    ['category_ids (level 2)', sql`category_ids && (SELECT array_agg(id) FROM categories WHERE id = 101 OR parent_id = 101)`],
    ['category_ids (level 3)', sql`category_ids && '{1001}'::integer[]`],
    ['locations', sql`country = 'JP'`],
    ['languages', sql`language = 'de'`],
    ['follower_count_min', sql`follower_count >= 1000000`],
    ['follower_count_max', sql`follower_count <= 1000`],
    ['create_at_start', sql`last_publish_at >= '2026-10-01T00:00:00Z'`],
    ['create_at_end', sql`last_publish_at < '2026-03-01T00:00:00Z'`],
    ['avg_engagement_rate', sql`avg_engagement_rate BETWEEN 2 AND 5`],
    ['avg_comment_count', sql`avg_comment_count >= 100`],
    ['avg_like_count', sql`avg_like_count >= 1000`],
    ['avg_play_count', sql`avg_view_count >= 10000`],
    ['avg_engagement_count', sql`avg_engagement_count >= 500`],
    ['avg_video_engagement_rate', sql`avg_video_engagement_rate >= 5`],
    ['gender unknown', sql`gender = 0`],
    ['gender male', sql`gender = 1`],
    ['gender female', sql`gender = 2`],
    ['recent_month_publish_count_min', sql`recent_month_publish_count >= 10`],
    ['recent_month_publish_count_max', sql`recent_month_publish_count <= 0`],
    ['has_email', sql`has_email`],
    ['verified', sql`is_verified`],
    ['retweet_ratio_max', sql`retweet_ratio <= 10`],
  ])('covers the creator filter %s', async (_name, where) => {
    const matching = await count(sql`creators`, where);
    expect(matching).toBeGreaterThan(0);
    expect(matching).toBeLessThan(DEMO_SIZES.creators);
  });

  // Video search: the video's own fields, and the channel metrics (docs/contract/decisions.md §2).
  it.each([
    ['query', sql`lower(v.title) LIKE '%tutorial%' OR lower(v.description) LIKE '%tutorial%'`],
    ['categorys', sql`v.category_id = 20`],
    ['create_at range', sql`v.create_at >= '2026-06-01T00:00:00Z' AND v.create_at < '2026-07-01T00:00:00Z'`],
    ['video_type 1', sql`v.video_type = 1`],
    ['video_type 2', sql`v.video_type = 2`],
    ['locations', sql`c.country = 'BR'`],
    ['follower_count', sql`c.follower_count >= 1000000`],
    ['avg_engagement_rate', sql`c.avg_engagement_rate >= 4`],
    ['avg_comment_count', sql`c.avg_comment_count >= 1000`],
    ['avg_like_count', sql`c.avg_like_count >= 10000`],
    ['avg_play_count', sql`c.avg_play_count >= 1000000`],
    ['gender unknown', sql`c.gender = 0`],
    ['gender male', sql`c.gender = 1`],
    ['gender female', sql`c.gender = 2`],
    ['recent_month_publish_count', sql`c.recent_month_publish_count >= 1`],
  ])('covers the video filter %s', async (_name, where) => {
    const matching = await count(sql`videos v JOIN channels c ON c.channel_id = v.channel_id`, where);
    expect(matching).toBeGreaterThan(0);
    expect(matching).toBeLessThan(DEMO_SIZES.videos);
  });

  it.each([
    ['type live', sql`type = 'live'`],
    ['type ""', sql`type = ''`],
    ['language', sql`language = 'es'`],
    ['game_id', sql`game_id = '509658'`],
    ['user_login', sql`lower(user_login) = 'pixelfox'`],
  ])('covers the live-stream filter %s', async (_name, where) => {
    const matching = await count(sql`live_streams`, where);
    expect(matching).toBeGreaterThan(0);
    expect(matching).toBeLessThan(DEMO_SIZES.liveStreams);
  });

  it('has ties in the sort keys and a count past 2^32', async () => {
    const ties = async (table: string, column: string) => {
      const { rows } = await sql<{ n: string | number }>`
        SELECT count(*) AS n FROM (SELECT ${sql.ref(column)} FROM ${sql.table(table)} GROUP BY 1 HAVING count(*) > 1) t`.execute(store.db);
      return Number(rows[0].n);
    };
    expect(await ties('creators', 'follower_count')).toBeGreaterThan(5);
    expect(await ties('live_streams', 'viewer_count')).toBeGreaterThan(5);
    expect(await ties('videos', 'play_count')).toBeGreaterThan(5);
    const { rows } = await sql<{ play_count: string | number }>`SELECT play_count FROM videos ORDER BY play_count DESC LIMIT 1`.execute(store.db);
    expect(String(rows[0].play_count)).toBe('15000000000');
    // last_publish_at spreads over 2026: every month has some.
    const { rows: months } = await sql<{ month: number }>`
      SELECT DISTINCT extract(month FROM last_publish_at AT TIME ZONE 'UTC')::int AS month FROM creators
      WHERE last_publish_at >= '2026-01-01T00:00:00Z' ORDER BY 1`.execute(store.db);
    expect(months.map((row) => row.month)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe('seedScale', () => {
  it('adds the requested rows, and only the missing ones on a second run', async () => {
    const counts = { creators: 2_500, videos: 1_200, channels: 30, live: 150 };
    const stderr = capture();
    expect(await seedScale(store, counts, stderr.stream)).toEqual(counts);
    expect(stderr.text()).toContain('seed: creators 2,500 / 2,500 (');
    expect(await count(sql`creators`)).toBe(3_000 + 2_500);
    expect(await count(sql`videos`)).toBe(5_000 + 1_200);
    expect(await count(sql`channels`)).toBe(400 + 30);
    expect(await count(sql`live_streams`)).toBe(300 + 150);
    // Values survive the bulk path: arrays, JSON and 64-bit counts.
    const creator = await store.db.selectFrom('creators').selectAll().where('user_id', '=', '9000000000000').executeTakeFirstOrThrow();
    expect(creator.category_ids.length).toBeGreaterThan(0);
    expect(creator.last_post === null || typeof creator.last_post.post_id === 'string').toBe(true);

    const again = await seedScale(store, { ...counts, creators: 2_600 }, capture().stream);
    expect(again).toEqual({ creators: 100, videos: 0, channels: 0, live: 0 });
  });

  it('needs a channel for videos', async () => {
    await expect(seedScale(store, { creators: 0, videos: 10, channels: 0, live: 0 }, capture().stream)).rejects.toThrow(
      'videos need at least one channel',
    );
  });
});

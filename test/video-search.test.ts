import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.js';
import { channels, loadCatalog, videos } from './support/catalog.js';

const PATH = '/api/v1/search/youtube/video';
let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
  await loadCatalog(app.store.db);
});
afterAll(() => app?.close());

type SeedVideo = (typeof videos)[number];
const channelOf = (v: SeedVideo) => channels.find((c) => c.channel_id === v.channel_id)!;
const bytewiseDesc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
const newest = (a: SeedVideo, b: SeedVideo) => b.create_at.getTime() - a.create_at.getTime() || bytewiseDesc(a.video_id, b.video_id);
const expected = (predicate: (v: SeedVideo) => boolean) => videos.filter(predicate).sort(newest).map((v) => v.video_id);

async function search(body: Record<string, unknown>) {
  const response = await app.rest(PATH, { body: { page_size: 100, ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

describe('video search over REST', () => {
  it('answers every contract field, with the channel and 64-bit play counts', async () => {
    const body = await search({ query: 'Video 3 ' });
    expect(body.data.total).toBe(1);
    const item = body.data.items[0];
    expect(item).toMatchObject({
      video_id: 'v003',
      title: 'Video 3 about gamma_ray',
      duration: 'PT1M51S',
      video_type: 'short',
      category_id: 20,
      play_count: 15_000_000_000,
      like_count: 30,
      comment_count: 3,
      engagement_rate: '2.25',
      create_at: '2026-01-02T08:00:00.000Z',
      channel_id: 'ch3',
      channel_title: 'Channel 3',
      channel_avatar: 'https://img.example/ch3.jpg',
      channel_follower_count: 40_000,
      channel: {
        channel_id: 'ch3',
        title: 'Channel 3',
        avatar: 'https://img.example/ch3.jpg',
        country: 'JP',
        gender: 'unknown',
        follower_count: 40_000,
        avg_engagement_rate: '4.50',
        avg_play_count: '3000.00',
        video_count: 8,
        evaluation_min: '503.00',
        evaluation_max: '903.00',
      },
    });
    expect(Object.keys(item).sort()).toEqual(
      [
        'video_id', 'title', 'description', 'cover_url', 'create_at', 'duration', 'video_url', 'channel_title',
        'channel_id', 'channel_avatar', 'channel_follower_count', 'video_type', 'category_id', 'like_count',
        'comment_count', 'play_count', 'engagement_rate', 'channel', 'last_update_at',
      ].sort(),
    );
  });

  it('orders newest first by default and pages through ties without overlap or gap', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const body = await search({ page, page_size: 8 });
      expect(body.data).toMatchObject({ total: 30, total_pages: 4, page, page_size: 8 });
      seen.push(...body.data.items.map((v: { video_id: string }) => v.video_id));
    }
    expect(seen).toEqual(expected(() => true));
  });

  const filters: [string, Record<string, unknown>, (v: SeedVideo) => boolean][] = [
    ['query on title or description, % literal', { query: '50%' }, (v) => `${v.description}`.includes('50%')],
    ['categorys', { categorys: [100, 20] }, (v) => [100, 20].includes(Number(v.category_id))],
    ["locations on the channel's country", { locations: ['jp'] }, (v) => channelOf(v).country === 'JP'],
    ['follower_count on the channel', { follower_count_min: 30_000, follower_count_max: 50_000 }, (v) => Number(channelOf(v).follower_count) >= 30_000 && Number(channelOf(v).follower_count) <= 50_000],
    ['create_at range on the video', { create_at_start: '2026-01-05', create_at_end: '2026-01-08' }, (v) => v.create_at >= new Date('2026-01-05') && v.create_at < new Date('2026-01-09')],
    ['avg_engagement_rate on the channel', { avg_engagement_rate_min: 3 }, (v) => Number(channelOf(v).avg_engagement_rate) >= 3],
    ['avg_comment_count on the channel', { avg_comment_count_max: 10 }, (v) => Number(channelOf(v).avg_comment_count) <= 10],
    ['avg_like_count on the channel', { avg_like_count_min: 100 }, (v) => Number(channelOf(v).avg_like_count) >= 100],
    ['avg_play_count on the channel', { avg_play_count_min: 1000, avg_play_count_max: 2000 }, (v) => Number(channelOf(v).avg_play_count) >= 1000 && Number(channelOf(v).avg_play_count) <= 2000],
    ['gender on the channel', { gender: 1 }, (v) => channelOf(v).gender === 1],
    ['recent_month_publish_count on the channel', { recent_month_publish_count_min: 6 }, (v) => Number(channelOf(v).recent_month_publish_count) >= 6],
    ['video_type 2 = short', { video_type: 2 }, (v) => v.video_type === 2],
    ['video_type 1 = video', { video_type: 1 }, (v) => v.video_type === 1],
  ];

  it.each(filters)('filters by %s with an exact total and order', async (_name, body, predicate) => {
    const want = expected(predicate);
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(30);
    const answer = await search(body);
    expect(answer.data.total).toBe(want.length);
    if (!('query' in body)) expect(answer.data.items.map((v: { video_id: string }) => v.video_id)).toEqual(want);
    else expect(answer.data.items.map((v: { video_id: string }) => v.video_id).sort()).toEqual([...want].sort());
  });

  it('ranks by relevance with a query: exact title, title prefix, title match, description-only; then plays', async () => {
    const rank = (v: SeedVideo, q: string) => {
      const title = `${v.title}`.toLowerCase();
      return title === q ? 3 : title.startsWith(q) ? 2 : title.includes(q) ? 1 : 0;
    };
    for (const q of ['alpha', 'alpha guide 4']) {
      const want = videos
        .filter((v) => `${v.title} ${v.description}`.toLowerCase().includes(q))
        .sort((a, b) => rank(b, q) - rank(a, q) || b.play_count - a.play_count || bytewiseDesc(a.video_id, b.video_id))
        .map((v) => v.video_id);
      // The fixture must hold every kind of match for the order to mean something.
      if (q === 'alpha') expect(new Set(videos.filter((v) => want.includes(v.video_id)).map((v) => rank(v, q)))).toEqual(new Set([2, 1, 0]));
      const answer = await search({ query: q });
      expect(answer.data.items.map((v: { video_id: string }) => v.video_id)).toEqual(want);
    }
  });

  it('bounds by instants finer than a millisecond: a start past a row by 0.1 ms leaves it out', async () => {
    const at = Date.UTC(2026, 0, 2, 8);
    const after = (body: Record<string, unknown>) => search(body).then((b) => b.data.items.map((v: { video_id: string }) => v.video_id));
    expect(await after({ create_at_start: '2026-01-02T08:00:00.0001Z' })).toEqual(expected((v) => v.create_at.getTime() > at));
    expect(await after({ create_at_start: '2026-01-02T10:00:00.0000001+02:00' })).toEqual(expected((v) => v.create_at.getTime() > at));
    expect(await after({ create_at_start: '2026-01-02T08:00:00.000Z' })).toEqual(expected((v) => v.create_at.getTime() >= at));
    expect(await after({ create_at_end: '2026-01-02T08:00:00.0009Z' })).toEqual(expected((v) => v.create_at.getTime() <= at));
    // One instant as both bounds is a range, empty here; a start after its end by 0.1 ms is inverted.
    expect(await after({ create_at_start: '2026-01-02T08:00:00.0001Z', create_at_end: '2026-01-02T08:00:00.0001Z' })).toEqual([]);
    const inverted = await app.rest(PATH, { body: { create_at_start: '2026-01-02T08:00:00.0002Z', create_at_end: '2026-01-02T08:00:00.0001Z' } });
    expect(inverted.status).toBe(400);
    expect(inverted.body.errors).toEqual([{ field: 'create_at_start', message: 'must not be after create_at_end' }]);
  });

  it('rejects bad input with 400 naming the field', async () => {
    for (const [body, field] of [
      [{ categories: [100] }, 'categories'],
      [{ categorys: 100 }, 'categorys'],
      [{ video_type: 3 }, 'video_type'],
      [{ sort_by: 'relevance' }, 'sort_by'],
      [{ create_at_end: 'yesterday' }, 'create_at_end'],
    ] as const) {
      const response = await app.rest(PATH, { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });
});

describe('videos over GraphQL', () => {
  it('resolves the channels of a page in one batched query, never one per video', async () => {
    app.store.queries.length = 0;
    const { body } = await app.graphql('{ videos(first: 30) { nodes { videoId channelTitle channel { title followerCount } } } }');
    expect(body.errors).toBeUndefined();
    expect(body.data.videos.nodes).toHaveLength(30);
    const channelQueries = app.store.queries.filter((q) => /from "channels"/.test(q));
    expect(channelQueries).toHaveLength(1);
  });

  it('agrees with REST on totalCount and ids, and walks cursors through the whole set', async () => {
    const rest = await search({ video_type: 1 });
    const ids: string[] = [];
    let after: string | null = null;
    let total = -1;
    for (;;) {
      const { body } = await app.graphql(
        'query($after: String) { videos(filter: {videoType: VIDEO}, first: 4, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { videoId } } }',
        { after },
      );
      total = body.data.videos.totalCount;
      ids.push(...body.data.videos.nodes.map((n: { videoId: string }) => n.videoId));
      if (!body.data.videos.pageInfo.hasNextPage) break;
      after = body.data.videos.pageInfo.endCursor;
    }
    expect(total).toBe(rest.data.total);
    expect(ids).toEqual(rest.data.items.map((v: { video_id: string }) => v.video_id));
  });
});

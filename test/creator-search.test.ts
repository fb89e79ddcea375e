import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.js';
import { creators, loadCatalog, type SeedCreator } from './support/catalog.js';

const PATH = '/api/v1/search/twitter/user';
let app: TestApp;

beforeAll(async () => {
  app = await createTestApp();
  await loadCatalog(app.store.db);
});
afterAll(() => app?.close());

// The expected order: descending by the sort key, then by user_id (bytewise), as docs/contract/decisions.md §2 says.
const byDesc = (key: (c: SeedCreator) => number) => (a: SeedCreator, b: SeedCreator) =>
  key(b) - key(a) || (a.user_id < b.user_id ? 1 : a.user_id > b.user_id ? -1 : 0);
const byFollowers = byDesc((c) => c.follower_count);
const ids = (list: SeedCreator[]) => list.map((c) => c.user_id);
const expected = (predicate: (c: SeedCreator) => boolean, order = byFollowers) => ids(creators.filter(predicate).sort(order));

async function search(body: Record<string, unknown>) {
  const response = await app.rest(PATH, { body: { page_size: 100, ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

describe('creator search over REST', () => {
  it('answers the envelope with a paged result and every contract field', async () => {
    const body = await search({ page_size: 3 });
    expect(body).toMatchObject({ success: true, code: 200, message: 'success' });
    expect(body.data).toMatchObject({ total: 40, page: 1, page_size: 3, total_pages: 14 });
    const item = body.data.items[0];
    expect(Object.keys(item).sort()).toEqual(
      [
        'user_id', 'username', 'full_name', 'avatar', 'country', 'gender', 'follower_count', 'is_verified',
        'avg_engagement_rate', 'avg_video_engagement_rate', 'avg_comment_count', 'avg_like_count',
        'avg_retweet_count', 'avg_view_count', 'retweet_ratio', 'reply_ratio', 'post_count', 'video_count',
        'last_publish_at', 'recent_month_publish_count', 'recent_week_publish_count', 'last_post',
        'evaluation_min', 'evaluation_max', 'last_update_at',
      ].sort(),
    );
  });

  it('returns a 15,000,000,000 follower count as that exact JSON integer, metrics as two-decimal strings', async () => {
    const body = await search({ page_size: 1 });
    const top = body.data.items[0];
    expect(top.user_id).toBe('u007');
    expect(top.follower_count).toBe(15_000_000_000);
    const seeded = creators[7];
    expect(top.avg_engagement_rate).toBe(seeded.avg_engagement_rate.toFixed(2));
    expect(top.avg_like_count).toBe(Number(seeded.avg_like_count).toFixed(2));
    expect(top.gender).toBe(['unknown', 'male', 'female'][Number(seeded.gender)]);
    expect(top.last_publish_at).toBe((seeded.last_publish_at as Date).toISOString());
    expect(top.last_update_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(top.last_post).toBeNull();
    const withPost = (await search({ query: 'Person 8' })).data.items[0];
    expect(withPost.last_post).toEqual({
      post_id: 'p8',
      description: 'post 8',
      create_at: new Date(Date.UTC(2026, 8, 9, 12)).toISOString(),
      cover_url: 'https://img.example/p8.jpg',
      like_count: 24,
      comment_count: 8,
      retweet_count: 16,
      view_count: 8000,
    });
  });

  it('page 2 neither repeats nor skips rows with equal follower counts, across every page', async () => {
    const seen: string[] = [];
    for (let page = 1; page <= 6; page++) {
      const body = await search({ page, page_size: 7 });
      expect(body.data.total).toBe(40);
      expect(body.data.total_pages).toBe(6);
      seen.push(...body.data.items.map((c: { user_id: string }) => c.user_id));
    }
    expect(seen).toEqual(expected(() => true));
    const past = await search({ page: 7, page_size: 7 });
    expect(past.data).toMatchObject({ items: [], total: 40, page: 7 });
  });

  const lastPublish = (c: SeedCreator) => (c.last_publish_at as Date).getTime();
  const filters: [string, Record<string, unknown>, (c: SeedCreator) => boolean][] = [
    ['query (case-insensitive, username or full name)', { query: 'ALPHA' }, (c) => /alpha/i.test(`${c.username}`) || /alpha/i.test(`${c.full_name}`)],
    ['query with % taken literally', { query: '100%' }, (c) => `${c.username} ${c.full_name}`.includes('100%')],
    ['query with _ taken literally', { query: 'x_y' }, (c) => `${c.username}`.includes('x_y') || `${c.full_name}`.includes('x_y')],
    ['category_ids: level-3 id', { category_ids: [101] }, (c) => (c.category_ids ?? []).includes(101)],
    ['category_ids: level-2 id covers its children', { category_ids: [10] }, (c) => (c.category_ids ?? []).some((id) => [100, 101].includes(id))],
    ['category_ids: mixed levels as a union', { category_ids: [11, 20] }, (c) => (c.category_ids ?? []).some((id) => [110, 20].includes(id))],
    ['locations (case-insensitive)', { locations: ['us', 'DE'] }, (c) => ['US', 'DE'].includes(`${c.country}`)],
    ['languages', { languages: ['JA'] }, (c) => c.language === 'ja'],
    ['follower_count bounds (inclusive)', { follower_count_min: 1000, follower_count_max: 3000 }, (c) => c.follower_count >= 1000 && c.follower_count <= 3000],
    ['create_at range on last publish, end date inclusive', { create_at_start: '2026-03-01', create_at_end: '2026-05-31' }, (c) => lastPublish(c) >= Date.UTC(2026, 2, 1) && lastPublish(c) < Date.UTC(2026, 5, 1)],
    ['create_at date-time with an offset', { create_at_start: '2026-12-01T14:00:00+02:00' }, (c) => lastPublish(c) >= Date.UTC(2026, 11, 1, 12)],
    ['avg_engagement_rate bounds', { avg_engagement_rate_min: 2.5, avg_engagement_rate_max: 5 }, (c) => c.avg_engagement_rate >= 2.5 && c.avg_engagement_rate <= 5],
    ['avg_comment_count bounds', { avg_comment_count_min: 4.5 }, (c) => Number(c.avg_comment_count) >= 4.5],
    ['avg_like_count bounds', { avg_like_count_max: 21 }, (c) => Number(c.avg_like_count) <= 21],
    ['avg_play_count bounds the average views', { avg_play_count_min: 300, avg_play_count_max: 500 }, (c) => Number(c.avg_view_count) >= 300 && Number(c.avg_view_count) <= 500],
    ['gender', { gender: 2 }, (c) => c.gender === 2],
    ['gender 0 (unknown) filters too', { gender: 0 }, (c) => c.gender === 0],
    ['recent_month_publish_count bounds', { recent_month_publish_count_min: 3, recent_month_publish_count_max: 6 }, (c) => Number(c.recent_month_publish_count) >= 3 && Number(c.recent_month_publish_count) <= 6],
    ['has_email: 1', { has_email: 1 }, (c) => c.has_email === true],
    ['has_email: 0 does not filter', { has_email: 0 }, () => true],
    ['avg_engagement_count = likes + comments + reposts', { avg_engagement_count_min: 30 }, (c) => Number(c.avg_like_count) + Number(c.avg_comment_count) + Number(c.avg_retweet_count) >= 30],
    ['avg_video_engagement_rate bounds', { avg_video_engagement_rate_min: 1.5 }, (c) => Number(c.avg_video_engagement_rate) >= 1.5],
    ['verified: 1', { verified: 1 }, (c) => c.is_verified === true],
    ['retweet_ratio_max (percent)', { retweet_ratio_max: 20 }, (c) => Number(c.retweet_ratio) <= 20],
    ['several filters at once', { locations: ['US'], verified: 0, follower_count_min: 1 }, (c) => c.country === 'US' && c.follower_count >= 1],
    ['null for not given, paging fields too', { locations: ['US'], query: null, page: null, page_size: null, follower_count_max: null }, (c) => c.country === 'US'],
  ];

  it.each(filters)('filters by %s with an exact total and order', async (_name, body, predicate) => {
    const want = expected(predicate);
    expect(want.length, 'the fixture must make this filter select something').toBeGreaterThan(0);
    if (!('has_email' in body && body.has_email === 0)) expect(want.length).toBeLessThan(40);
    const answer = await search({ ...body, sort_by: 'follower_count' });
    expect(answer.data.total).toBe(want.length);
    expect(answer.data.items.map((c: { user_id: string }) => c.user_id)).toEqual(want);
  });

  it('sorts by engagement_rate descending with user_id as the tie-break', async () => {
    const answer = await search({ sort_by: 'engagement_rate' });
    expect(answer.data.items.map((c: { user_id: string }) => c.user_id)).toEqual(expected(() => true, byDesc((c) => c.avg_engagement_rate)));
  });

  // the relevance we define (docs/decisions.md): exact username, username prefix, full-name
  // prefix, any other match; then followers, then user_id, all descending.
  const rankFor = (query: string) => (c: SeedCreator) => {
    const q = query.toLowerCase();
    const username = `${c.username}`.toLowerCase();
    if (username === q) return 3;
    if (username.startsWith(q)) return 2;
    return `${c.full_name}`.toLowerCase().startsWith(q) ? 1 : 0;
  };
  const relevance = (query: string) => {
    const rank = rankFor(query);
    return (a: SeedCreator, b: SeedCreator) => rank(b) - rank(a) || byFollowers(a, b);
  };
  const matches = (query: string) => (c: SeedCreator) => `${c.username} ${c.full_name}`.toLowerCase().includes(query.toLowerCase());

  it.each(['alpha', 'ALPHABET1', 'alpha16', 'the', 'person 1'])(
    'sorts by relevance by default with a query (%s): exact username, prefixes, then other matches',
    async (query) => {
      const want = expected(matches(query), relevance(query));
      expect(want.length).toBeGreaterThan(0);
      if (query === 'alpha') {
        // The fixture must hold every tier below an exact match for the order to mean something.
        expect(new Set(creators.filter(matches(query)).map(rankFor(query)))).toEqual(new Set([2, 1, 0]));
      }
      const answer = await search({ query });
      expect(answer.data.items.map((c: { user_id: string }) => c.user_id)).toEqual(want);
    },
  );
});

describe('creator search: bad requests and wrong routes', () => {
  const bad: [string, unknown, string][] = [
    ['a string where a number is documented', { follower_count_min: '10' }, 'follower_count_min'],
    ['a scalar where an array is documented', { locations: 'US' }, 'locations'],
    ['an unknown field', { categories: [100] }, 'categories'],
    ['a camelCase name', { followerCountMin: 1 }, 'followerCountMin'],
    ['a bad date', { create_at_start: '31/01/2026' }, 'create_at_start'],
    ['a date-time without an offset', { create_at_start: '2026-01-31T08:00:00' }, 'create_at_start'],
    ['an impossible date', { create_at_end: '2026-02-30' }, 'create_at_end'],
    ['start after end', { create_at_start: '2026-03-01', create_at_end: '2026-02-01' }, 'create_at_start'],
    ['min above max', { follower_count_min: 10, follower_count_max: 5 }, 'follower_count_min'],
    ['a negative bound', { avg_like_count_min: -1 }, 'avg_like_count_min'],
    ['a level-1 category', { category_ids: [1] }, 'category_ids'],
    ['an unknown category', { category_ids: [999] }, 'category_ids'],
    ['more than 100 categories', { category_ids: Array.from({ length: 101 }, (_, i) => 100 + (i % 2)) }, 'category_ids'],
    ['gender 3', { gender: 3 }, 'gender'],
    ['verified: true', { verified: true }, 'verified'],
    ['has_email: 2', { has_email: 2 }, 'has_email'],
    ['a three-letter country', { locations: ['USA'] }, 'locations'],
    ['an unknown sort', { sort_by: 'newest' }, 'sort_by'],
    ['page 0', { page: 0 }, 'page'],
    ['page_size 101', { page_size: 101 }, 'page_size'],
    ['a fractional page', { page: 1.5 }, 'page'],
    ['a window past 10,000 results', { page: 101, page_size: 100 }, 'page'],
    ['a NUL character, which PostgreSQL text cannot hold', { query: 'a\u0000b' }, 'query'],
    ['a query over 200 characters', { query: 'x'.repeat(201) }, 'query'],
  ];

  it.each(bad)('rejects %s with 400 naming the field', async (_name, body, field) => {
    const response = await app.rest(PATH, { body });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 400, message: 'Bad Request' });
    expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('names a field once, and the other field of a range in REST names too', async () => {
    for (const [body, field, message] of [
      [{ create_at_start: '2026-03-01', create_at_end: '2026-02-01' }, 'create_at_start', 'must not be after create_at_end'],
      [{ avg_play_count_min: 10, avg_play_count_max: 5 }, 'avg_play_count_min', 'must not be greater than avg_play_count_max'],
      // Past both the integer and the bound check: one error, not two for one field.
      [{ follower_count_min: 1e308 }, 'follower_count_min', 'Too big: expected int to be <=9007199254740991'],
    ] as const) {
      const response = await app.rest(PATH, { body });
      expect(response.body.errors).toEqual([{ field, message }]);
    }
  });

  it('rejects malformed JSON, a non-object body and a wrong content type with 400', async () => {
    expect((await app.rest(PATH, { body: '{"page": ' })).status).toBe(400);
    expect((await app.rest(PATH, { body: '[1]' })).status).toBe(400);
    const wrongType = await app.rest(PATH, { body: '{}', headers: { 'content-type': 'text/plain' } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body).toMatchObject({ success: false, code: 400, message: 'Bad Request' });
  });

  it('treats an empty body as {} and accepts a charset parameter', async () => {
    const response = await app.rest(PATH, { body: '', headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(response.status).toBe(200);
    expect(response.body.data.total).toBe(40);
  });

  it('answers 404 in the envelope for other platforms, unknown paths and wrong methods', async () => {
    for (const [path, method] of [
      ['/api/v1/search/instagram/user', 'POST'],
      ['/api/v1/search/twitter/users', 'POST'],
      ['/api/v2/search/twitter/user', 'POST'],
      [PATH, 'GET'],
      ['/api/v1/search/youtube/video', 'PUT'],
      ['/nowhere', 'GET'],
      ['/healthz', 'POST'],
      ['/readyz', 'DELETE'],
      ['/healthz', 'OPTIONS'],
      ['/readyz', 'PUT'],
    ]) {
      const response = await app.rest(path, { method, body: method === 'GET' ? undefined : {} });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body).toMatchObject({ success: false, code: 404 });
    }
    for (const path of ['/healthz', '/readyz']) expect((await app.rest(path, { method: 'GET', key: null })).status, path).toBe(200);
  });
});

describe('creators over GraphQL', () => {
  const query = `query($filter: CreatorFilter, $sortBy: CreatorSort, $first: Int, $after: String, $last: Int, $before: String) {
    creators(filter: $filter, sortBy: $sortBy, first: $first, after: $after, last: $last, before: $before) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges { cursor node { userId } }
      nodes { userId followerCount gender }
    }
  }`;

  it('agrees with REST on totalCount and node ids for the same filters', async () => {
    const rest = await search({ locations: ['US', 'GB'], gender: 1, follower_count_min: 1000 });
    const gql = await app.graphql(query, { filter: { locations: ['US', 'GB'], gender: 'MALE', followerCountMin: 1000 }, first: 100 });
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.creators.totalCount).toBe(rest.data.total);
    expect(gql.body.data.creators.nodes.map((n: { userId: string }) => n.userId)).toEqual(rest.data.items.map((c: { user_id: string }) => c.user_id));
  });

  it('walks a whole filtered set with cursors forwards and backwards, ties included', async () => {
    const filter = { followerCountMax: 3000 };
    const want = expected((c) => c.follower_count <= 3000);
    const forward: string[] = [];
    let after: string | null = null;
    for (;;) {
      const { body } = await app.graphql(query, { filter, first: 5, after });
      const page = body.data.creators;
      forward.push(...page.nodes.map((n: { userId: string }) => n.userId));
      expect(page.edges.map((e: { node: { userId: string } }) => e.node.userId)).toEqual(page.nodes.map((n: { userId: string }) => n.userId));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(forward).toEqual(want);

    const backward: string[] = [];
    let before: string | null = null;
    for (;;) {
      const { body } = await app.graphql(query, { filter, last: 5, before });
      const page = body.data.creators;
      backward.unshift(...page.nodes.map((n: { userId: string }) => n.userId));
      if (!page.pageInfo.hasPreviousPage) break;
      before = page.pageInfo.startCursor;
    }
    expect(backward).toEqual(want);
  });

  it('rejects a cursor it did not issue, and one from another order, with BAD_REQUEST', async () => {
    const forged = await app.graphql(query, { first: 5, after: 'not-a-cursor' });
    expect(forged.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    const { body } = await app.graphql(query, { first: 5 });
    const other = await app.graphql(query, { first: 5, sortBy: 'ENGAGEMENT_RATE', after: body.data.creators.pageInfo.endCursor });
    expect(other.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    // Right shape, wrong value types: still a 400 naming the argument, never a 500 from SQL.
    const handMade = Buffer.from(JSON.stringify(['c:followers', 'abc', 'u001'])).toString('base64url');
    const forgedValues = await app.graphql(query, { first: 5, after: handMade });
    expect(forgedValues.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'after' }] });
  });

  it('validates through zod with BAD_REQUEST and the field path', async () => {
    const { status, body } = await app.graphql(query, { filter: { followerCountMin: 10, followerCountMax: 1 }, first: 5 });
    expect(status).toBe(200);
    expect(body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(body.errors[0].extensions.fields[0].field).toBe('filter.followerCountMin');
    const tooMany = await app.graphql(query, { first: 101 });
    expect(tooMany.body.errors[0].extensions.fields[0].field).toBe('first');
  });

  it('does not count when totalCount is not selected', async () => {
    app.store.queries.length = 0;
    await app.graphql('{ creators(first: 3) { nodes { userId } } }');
    expect(app.store.queries.filter((q) => q.includes('count(*)'))).toHaveLength(0);
    await app.graphql('{ creators(first: 3) { totalCount } }');
    expect(app.store.queries.filter((q) => q.includes('count(*)'))).toHaveLength(1);
  });
});

// The raw-SQL floor of `npm run bench`: what a hand-written endpoint costs. node:http + `pg`, one
// plain page statement (and one plain count(*) when a total is asked, run alongside it, as the
// service runs its count), rows sent as they come. No validation, no keys, no GraphQL.
//
// The SQL is written here on purpose rather than imported from src/store: the floor is also the
// independent oracle the bench's equivalence check compares the service against.
//
// Env: DATABASE_URL, PORT (0 = any free port), HOST, POOL_SIZE (default 10, the service's own).
// POST /creators | /videos | /live | /videoChannels | /creatorFacets | /nodes with a FloorRequest;
// prints "listening on <url>" when ready.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { dayBounds, expandCategoryIds, GENDER_CODES, VIDEO_TYPE_CODES, type Category, type CreatorFilter, type CreatorSort, type LiveFilter, type NodeType, type VideoFilter } from './specs.js';

export type FloorRequest =
  | { kind: 'creators'; filter: CreatorFilter; sort: CreatorSort; pageSize: number; page?: number; after?: string | null; total: boolean }
  | { kind: 'videos'; filter: VideoFilter; pageSize: number; page: number; total: boolean; relevance?: boolean }
  | { kind: 'live'; filter: LiveFilter; pageSize: number; after?: string | null }
  | { kind: 'videoChannels'; filter: VideoFilter; pageSize: number; nestedFirst: number }
  | { kind: 'creatorFacets'; filter: CreatorFilter; sort: CreatorSort; pageSize: number; edges: number[] }
  | { kind: 'nodes'; keys: Record<NodeType, string[]> };

export interface FloorResponse {
  items: Record<string, unknown>[];
  total?: number;
  /** Keyset pages: the cursor of the next page, null at the end. */
  next?: string | null;
  /** creatorFacets: grouped counts (gender as its code) and the histogram's bucket counts in order. */
  facets?: { country: { value: string; count: number }[]; gender: { value: number; count: number }[]; followers: number[] };
  /** nodes: the keys found, by type. */
  found?: Record<NodeType, string[]>;
}

/** A WHERE clause under construction: conditions joined by AND, values bound as $1, $2, … */
class Where {
  readonly conditions: string[] = [];
  readonly values: unknown[] = [];

  bind(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  add(condition: string): void {
    this.conditions.push(condition);
  }

  copy(): Where {
    const copy = new Where();
    copy.conditions.push(...this.conditions);
    copy.values.push(...this.values);
    return copy;
  }

  sql(): string {
    return this.conditions.length ? `WHERE ${this.conditions.join(' AND ')}` : '';
  }
}

/** Text for LIKE over lower(column), with `%`, `_` and `\` taken literally: `%text%`, `text%`. */
const likeText = (text: string) => text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
const containsPattern = (text: string) => `%${likeText(text)}%`;
const prefixPattern = (text: string) => `${likeText(text)}%`;

function addBounds(where: Where, column: string, min: number | undefined, max: number | undefined): void {
  if (min != null) where.add(`${column} >= ${where.bind(min)}`);
  if (max != null) where.add(`${column} <= ${where.bind(max)}`);
}

function addDays(where: Where, column: string, start: string | undefined, end: string | undefined): void {
  const { from, before } = dayBounds(start, end);
  if (from) where.add(`${column} >= ${where.bind(from)}`);
  if (before) where.add(`${column} < ${where.bind(before)}`);
}

function creatorWhere(filter: CreatorFilter, taxonomy: readonly Category[]): Where {
  const where = new Where();
  where.add(`platform = 'twitter'`);
  if (filter.query) {
    const pattern = where.bind(containsPattern(filter.query));
    where.add(`(lower(username) LIKE ${pattern} OR lower(full_name) LIKE ${pattern})`);
  }
  if (filter.categoryIds?.length) where.add(`category_ids && ${where.bind(expandCategoryIds(filter.categoryIds, taxonomy))}::integer[]`);
  if (filter.locations?.length) where.add(`country = ANY(${where.bind(filter.locations.map((c) => c.toUpperCase()))})`);
  if (filter.languages?.length) where.add(`language = ANY(${where.bind(filter.languages.map((c) => c.toLowerCase()))})`);
  addBounds(where, 'follower_count', filter.followerCountMin, filter.followerCountMax);
  addBounds(where, 'avg_engagement_rate', filter.avgEngagementRateMin, filter.avgEngagementRateMax);
  addBounds(where, 'recent_month_publish_count', filter.recentMonthPublishCountMin, undefined);
  addDays(where, 'last_publish_at', filter.createAtStart, filter.createAtEnd);
  if (filter.gender) where.add(`gender = ${where.bind(GENDER_CODES[filter.gender])}`);
  if (filter.verified) where.add('is_verified');
  if (filter.hasEmail) where.add('has_email');
  return where;
}

const CREATOR_COLUMNS = `user_id, username, full_name, avatar, country, gender, follower_count, is_verified,
  avg_engagement_rate, avg_video_engagement_rate, avg_comment_count, avg_like_count, avg_retweet_count, avg_view_count,
  retweet_ratio, reply_ratio, post_count, video_count, last_publish_at, recent_month_publish_count, recent_week_publish_count,
  last_post, evaluation_min, evaluation_max, last_update_at`;

const CREATOR_SORT_COLUMN: Record<CreatorSort, string> = { FOLLOWER_COUNT: 'follower_count', ENGAGEMENT_RATE: 'avg_engagement_rate' };

const encodeCursor = (values: unknown[]) => Buffer.from(JSON.stringify(values)).toString('base64url');
const decodeCursor = (cursor: string) => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];

/**
 * Offset page:  SELECT … WHERE <filter> ORDER BY <key> DESC, <id> DESC LIMIT n OFFSET m
 * Keyset page:  SELECT … WHERE <filter> AND (<key>, <id>) < ($k, $id) ORDER BY <key> DESC, <id> DESC LIMIT n + 1
 * Total:        SELECT count(*) FROM … WHERE <filter>
 */
async function page(
  pool: pg.Pool,
  /** `ranks`: ORDER BY these (each descending, their values bound in the page's statement) before `key`, for offset pages only. */
  statement: { select: string; from: string; countFrom: string; key: string; id: string; where: Where; ranks?: (page: Where) => string[] },
  paging: { pageSize: number; page?: number; after?: string | null; total: boolean },
): Promise<FloorResponse> {
  const { where, key, id } = statement;
  const keyset = paging.page === undefined;
  const count = paging.total ? pool.query(`SELECT count(*)::int AS total FROM ${statement.countFrom} ${where.sql()}`, where.values) : null;
  count?.catch(() => {});
  const pageWhere = where.copy();
  if (keyset && paging.after) {
    const [k, i] = decodeCursor(paging.after);
    pageWhere.add(`(${key}, ${id}) < (${pageWhere.bind(k)}, ${pageWhere.bind(i)})`);
  }
  const limit = keyset ? paging.pageSize + 1 : paging.pageSize;
  const offset = keyset ? 0 : (paging.page! - 1) * paging.pageSize;
  const rows = await pool.query(
    `SELECT ${statement.select}, ${key} AS __key FROM ${statement.from} ${pageWhere.sql()}
     ORDER BY ${[...(statement.ranks?.(pageWhere) ?? []), key, id].map((column) => `${column} DESC`).join(', ')} LIMIT ${limit} OFFSET ${offset}`,
    pageWhere.values,
  );
  const items = rows.rows.slice(0, paging.pageSize) as Record<string, unknown>[];
  const response: FloorResponse = { items };
  if (keyset) {
    const last = items.at(-1);
    const idColumn = id.split('.').at(-1)!;
    response.next = rows.rows.length > paging.pageSize && last ? encodeCursor([last.__key, last[idColumn]]) : null;
  }
  for (const item of items) delete item.__key;
  if (count) response.total = (await count).rows[0].total as number;
  return response;
}

function videoWhere(filter: VideoFilter): { where: Where; channelFiltered: boolean } {
  const where = new Where();
  if (filter.query) {
    const pattern = where.bind(containsPattern(filter.query));
    where.add(`(lower(v.title) LIKE ${pattern} OR lower(v.description) LIKE ${pattern})`);
  }
  if (filter.categorys?.length) where.add(`v.category_id = ANY(${where.bind(filter.categorys)})`);
  addDays(where, 'v.create_at', filter.createAtStart, filter.createAtEnd);
  if (filter.videoType) where.add(`v.video_type = ${where.bind(VIDEO_TYPE_CODES[filter.videoType])}`);
  const before = where.conditions.length;
  if (filter.locations?.length) where.add(`c.country = ANY(${where.bind(filter.locations.map((c) => c.toUpperCase()))})`);
  if (filter.gender) where.add(`c.gender = ${where.bind(GENDER_CODES[filter.gender])}`);
  addBounds(where, 'c.follower_count', filter.followerCountMin, filter.followerCountMax);
  return { where, channelFiltered: where.conditions.length > before };
}

const VIDEO_COLUMNS = `v.video_id, v.channel_id, v.title, v.description, v.cover_url, v.create_at, v.duration_seconds, v.video_url,
  v.video_type, v.category_id, v.like_count, v.comment_count, v.play_count, v.engagement_rate, v.last_update_at,
  c.title AS channel_title, c.avatar AS channel_avatar, c.country AS channel_country, c.gender AS channel_gender,
  c.follower_count AS channel_follower_count, c.avg_engagement_rate AS channel_avg_engagement_rate,
  c.avg_play_count AS channel_avg_play_count, c.video_count AS channel_video_count,
  c.evaluation_min AS channel_evaluation_min, c.evaluation_max AS channel_evaluation_max`;
const VIDEOS_WITH_CHANNEL = 'videos v JOIN channels c ON c.channel_id = v.channel_id';

function liveWhere(filter: LiveFilter): Where {
  const where = new Where();
  if (filter.gameId) where.add(`game_id = ${where.bind(filter.gameId)}`);
  if (filter.type === 'LIVE') where.add(`type = 'live'`);
  if (filter.language) where.add(`language = ${where.bind(filter.language.toLowerCase())}`);
  return where;
}

/**
 * A page of videos, each with its channel's first videos and their count, in one statement:
 *   SELECT p.video_id, (SELECT count(*) … channel) AS total, (SELECT json_agg(…) FROM (… LIMIT n)) AS videos
 *   FROM (<the video page>) p
 */
async function videoChannels(pool: pg.Pool, request: Extract<FloorRequest, { kind: 'videoChannels' }>): Promise<FloorResponse> {
  const { where, channelFiltered } = videoWhere(request.filter);
  const nested = where.bind(request.nestedFirst);
  const { rows } = await pool.query(
    `SELECT p.video_id,
       (SELECT count(*)::int FROM videos x WHERE x.channel_id = p.channel_id) AS total,
       (SELECT coalesce(json_agg(json_build_object('video_id', y.video_id, 'title', y.title) ORDER BY y.create_at DESC, y.video_id DESC), '[]')
          FROM (SELECT video_id, title, create_at FROM videos WHERE channel_id = p.channel_id ORDER BY create_at DESC, video_id DESC LIMIT ${nested}) y) AS videos
     FROM (SELECT v.video_id, v.channel_id, v.create_at FROM ${channelFiltered ? VIDEOS_WITH_CHANNEL : 'videos v'} ${where.sql()}
           ORDER BY v.create_at DESC, v.video_id DESC LIMIT ${request.pageSize}) p
     ORDER BY p.create_at DESC, p.video_id DESC`,
    where.values,
  );
  return { items: rows };
}

/**
 * The creator page and its total (as `page`), beside them, on the same WHERE:
 *   SELECT country, count(*) … GROUP BY country;   SELECT gender, count(*) … GROUP BY gender
 *   SELECT width_bucket(follower_count, $edges), count(*) … GROUP BY 1
 */
async function creatorFacets(pool: pg.Pool, taxonomy: readonly Category[], request: Extract<FloorRequest, { kind: 'creatorFacets' }>): Promise<FloorResponse> {
  const where = creatorWhere(request.filter, taxonomy);
  const grouped = (column: string) => pool.query(`SELECT ${column} AS value, count(*)::int AS count FROM creators ${where.sql()} GROUP BY 1`, where.values);
  const histogram = where.copy();
  const edges = histogram.bind(request.edges);
  const statements = [
    grouped('country'),
    grouped('gender'),
    pool.query(`SELECT width_bucket(follower_count, ${edges}::bigint[]) AS bucket, count(*)::int AS count FROM creators ${histogram.sql()} GROUP BY 1`, histogram.values),
  ];
  for (const statement of statements) statement.catch(() => {});
  const response = await page(
    pool,
    { select: CREATOR_COLUMNS, from: 'creators', countFrom: 'creators', key: CREATOR_SORT_COLUMN[request.sort], id: 'user_id', where },
    { pageSize: request.pageSize, page: 1, total: true },
  );
  const [country, gender, buckets] = await Promise.all(statements);
  const followers = new Array<number>(request.edges.length + 1).fill(0);
  for (const row of buckets.rows as { bucket: number; count: number }[]) followers[row.bucket] = row.count;
  response.facets = { country: country.rows, gender: gender.rows, followers };
  return response;
}

const NODE_READS: Record<NodeType, string> = {
  Creator: `SELECT user_id AS key FROM creators WHERE platform = 'twitter' AND user_id = ANY($1)`,
  Channel: 'SELECT channel_id AS key FROM channels WHERE channel_id = ANY($1)',
  Video: 'SELECT video_id AS key FROM videos WHERE video_id = ANY($1)',
};

/** Lookups: one `= ANY($1)` read per type, side by side; the client puts them in the order asked. */
async function nodes(pool: pg.Pool, request: Extract<FloorRequest, { kind: 'nodes' }>): Promise<FloorResponse> {
  const types = Object.keys(NODE_READS) as NodeType[];
  const found = await Promise.all(types.map((type) => pool.query<{ key: string }>(NODE_READS[type], [request.keys[type]])));
  return { items: [], found: Object.fromEntries(types.map((type, i) => [type, found[i].rows.map((r) => r.key)])) as Record<NodeType, string[]> };
}

function answer(pool: pg.Pool, taxonomy: readonly Category[], request: FloorRequest): Promise<FloorResponse> {
  switch (request.kind) {
    case 'creators':
      return page(
        pool,
        {
          select: CREATOR_COLUMNS,
          from: 'creators',
          countFrom: 'creators',
          key: CREATOR_SORT_COLUMN[request.sort],
          id: 'user_id',
          where: creatorWhere(request.filter, taxonomy),
        },
        request,
      );
    case 'videos': {
      const { where, channelFiltered } = videoWhere(request.filter);
      const common = { select: VIDEO_COLUMNS, from: VIDEOS_WITH_CHANNEL, countFrom: channelFiltered ? VIDEOS_WITH_CHANNEL : 'videos v', id: 'v.video_id', where };
      if (!request.relevance) return page(pool, { ...common, key: 'v.create_at' }, request);
      // Relevance: the title equal to the query, starting with it, containing it, then the rest; each by plays.
      const q = request.filter.query!.toLowerCase();
      const rank = (page: Where) => [
        `(CASE WHEN lower(v.title) = ${page.bind(q)} THEN 3 WHEN lower(v.title) LIKE ${page.bind(prefixPattern(q))} THEN 2
          WHEN lower(v.title) LIKE ${page.bind(containsPattern(q))} THEN 1 ELSE 0 END)`,
      ];
      return page(pool, { ...common, ranks: rank, key: 'v.play_count' }, request);
    }
    case 'live':
      return page(
        pool,
        { select: '*', from: 'live_streams', countFrom: 'live_streams', key: 'viewer_count', id: 'id', where: liveWhere(request.filter) },
        { pageSize: request.pageSize, after: request.after, total: false },
      );
    case 'videoChannels':
      return videoChannels(pool, request);
    case 'creatorFacets':
      return creatorFacets(pool, taxonomy, request);
    case 'nodes':
      return nodes(pool, request);
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

async function main(): Promise<void> {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE ?? 10) });
  pool.on('error', () => {});
  // A hand-written endpoint would keep the small taxonomy in memory to expand level-2 ids.
  const taxonomy = (await pool.query('SELECT id, parent_id AS "parentId", level FROM categories')).rows as Category[];
  const kinds = new Set(['creators', 'videos', 'live', 'videoChannels', 'creatorFacets', 'nodes']);
  const server = createServer((request, response) => {
    const kind = request.url?.slice(1) ?? '';
    if (request.method !== 'POST' || !kinds.has(kind)) return send(response, 404, { error: 'not found' });
    readBody(request)
      .then((body) => answer(pool, taxonomy, { ...(JSON.parse(body) as FloorRequest), kind } as FloorRequest))
      .then((result) => send(response, 200, result))
      .catch((error: unknown) => send(response, 500, { error: error instanceof Error ? error.message : String(error) }));
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
    const { address, port } = server.address() as AddressInfo;
    process.stdout.write(`listening on http://${address}:${port}\n`);
  });
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

await main();

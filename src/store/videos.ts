import { type Expression, type ExpressionBuilder, type Kysely, sql, type SqlBool } from 'kysely';
import { channelNumericBounds } from '../domain/bounds.js';
import type { Page, PageArgs } from '../domain/cursors.js';
import { formatDuration } from '../domain/durations.js';
import type { FacetAnswer, FacetRequest, VideoFacet } from '../domain/facets.js';
import type { VideoIndexRow } from '../domain/index-rows.js';
import { videoOrders } from '../domain/orders.js';
import type { Channel, Video } from '../domain/records.js';
import { genderToCode } from '../domain/values.js';
import { parseInstant } from '../inputs/common.js';
import { videoFacetSearch } from '../inputs/facets.js';
import { needsChannel, type VideoFilter, type VideoSearch } from '../inputs/videos.js';
import { toChannel } from './channels.js';
import { channelColumns, type ChannelRow, type Database, videoColumns, type VideoRow } from './database.js';
import { asText, valueFacet } from './facets.js';
import { containsPattern, countMatches, fetchGroupedPages, fetchPage, prefixPattern, sortKey, type SortKey } from './paging.js';
import type { KeyLookup } from './key-batches.js';
import { anyOf, executePrepared } from './prepared.js';
import { toCount, toDate, toDecimal } from './values.js';
import { lowerCase } from '../domain/text.js';

type VideosEb = ExpressionBuilder<Database & { c: Database['channels'] }, 'videos' | 'c'>;

function whereVideos(filter: VideoFilter, channelIds: readonly string[] | null) {
  return (eb: VideosEb): Expression<SqlBool> => {
    const conditions: Expression<SqlBool>[] = [];
    if (channelIds) conditions.push(eb('videos.channel_id', '=', anyOf(channelIds)));
    if (filter.query) {
      const pattern = containsPattern(filter.query);
      conditions.push(eb.or([eb(sql`lower(videos.title)`, 'like', pattern), eb(sql`lower(videos.description)`, 'like', pattern)]));
    }
    if (filter.categorys?.length) conditions.push(eb('videos.category_id', 'in', filter.categorys));
    if (filter.createAtStart) conditions.push(eb('videos.create_at', '>=', parseInstant(filter.createAtStart)!.start));
    if (filter.createAtEnd) conditions.push(eb('videos.create_at', '<', parseInstant(filter.createAtEnd)!.endExclusive));
    if (filter.videoType) conditions.push(eb('videos.video_type', '=', filter.videoType === 'SHORT' ? 2 : 1));
    if (filter.locations?.length) conditions.push(eb('c.country', 'in', filter.locations.map((c) => c.toUpperCase())));
    if (filter.gender) conditions.push(eb('c.gender', '=', genderToCode(filter.gender)));
    for (const [minKey, maxKey, column] of channelNumericBounds) {
      const min = filter[minKey];
      const max = filter[maxKey];
      if (min != null) conditions.push(eb(`c.${column}`, '>=', min));
      if (max != null) conditions.push(eb(`c.${column}`, '<=', max));
    }
    return eb.and(conditions);
  };
}

/**
 * The videos matching a search: of its channel when it names one, of these channels when given;
 * the channel is joined when the filter bounds it (or a facet groups by it).
 */
function baseQuery(
  db: Kysely<Database>,
  search: VideoSearch,
  channelIds: readonly string[] | null = search.channelId != null ? [search.channelId] : null,
  withChannel = needsChannel(search.filter),
) {
  const { filter } = search;
  const videos = db.selectFrom('videos');
  const joined = withChannel
    ? videos.innerJoin('channels as c', 'c.channel_id', 'videos.channel_id')
    : (videos as unknown as ReturnType<typeof videos.innerJoin<'channels as c', 'c.channel_id', 'videos.channel_id'>>);
  return joined.where(whereVideos(filter, channelIds));
}

/** The video orders (src/domain/orders.ts) in SQL. */
export function videoOrder(search: VideoSearch): SortKey {
  const id = sql`videos.video_id`;
  const order = videoOrders[search.sort];
  if (search.sort === 'NEWEST') return sortKey(order, sql`videos.create_at`, id);
  const q = lowerCase(search.filter.query ?? '');
  const rank = sql`(CASE WHEN lower(videos.title) = ${q} THEN 3
    WHEN lower(videos.title) LIKE ${prefixPattern(q)} THEN 2
    WHEN lower(videos.title) LIKE ${containsPattern(q)} THEN 1 ELSE 0 END)`;
  return sortKey(order, rank, sql`videos.play_count`, id);
}

export async function searchVideos(db: Kysely<Database>, search: VideoSearch, page: PageArgs): Promise<Page<Video>> {
  const query = baseQuery(db, search).selectAll('videos');
  const result = await fetchPage(query, videoOrder(search), page);
  return { ...result, rows: result.rows.map((row) => toVideo(row as VideoRow)) };
}

export async function countVideos(db: Kysely<Database>, search: VideoSearch): Promise<number> {
  return countMatches(baseQuery(db, search));
}

/**
 * The same page of each channel's videos matching a search (its channelId aside) and each
 * channel's total, in one statement (`Channel.videos` under a page of channels; see fetchGroupedPages).
 */
export async function searchChannelsVideos(
  db: Kysely<Database>,
  channelIds: readonly string[],
  search: VideoSearch,
  page: PageArgs,
): Promise<Map<string, { page: Page<Video>; total: number }>> {
  if (channelIds.length === 0) return new Map();
  const matches = baseQuery(db, search, channelIds).select(videoColumns.map((column) => `videos.${column}` as const));
  const pages = await fetchGroupedPages(db, matches, 'channel_id', channelIds, videoOrder(search), page);
  return new Map([...pages].map(([channelId, { page: found, total }]) => [channelId, { page: { ...found, rows: found.rows.map(toVideo) }, total }]));
}

/** The facets of a search on the SQL path: one GROUP BY statement per facet, run together. */
export function videoFacets(db: Kysely<Database>, search: VideoSearch, requests: readonly FacetRequest<VideoFacet>[]): Promise<FacetAnswer[]> {
  return Promise.all(
    requests.map((request): Promise<FacetAnswer> => {
      const scoped = videoFacetSearch(search, request);
      switch (request.facet) {
        case 'category':
          return valueFacet(baseQuery(db, scoped), sql`videos.category_id`, asText);
        case 'videoType':
          return valueFacet(baseQuery(db, scoped), sql`videos.video_type`, (code) => (Number(code) === 2 ? 'short' : 'video'));
        case 'channelCountry':
          return valueFacet(baseQuery(db, scoped, undefined, true), sql`c.country`, asText);
        case 'month':
          return valueFacet(baseQuery(db, scoped), sql`to_char(videos.create_at AT TIME ZONE 'UTC', 'YYYY-MM')`, asText);
      }
    }),
  );
}

export function toVideo(row: VideoRow): Video {
  return {
    videoId: row.video_id,
    channelId: row.channel_id,
    title: row.title,
    description: row.description,
    coverUrl: row.cover_url,
    createAt: toDate(row.create_at)!,
    duration: formatDuration(row.duration_seconds),
    videoUrl: row.video_url,
    videoType: row.video_type === 2 ? 'SHORT' : 'VIDEO',
    categoryId: row.category_id,
    likeCount: toCount(row.like_count),
    commentCount: toCount(row.comment_count),
    playCount: toCount(row.play_count),
    engagementRate: toDecimal(row.engagement_rate),
    lastUpdateAt: row.last_update_at,
  };
}

function videoIndexQuery(db: Kysely<Database>) {
  return db
    .selectFrom('videos')
    .select([
      'video_id',
      'channel_id',
      sql<string>`lower(title)`.as('title_lower'),
      sql<string>`lower(description)`.as('description_lower'),
      sql<number>`(extract(epoch from create_at) * 1000)::float8`.as('create_ms'),
      'video_type',
      'category_id',
      sql<number>`play_count::float8`.as('plays'),
    ]);
}

function toVideoIndexRow(row: Awaited<ReturnType<ReturnType<typeof videoIndexQuery>['execute']>>[number]): VideoIndexRow {
  return {
    videoId: row.video_id,
    channelId: row.channel_id,
    title: row.title_lower,
    description: row.description_lower,
    createAt: Number(row.create_ms),
    videoType: row.video_type,
    categoryId: row.category_id,
    playCount: Number(row.plays),
  };
}

/** A batch of index rows in id order, after `after` (a full load, read in one snapshot by the caller). */
export async function videoIndexRows(db: Kysely<Database>, after: string | null, limit: number): Promise<VideoIndexRow[]> {
  let query = videoIndexQuery(db).orderBy('video_id').limit(limit);
  if (after !== null) query = query.where('video_id', '>', after);
  return (await query.execute()).map(toVideoIndexRow);
}

/**
 * A batch of video ids by date (oldest first), after the video `after`: the search index numbers
 * its slots in this order (src/search/tables/videos.ts). Read from the date index alone.
 */
export async function videoIdsByDate(db: Kysely<Database>, after: string | null, limit: number): Promise<string[]> {
  let query = db.selectFrom('videos').select('video_id').orderBy('create_at').orderBy('video_id').limit(limit);
  if (after !== null) {
    query = query.where(
      sql<boolean>`(videos.create_at, videos.video_id) > (SELECT previous.create_at, previous.video_id FROM videos AS previous WHERE previous.video_id = ${after})`,
    );
  }
  return (await query.execute()).map((row) => row.video_id);
}

/** The index rows of the given ids that exist (a change feed batch). */
export async function videoIndexRowsById(db: Kysely<Database>, ids: readonly string[]): Promise<VideoIndexRow[]> {
  if (ids.length === 0) return [];
  return (await videoIndexQuery(db).where('video_id', 'in', [...ids]).execute()).map(toVideoIndexRow);
}

/**
 * Videos by id without their channels (ids no longer stored are left out, the rest in no
 * particular order): for a channel's own videos (`Channel.videos`), whose channel the caller
 * already holds.
 */
export async function videosById(db: Kysely<Database>, ids: readonly string[]): Promise<Video[]> {
  if (ids.length === 0) return [];
  return (await executePrepared(db, db.selectFrom('videos').select(videoColumns).where('video_id', '=', anyOf(ids)))).map(toVideo);
}

/** A video as a page shows it: with its channel (null if the channel is no longer stored). */
export interface VideoWithChannel {
  video: Video;
  channel: Channel | null;
}

/**
 * Videos by id with their channels, in one statement: a page shows each video's channel, and a
 * second round trip for the channels cost a search page as much as the videos did. Videos in no
 * particular order (ids no longer stored are left out); the videos of one channel share its record.
 */
export async function videosWithChannelsById(db: Kysely<Database>, ids: readonly string[]): Promise<VideoWithChannel[]> {
  if (ids.length === 0) return [];
  const rows = await executePrepared(
    db,
    db
      .selectFrom('videos')
      .leftJoin('channels as c', 'c.channel_id', 'videos.channel_id')
      .select(videoColumns.map((column) => `videos.${column}` as const))
      .select((eb) => channelColumns.map((column) => eb.ref(`c.${column}`).as(`channel_${column}`)))
      .where('videos.video_id', '=', anyOf(ids)),
  );
  const channels = new Map<string, Channel>();
  return rows.map((row) => {
    const joined = row as unknown as Record<string, unknown>;
    let channel = channels.get(row.channel_id) ?? null;
    if (channel === null && joined.channel_channel_id != null) {
      channel = toChannel(Object.fromEntries(channelColumns.map((column) => [column, joined[`channel_${column}`]])) as ChannelRow);
      channels.set(row.channel_id, channel);
    }
    return { video: toVideo(row), channel };
  });
}

/** Videos by id with their channels, one statement for an account's concurrent requests. */
export const videosWithChannelsByKey: KeyLookup<VideoWithChannel> = {
  name: 'videos with channels',
  read: videosWithChannelsById,
  keyOf: (row) => row.video.videoId,
};

/** Videos by id (their channels known already), one statement for an account's concurrent requests. */
export const videosByKey: KeyLookup<Video> = { name: 'videos', read: videosById, keyOf: (video) => video.videoId };

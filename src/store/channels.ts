import { type Kysely, sql } from 'kysely';
import type { ChannelIndexRow } from '../domain/index-rows.js';
import type { Channel } from '../domain/records.js';
import { genderFromCode } from '../domain/values.js';
import { channelColumns, type ChannelRow, type Database } from './database.js';
import type { KeyLookup } from './key-batches.js';
import { anyOf, executePrepared } from './prepared.js';
import { centsOf, toCount, toDecimal } from './values.js';

/** Channels by id, in no particular order (ids not stored are left out). */
export async function channelsById(db: Kysely<Database>, ids: readonly string[]): Promise<Channel[]> {
  if (ids.length === 0) return [];
  return (await executePrepared(db, db.selectFrom('channels').select(channelColumns).where('channel_id', '=', anyOf(ids)))).map(toChannel);
}

/** Channels by id, one statement for an account's concurrent requests. */
export const channelsByKey: KeyLookup<Channel> = { name: 'channels', read: channelsById, keyOf: (channel) => channel.channelId };

export function toChannel(row: ChannelRow): Channel {
  return {
    channelId: row.channel_id,
    title: row.title,
    avatar: row.avatar,
    country: row.country,
    language: row.language,
    gender: genderFromCode(row.gender),
    followerCount: toCount(row.follower_count),
    avgEngagementRate: toDecimal(row.avg_engagement_rate),
    avgPlayCount: toDecimal(row.avg_play_count),
    avgLikeCount: toDecimal(row.avg_like_count),
    avgCommentCount: toDecimal(row.avg_comment_count),
    videoCount: toCount(row.video_count),
    recentMonthPublishCount: row.recent_month_publish_count,
    evaluationMin: toDecimal(row.evaluation_min),
    evaluationMax: toDecimal(row.evaluation_max),
    lastUpdateAt: row.last_update_at,
  };
}

function channelIndexQuery(db: Kysely<Database>) {
  return db
    .selectFrom('channels')
    .select([
      'channel_id',
      'country',
      'gender',
      sql<number>`follower_count::float8`.as('followers'),
      centsOf('avg_engagement_rate').as('engagement'),
      centsOf('avg_play_count').as('plays'),
      centsOf('avg_like_count').as('likes'),
      centsOf('avg_comment_count').as('comments'),
      'recent_month_publish_count',
    ]);
}

function toChannelIndexRow(row: Awaited<ReturnType<ReturnType<typeof channelIndexQuery>['execute']>>[number]): ChannelIndexRow {
  return {
    channelId: row.channel_id,
    country: row.country,
    gender: row.gender,
    followerCount: Number(row.followers),
    avgEngagementRate: Number(row.engagement),
    avgPlayCount: Number(row.plays),
    avgLikeCount: Number(row.likes),
    avgCommentCount: Number(row.comments),
    recentMonthPublishCount: row.recent_month_publish_count,
  };
}

/** A batch of index rows in id order, after `after` (a full load, read in one snapshot by the caller). */
export async function channelIndexRows(db: Kysely<Database>, after: string | null, limit: number): Promise<ChannelIndexRow[]> {
  let query = channelIndexQuery(db).orderBy('channel_id').limit(limit);
  if (after !== null) query = query.where('channel_id', '>', after);
  return (await query.execute()).map(toChannelIndexRow);
}

/** The index rows of the given ids that exist (a change feed batch). */
export async function channelIndexRowsById(db: Kysely<Database>, ids: readonly string[]): Promise<ChannelIndexRow[]> {
  if (ids.length === 0) return [];
  return (await channelIndexQuery(db).where('channel_id', 'in', [...ids]).execute()).map(toChannelIndexRow);
}

import type { Kysely } from 'kysely';
import type { ChannelRow, Database } from './database.js';
import { genderFromCode, toCount, toDecimal, type Gender } from './values.js';

export interface Channel {
  channelId: string;
  title: string;
  avatar: string;
  country: string;
  language: string;
  gender: Gender;
  followerCount: number;
  avgEngagementRate: string;
  avgPlayCount: string;
  avgLikeCount: string;
  avgCommentCount: string;
  videoCount: number;
  recentMonthPublishCount: number;
  evaluationMin: string;
  evaluationMax: string;
  lastUpdateAt: Date;
}

/** Batch load for the per-request DataLoader: one query for every channel a page needs. */
export async function loadChannels(db: Kysely<Database>, ids: readonly string[]): Promise<(Channel | null)[]> {
  const rows = await db.selectFrom('channels').selectAll().where('channel_id', 'in', [...ids]).execute();
  const byId = new Map(rows.map((row) => [row.channel_id, toChannel(row)]));
  return ids.map((id) => byId.get(id) ?? null);
}

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

// Index rows generated the way the seed makes its records (src/demo), for measuring the search
// index alone without PostgreSQL (index-micro.ts, index-draws.ts).
import { makeCreator } from '../src/demo/creators.js';
import type { CreatorIndexRow } from '../src/domain/index-rows.js';

/** A decimal as the index keeps it, in whole cents (0 for none). */
export const cents = (value: number | undefined) => Math.round((value ?? 0) * 100);

/** The index row of the seed's creator number `index`. */
export function creatorRow(index: number, categoryIds: number[]): CreatorIndexRow {
  const r = makeCreator(`scale:creator:${index}`, `9${String(index).padStart(12, '0')}`, index, categoryIds);
  return {
    platform: 'twitter',
    userId: r.user_id,
    username: r.username.toLowerCase(),
    fullName: (r.full_name ?? '').toLowerCase(),
    country: (r.country ?? '').toUpperCase(),
    language: (r.language ?? '').toLowerCase(),
    gender: { unknown: 0, male: 1, female: 2 }[r.gender ?? 'unknown']!,
    followerCount: r.follower_count ?? 0,
    isVerified: r.is_verified ?? false,
    hasEmail: r.has_email ?? false,
    avgEngagementRate: cents(r.avg_engagement_rate),
    avgVideoEngagementRate: cents(r.avg_video_engagement_rate),
    avgCommentCount: cents(r.avg_comment_count),
    avgLikeCount: cents(r.avg_like_count),
    avgViewCount: cents(r.avg_view_count),
    avgEngagementCount: cents(r.avg_like_count) + cents(r.avg_comment_count) + cents(r.avg_retweet_count),
    retweetRatio: cents(r.retweet_ratio),
    recentMonthPublishCount: r.recent_month_publish_count ?? 0,
    lastPublishAt: r.last_publish_at ? Date.parse(r.last_publish_at) : NaN,
    categoryIds: r.category_ids ?? [],
  };
}

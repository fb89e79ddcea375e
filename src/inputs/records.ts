import { z } from 'zod';
import { parseDuration } from '../domain/durations.js';
import { INT32_MAX, isInstant, METRIC_LIMIT } from './common.js';

// One NDJSON line of each import kind (docs/contract/decisions.md §7): the response item's field names in
// snake_case, metrics as JSON numbers, gender and video_type as the response strings.
//
// Required: the id(s) of the record and what the table has no default for (a video's channel_id and
// create_at, a stream's user_id, user_login and started_at, every category field; a creator's
// username, since search and relevance work on it). Everything else is optional and an absent field
// takes the column default (0, "", false, "unknown", null): a line is the whole record, so
// re-importing it without a field resets that field rather than keeping an older value.
// `last_update_at` is optional everywhere: without it, the import time is recorded when the row changes.
//
// Like common.ts, these schemas only validate; src/store/imports.ts maps records to rows.

const noNul = (text: string) => !text.includes('\u0000');
const text = (max: number) => z.string().max(max).refine(noNul, 'must not contain NUL characters');
const shortText = text(2_000);
const longText = text(20_000);

const id = z.string().regex(/^[\x21-\x7e]{1,128}$/, 'must be 1 to 128 printable ASCII characters without spaces');
/** A JSON integer, exact (up to 2^53 - 1) and non-negative. */
const count = z.int().nonnegative();
const int32Count = z.int().nonnegative().max(INT32_MAX);
const metric = z.number().nonnegative().lt(METRIC_LIMIT);
// "" stands for unknown, as the column default does.
const country = z.string().regex(/^([A-Za-z]{2})?$/, 'must be an ISO 3166-1 alpha-2 country code or ""');
const language = z.string().regex(/^([A-Za-z]{2})?$/, 'must be an ISO 639-1 language code or ""');
const gender = z.enum(['male', 'female', 'unknown']);
const timestamp = z
  .string()
  .refine((value) => value.includes('T') && isInstant(value), {
    message: 'must be an ISO 8601 date-time with Z or an offset (2026-05-01T12:34:56.000Z)',
  });
const categoryId = z.int().positive().max(INT32_MAX);

function evaluationRange(value: { evaluation_min?: number; evaluation_max?: number }, ctx: z.RefinementCtx): void {
  if (value.evaluation_min !== undefined && value.evaluation_max !== undefined && value.evaluation_min > value.evaluation_max) {
    ctx.addIssue({ code: 'custom', path: ['evaluation_min'], message: 'must not be greater than evaluation_max' });
  }
}

export const categoryRecord = z.strictObject({
  id: categoryId,
  parent_id: categoryId.nullable(),
  name: shortText.min(1),
});
export type CategoryRecord = z.infer<typeof categoryRecord>;

export const lastPostRecord = z.strictObject({
  post_id: id,
  description: longText.optional(),
  create_at: timestamp,
  cover_url: shortText.optional(),
  like_count: count.optional(),
  comment_count: count.optional(),
  retweet_count: count.optional(),
  view_count: count.optional(),
});
export type LastPostRecord = z.infer<typeof lastPostRecord>;

export const creatorRecord = z
  .strictObject({
    platform: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,31}$/, 'must be a lowercase platform identifier such as twitter')
      .optional(),
    user_id: id,
    username: shortText.min(1),
    full_name: shortText.optional(),
    avatar: shortText.optional(),
    country: country.optional(),
    language: language.optional(),
    gender: gender.optional(),
    follower_count: count.optional(),
    is_verified: z.boolean().optional(),
    has_email: z.boolean().optional(),
    avg_engagement_rate: metric.optional(),
    avg_video_engagement_rate: metric.optional(),
    avg_comment_count: metric.optional(),
    avg_like_count: metric.optional(),
    avg_retweet_count: metric.optional(),
    avg_view_count: metric.optional(),
    retweet_ratio: metric.optional(),
    reply_ratio: metric.optional(),
    post_count: count.optional(),
    video_count: count.optional(),
    last_publish_at: timestamp.nullable().optional(),
    recent_month_publish_count: int32Count.optional(),
    recent_week_publish_count: int32Count.optional(),
    last_post: lastPostRecord.nullable().optional(),
    evaluation_min: metric.optional(),
    evaluation_max: metric.optional(),
    category_ids: z.array(categoryId).max(100).optional(),
    last_update_at: timestamp.optional(),
  })
  .superRefine(evaluationRange)
  .superRefine((value, ctx) => {
    if ((value.recent_week_publish_count ?? 0) > (value.recent_month_publish_count ?? 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['recent_week_publish_count'],
        message: 'must not be greater than recent_month_publish_count',
      });
    }
  });
export type CreatorRecord = z.infer<typeof creatorRecord>;

export const channelRecord = z
  .strictObject({
    channel_id: id,
    title: shortText.optional(),
    avatar: shortText.optional(),
    country: country.optional(),
    gender: gender.optional(),
    language: language.optional(),
    follower_count: count.optional(),
    avg_engagement_rate: metric.optional(),
    avg_play_count: metric.optional(),
    avg_like_count: metric.optional(),
    avg_comment_count: metric.optional(),
    video_count: count.optional(),
    recent_month_publish_count: int32Count.optional(),
    evaluation_min: metric.optional(),
    evaluation_max: metric.optional(),
    last_update_at: timestamp.optional(),
  })
  .superRefine(evaluationRange);
export type ChannelRecord = z.infer<typeof channelRecord>;

export const videoRecord = z.strictObject({
  video_id: id,
  channel_id: id,
  title: shortText.optional(),
  description: longText.optional(),
  cover_url: shortText.optional(),
  create_at: timestamp,
  duration: z
    .string()
    .refine((value) => (parseDuration(value) ?? Infinity) <= INT32_MAX, {
      message: 'must be an ISO 8601 duration such as PT4M13S',
    })
    .optional(),
  video_url: shortText.optional(),
  video_type: z.enum(['video', 'short']).optional(),
  category_id: z.int().nonnegative().max(INT32_MAX).optional(),
  like_count: count.optional(),
  comment_count: count.optional(),
  play_count: count.optional(),
  engagement_rate: metric.optional(),
  last_update_at: timestamp.optional(),
});
export type VideoRecord = z.infer<typeof videoRecord>;

export const liveStreamRecord = z.strictObject({
  id,
  user_id: id,
  user_login: id,
  user_name: shortText.optional(),
  game_id: shortText.optional(),
  game_name: shortText.optional(),
  // The platform answers "" when it withholds the type.
  type: z.enum(['live', '']).optional(),
  title: shortText.optional(),
  viewer_count: count.optional(),
  started_at: timestamp,
  // The platform's own value for an undetermined language is "other".
  language: z
    .string()
    .regex(/^([A-Za-z]{2}|[Oo][Tt][Hh][Ee][Rr])?$/, 'must be an ISO 639-1 language code, "other" or ""')
    .optional(),
  thumbnail_url: shortText.optional(),
  tags: z.array(text(100)).max(100).optional(),
  is_mature: z.boolean().optional(),
  last_update_at: timestamp.optional(),
});
export type LiveStreamRecord = z.infer<typeof liveStreamRecord>;

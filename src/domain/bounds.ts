// The numeric filters' fields and the columns they bound, shared by the SQL filter (src/store/) and
// the search index (src/search/) so both bound the same column.

/** Each numeric filter of creator search: its min and max fields and the column they bound. */
export const creatorNumericBounds = [
  ['followerCountMin', 'followerCountMax', 'follower_count'],
  ['avgEngagementRateMin', 'avgEngagementRateMax', 'avg_engagement_rate'],
  ['avgCommentCountMin', 'avgCommentCountMax', 'avg_comment_count'],
  ['avgLikeCountMin', 'avgLikeCountMax', 'avg_like_count'],
  ['avgPlayCountMin', 'avgPlayCountMax', 'avg_view_count'],
  ['recentMonthPublishCountMin', 'recentMonthPublishCountMax', 'recent_month_publish_count'],
  ['avgEngagementCountMin', 'avgEngagementCountMax', 'avg_engagement_count'],
  ['avgVideoEngagementRateMin', 'avgVideoEngagementRateMax', 'avg_video_engagement_rate'],
  [null, 'retweetRatioMax', 'retweet_ratio'],
] as const;

// Filters on the video's channel (docs/contract/decisions.md §2); the channel is joined only when one is used.
export const channelNumericBounds = [
  ['followerCountMin', 'followerCountMax', 'follower_count'],
  ['avgEngagementRateMin', 'avgEngagementRateMax', 'avg_engagement_rate'],
  ['avgCommentCountMin', 'avgCommentCountMax', 'avg_comment_count'],
  ['avgLikeCountMin', 'avgLikeCountMax', 'avg_like_count'],
  ['avgPlayCountMin', 'avgPlayCountMax', 'avg_play_count'],
  ['recentMonthPublishCountMin', 'recentMonthPublishCountMax', 'recent_month_publish_count'],
] as const;

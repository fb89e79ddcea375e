// What the search index keeps of each record: the store reads these rows, the index files them.

/**
 * What the search index keeps of a creator (src/search/tables/creators.ts), in exact numbers: metrics in
 * cents (numeric(20,2) × 100), times in epoch milliseconds (NaN for NULL), text as lower() made it.
 */
export interface CreatorIndexRow {
  platform: string;
  userId: string;
  username: string;
  fullName: string;
  country: string;
  language: string;
  gender: number;
  followerCount: number;
  isVerified: boolean;
  hasEmail: boolean;
  avgEngagementRate: number;
  avgVideoEngagementRate: number;
  avgCommentCount: number;
  avgLikeCount: number;
  avgViewCount: number;
  avgEngagementCount: number;
  retweetRatio: number;
  recentMonthPublishCount: number;
  lastPublishAt: number;
  categoryIds: number[];
}

export interface CreatorKey {
  platform: string;
  userId: string;
}

/** What the search index keeps of a channel for video search's channel filters; metrics in cents. */
export interface ChannelIndexRow {
  channelId: string;
  country: string;
  gender: number;
  followerCount: number;
  avgEngagementRate: number;
  avgPlayCount: number;
  avgLikeCount: number;
  avgCommentCount: number;
  recentMonthPublishCount: number;
}

/** What the search index keeps of a video (src/search/tables/videos.ts): times in epoch ms, text as lower() made it. */
export interface VideoIndexRow {
  videoId: string;
  channelId: string;
  title: string;
  description: string;
  createAt: number;
  videoType: number;
  categoryId: number;
  playCount: number;
}

/** What the search index keeps of a live stream (src/search/tables/live-streams.ts). */
export interface LiveStreamIndexRow {
  id: string;
  userId: string;
  userLoginLower: string;
  gameId: string;
  /** The game's name: the label of the game facet. */
  gameName: string;
  type: string;
  language: string;
  viewerCount: number;
}

import type { Gender } from './values.js';

// The service's records as every layer sees them: camelCase, counts as numbers, metrics as
// two-decimal strings, instants as Dates (the store reads them, search pages them, the schema shows them).

export interface LastPostItem {
  postId: string;
  description: string;
  createAt: Date;
  coverUrl: string;
  likeCount: number;
  commentCount: number;
  retweetCount: number;
  viewCount: number;
}

export interface Creator {
  platform: string;
  userId: string;
  username: string;
  fullName: string;
  avatar: string;
  country: string;
  language: string;
  gender: Gender;
  followerCount: number;
  isVerified: boolean;
  hasEmail: boolean;
  avgEngagementRate: string;
  avgVideoEngagementRate: string;
  avgCommentCount: string;
  avgLikeCount: string;
  avgRetweetCount: string;
  avgViewCount: string;
  avgEngagementCount: string;
  retweetRatio: string;
  replyRatio: string;
  postCount: number;
  videoCount: number;
  lastPublishAt: Date | null;
  recentMonthPublishCount: number;
  recentWeekPublishCount: number;
  lastPost: LastPostItem | null;
  evaluationMin: string;
  evaluationMax: string;
  categoryIds: number[];
  lastUpdateAt: Date;
}

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

export interface Video {
  videoId: string;
  channelId: string;
  title: string;
  description: string;
  coverUrl: string;
  createAt: Date;
  duration: string;
  videoUrl: string;
  videoType: 'VIDEO' | 'SHORT';
  categoryId: number;
  likeCount: number;
  commentCount: number;
  playCount: number;
  engagementRate: string;
  lastUpdateAt: Date;
}

/** A node of the category taxonomy (levels 1 to 3; level-2 and level-3 ids classify records). */
export interface Category {
  categoryId: number;
  parentId: number | null;
  level: number;
  name: string;
}

export interface LiveStream {
  id: string;
  userId: string;
  userLogin: string;
  userName: string;
  gameId: string;
  gameName: string;
  /** The platform's own string: "live", or "" when it withholds it. */
  type: string;
  title: string;
  viewerCount: number;
  startedAt: Date;
  language: string;
  thumbnailUrl: string;
  tags: string[];
  isMature: boolean;
  lastUpdateAt: Date;
}

/** A stream as the collector hands it over (the upstream client's item). */
export type CollectedStream = Omit<LiveStream, 'lastUpdateAt'>;

/** A fetched post, field for field the contract's media item (2.6) in camelCase. */
export interface FetchedMedia {
  authorUserId: string;
  authorUsername: string;
  authorNickname: string;
  mediaId: string;
  mediaCode: string;
  createAt: Date;
  coverUrl: string;
  resources: string[];
  description: string;
  accessibilityCaption: string;
  mediaUrl: string;
  /** The platform's own values: 1 image, 2 video, 8 carousel. */
  mediaType: 1 | 2 | 8;
  /** Whole seconds; 0 for images. */
  duration: number;
  likeCount: number;
  commentCount: number;
  playCount: number;
}

export const PHOTO_PLATFORM = 'instagram';
/** The platform of creator search and the `creator` lookup. */
export const CREATOR_PLATFORM = 'twitter';

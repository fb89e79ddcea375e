import { parse, type DocumentNode } from 'graphql';
import type { z } from 'zod';
import { DEFAULT_PAGE_SIZE } from '../inputs/common.js';
import { creatorFilterShape, creatorSearchBody } from '../inputs/creators.js';
import { videoFilterShape, videoSearchBody } from '../inputs/videos.js';

// The contract's REST routes as persisted GraphQL operations: each runs the very same resolver
// as its GraphQL twin, and the selection below is the contract's item shape, stated once.

export interface RestRoute {
  method: 'GET' | 'POST';
  path: string;
  /** The request body (POST) or query parameters (GET), in the schema's camelCase names. */
  input: z.ZodType & { shape: Record<string, z.ZodType> };
  document: DocumentNode;
  variables(input: Record<string, unknown>): Record<string, unknown>;
  /** The envelope's `data` from the root field, already rendered in REST names. */
  data(root: Record<string, unknown>, input: Record<string, unknown>): unknown;
}

const pick = (input: Record<string, unknown>, keys: readonly string[]) =>
  Object.fromEntries(Object.entries(input).filter(([key]) => keys.includes(key)));

/** Contract §2.2: a page/page_size search over a connection with an exact total. */
function pagedSearch(options: {
  root: 'creators' | 'videos';
  filterShape: Record<string, unknown>;
  body: RestRoute['input'];
  path: string;
  item: string;
  filterType: string;
  sortType: string;
}): RestRoute {
  const filterKeys = Object.keys(options.filterShape);
  return {
    method: 'POST',
    path: options.path,
    input: options.body,
    document: parse(`
      query RestSearch($filter: ${options.filterType}, $sortBy: ${options.sortType}, $first: Int, $offset: Int) {
        ${options.root}(filter: $filter, sortBy: $sortBy, first: $first, offset: $offset) {
          totalCount
          nodes { ${options.item} }
        }
      }`),
    variables: (input) => {
      const pageSize = (input.pageSize as number | undefined) ?? DEFAULT_PAGE_SIZE;
      const page = (input.page as number | undefined) ?? 1;
      return { filter: pick(input, filterKeys), sortBy: input.sortBy ?? null, first: pageSize, offset: (page - 1) * pageSize };
    },
    data: (root, input) => {
      const pageSize = (input.pageSize as number | undefined) ?? DEFAULT_PAGE_SIZE;
      const total = root.total_count as number;
      return {
        items: root.nodes,
        total,
        page: (input.page as number | undefined) ?? 1,
        page_size: pageSize,
        total_pages: Math.ceil(total / pageSize),
      };
    },
  };
}

const creatorItem = `
  userId username fullName avatar country gender followerCount isVerified
  avgEngagementRate avgVideoEngagementRate avgCommentCount avgLikeCount avgRetweetCount avgViewCount
  retweetRatio replyRatio postCount videoCount lastPublishAt recentMonthPublishCount recentWeekPublishCount
  lastPost { postId description createAt coverUrl likeCount commentCount retweetCount viewCount }
  evaluationMin evaluationMax lastUpdateAt`;

const videoItem = `
  videoId title description coverUrl createAt duration videoUrl
  channelTitle channelId channelAvatar channelFollowerCount videoType categoryId
  likeCount commentCount playCount engagementRate
  channel {
    channelId title avatar country gender followerCount avgEngagementRate avgPlayCount videoCount
    evaluationMin evaluationMax
  }
  lastUpdateAt`;

export const restRoutes: RestRoute[] = [
  pagedSearch({
    root: 'creators',
    path: '/api/v1/search/twitter/user',
    filterShape: creatorFilterShape,
    body: creatorSearchBody,
    item: creatorItem,
    filterType: 'CreatorFilter',
    sortType: 'CreatorSort',
  }),
  pagedSearch({
    root: 'videos',
    path: '/api/v1/search/youtube/video',
    filterShape: videoFilterShape,
    body: videoSearchBody,
    item: videoItem,
    filterType: 'VideoFilter',
    sortType: 'VideoSort',
  }),
];

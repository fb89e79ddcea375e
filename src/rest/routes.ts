import { parse, type DocumentNode } from 'graphql';
import type { z } from 'zod';
import type { RestEndpointId } from '../access/endpoints.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../inputs/common.js';
import { creatorFilterShape, creatorSearchBody } from '../inputs/creators.js';
import { liveStreamFilterShape, liveStreamSearchBody } from '../inputs/live-streams.js';
import { realtimeMediasArgs } from '../inputs/medias.js';
import { videoFilterShape, videoSearchBody } from '../inputs/videos.js';
import { describe, objectSchema, type JsonSchema, type ObjectSchema } from './json-schema.js';
import { restDocument } from './render.js';

// The contract's REST routes as persisted GraphQL operations: each runs the very same resolver
// as its GraphQL twin, and the selection below is the contract's item shape, stated once.

export interface RestRoute {
  method: 'GET' | 'POST';
  path: string;
  /** The endpoint id plans name and quota is charged to (docs/contract/decisions.md §1). */
  endpoint: RestEndpointId;
  /** The request body (POST) or query parameters (GET), in the schema's camelCase names. */
  input: z.ZodType & { shape: Record<string, z.ZodType> };
  /** The persisted operation, every field aliased to its REST name (render.ts). */
  document: DocumentNode;
  variables(input: Record<string, unknown>): Record<string, unknown>;
  /** The envelope's `data` from the root field, already rendered in REST names. */
  data(root: Record<string, unknown>, input: Record<string, unknown>): unknown;
  /** The JSON Schema of what `data` returns, from the schema of the rendered root field (src/rest/openapi.ts). */
  dataSchema(root: ObjectSchema): JsonSchema;
}

const pick = (input: Record<string, unknown>, keys: readonly string[]) =>
  Object.fromEntries(Object.entries(input).filter(([key]) => keys.includes(key)));

/** Contract §2.2: a page/page_size search over a connection with an exact total. */
function pagedSearch(options: {
  root: 'creators' | 'videos';
  endpoint: RestEndpointId;
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
    endpoint: options.endpoint,
    input: options.body,
    document: restDocument(parse(`
      query RestSearch($filter: ${options.filterType}, $sortBy: ${options.sortType}, $first: Int, $offset: Int) {
        ${options.root}(filter: $filter, sortBy: $sortBy, first: $first, offset: $offset) {
          totalCount
          nodes { ${options.item} }
        }
      }`)),
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
    dataSchema: (root) =>
      objectSchema({
        items: root.properties.nodes,
        total: describe(root.properties.total_count, 'Exact number of matches'),
        page: { type: 'integer', minimum: 1, description: 'The page number, from 1' },
        page_size: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE },
        total_pages: { type: 'integer', minimum: 0, description: 'ceil(total / page_size)' },
      }),
  };
}

/**
 * Contract §4.3: a cursor page `{ more, offset, data }` over the liveStreams connection.
 * - No cursor or `after`: the `first` streams after it; `more` = hasNextPage, `offset` = the last
 *   stream's cursor (pass it as `after`).
 * - `before`: the `first` streams just before the cursor, in the same order (GraphQL `last` +
 *   `before`); `more` = whether streams exist further back, `offset` = the first stream's cursor
 *   (pass it as `before` to keep paging back).
 * `offset` is "" whenever `more` is false.
 */
function cursorSearch(options: { path: string; body: RestRoute['input']; filterShape: Record<string, unknown>; item: string }): RestRoute {
  const filterKeys = Object.keys(options.filterShape);
  return {
    method: 'POST',
    path: options.path,
    endpoint: 'live.search',
    input: options.body,
    document: restDocument(parse(`
      query RestLiveSearch($filter: LiveStreamFilter, $first: Int, $last: Int, $after: String, $before: String) {
        liveStreams(filter: $filter, first: $first, last: $last, after: $after, before: $before) {
          pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
          nodes { ${options.item} }
        }
      }`)),
    variables: (input) => {
      const size = (input.first as number | undefined) ?? DEFAULT_PAGE_SIZE;
      const filter = pick(input, filterKeys);
      return input.before != null
        ? { filter, last: size, before: input.before }
        : { filter, first: size, after: input.after ?? null };
    },
    data: (root, input) => {
      const page = root.page_info as { has_next_page: boolean; has_previous_page: boolean; start_cursor: string | null; end_cursor: string | null };
      const backward = input.before != null;
      const more = backward ? page.has_previous_page : page.has_next_page;
      const offset = more ? ((backward ? page.start_cursor : page.end_cursor) ?? '') : '';
      return { more, offset, data: root.nodes };
    },
    dataSchema: (root) =>
      objectSchema({
        more: { type: 'boolean', description: 'Whether a next page exists (with `before`: whether streams exist further back)' },
        offset: { type: 'string', description: 'Cursor to pass as `after` (with `before`: as `before`); "" when `more` is false' },
        data: root.properties.nodes,
      }),
  };
}

/** Contract §4.4: query parameters in, `{ more, offset, medias }` out, as the resolver returns it. */
function realtimeMediaList(options: { path: string; item: string }): RestRoute {
  return {
    method: 'GET',
    path: options.path,
    endpoint: 'realtime.medias',
    input: realtimeMediasArgs,
    document: restDocument(parse(`
      query RestRealtimeMedias($userId: String!, $offset: String) {
        realtimeMedias(userId: $userId, offset: $offset) {
          more
          offset
          medias { ${options.item} }
        }
      }`)),
    variables: (input) => ({ userId: input.userId, offset: input.offset ?? null }),
    data: (root) => root,
    dataSchema: (root) => root,
  };
}

const liveStreamItem = `
  id userId userLogin userName gameId gameName type title viewerCount startedAt language
  thumbnailUrl tags isMature lastUpdateAt`;

const mediaItem = `
  authorUserId authorUsername authorNickname mediaId mediaCode createAt coverUrl resources
  description accessibilityCaption mediaUrl mediaType duration likeCount commentCount playCount`;

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
    endpoint: 'search.creators',
    path: '/api/v1/search/twitter/user',
    filterShape: creatorFilterShape,
    body: creatorSearchBody,
    item: creatorItem,
    filterType: 'CreatorFilter',
    sortType: 'CreatorSort',
  }),
  pagedSearch({
    root: 'videos',
    endpoint: 'search.videos',
    path: '/api/v1/search/youtube/video',
    filterShape: videoFilterShape,
    body: videoSearchBody,
    item: videoItem,
    filterType: 'VideoFilter',
    sortType: 'VideoSort',
  }),
  cursorSearch({
    path: '/api/v1/twitch/search/live',
    body: liveStreamSearchBody,
    filterShape: liveStreamFilterShape,
    item: liveStreamItem,
  }),
  realtimeMediaList({ path: '/api/v1/instagram/realtime/user/medias', item: mediaItem }),
];

// How each system is asked for one page of a session, and how its answer reduces to a PageResult.
// service: the contract's REST routes (or its GraphQL where the workload says so), raw key header;
// postgraphile: its generated allX connections with the connection-filter plugin's `filter`;
// floor: the floor server's JSON (floor-server.ts).
import { encodeGlobalId } from '../src/domain/global-ids.js';
import { toSnake } from '../src/rest/codecs.js';
import type { FloorRequest, FloorResponse } from './floor-server.js';
import {
  dayBounds,
  expandCategoryIds,
  facetOrder,
  GENDER_CODES,
  GENDER_NAMES,
  VIDEO_TYPE_CODES,
  type Category,
  type CreatorFilter,
  type LiveFilter,
  type NodeRef,
  type NodeType,
  type PageResult,
  type Session,
  type VideoFilter,
} from './specs.js';

export type SystemName = 'service' | 'postgraphile' | 'floor';
export const SYSTEM_NAMES: SystemName[] = ['service', 'postgraphile', 'floor'];

export interface HttpCall {
  path: string;
  body: string;
}

export interface SystemClient {
  name: SystemName;
  headers: Record<string, string>;
  /** The request for page `step` (0-based) of `session`; `cursor` is the previous page's `next`. */
  request(session: Session, step: number, cursor: string | null): HttpCall;
  /** The page in a successful answer; throws with the system's own message on an error payload. */
  parse(session: Session, body: unknown): PageResult;
}

type Json = Record<string, any>;

const graphql = (query: string, variables: Record<string, unknown>): HttpCall => ({
  path: '/graphql',
  body: JSON.stringify({ query, variables }),
});

function graphqlData(body: unknown): Json {
  const { data, errors } = body as { data?: Json; errors?: { message: string }[] };
  if (errors?.length) throw new Error(`GraphQL errors: ${errors.map((e) => e.message).join('; ')}`);
  if (!data) throw new Error('GraphQL answer without data');
  return data;
}

// ---- what the graph workloads must agree on, spelled once for all three systems ------------

interface NestedVideos {
  total: number;
  videos: { videoId: string; title: string }[];
}
/** A page of videos with each one's channel's first videos: ids, and the nested totals and pages as detail. */
const videoChannelsResult = (page: { videoId: string; nested: NestedVideos }[]): PageResult => ({
  total: null,
  ids: page.map((v) => v.videoId),
  next: null,
  detail: JSON.stringify(page.map(({ nested }) => [nested.total, nested.videos.map((v) => [v.videoId, v.title])])),
});

type Counted = { value: string; count: number }[];
/** Facets as the service spells and orders them; the histogram as its bucket counts in order. */
const facetsDetail = (facets: { country: Counted; gender: Counted; followers: number[] }) =>
  JSON.stringify({ country: facets.country.map((f) => [f.value, f.count]), gender: facets.gender.map((f) => [f.value, f.count]), followers: facets.followers });

/** A lookup's answer as `<type>:<key>` in the order asked, `null` where nothing was found. */
const refText = (ref: NodeRef | null) => (ref ? `${ref.type}:${ref.key}` : 'null');

/** The distinct keys of each type among `refs`. */
function keysByType(refs: readonly NodeRef[]): Record<NodeType, string[]> {
  const keys: Record<NodeType, Set<string>> = { Creator: new Set(), Channel: new Set(), Video: new Set() };
  for (const ref of refs) keys[ref.type].add(ref.key);
  return { Creator: [...keys.Creator], Channel: [...keys.Channel], Video: [...keys.Video] };
}

/** `refs` answered from the keys each type found: what a client does with per-type batches. */
function inAskedOrder(refs: readonly NodeRef[], found: Record<NodeType, Iterable<string>>): PageResult {
  const sets = { Creator: new Set(found.Creator), Channel: new Set(found.Channel), Video: new Set(found.Video) };
  return { total: null, ids: refs.map((ref) => refText(sets[ref.type].has(ref.key) ? ref : null)), next: null };
}

// ---- the service ----------------------------------------------------------------------------

const CREATOR_NODE = `userId username fullName avatar country gender followerCount isVerified
  avgEngagementRate avgVideoEngagementRate avgCommentCount avgLikeCount avgRetweetCount avgViewCount
  retweetRatio replyRatio postCount videoCount lastPublishAt recentMonthPublishCount recentWeekPublishCount
  lastPost { postId description createAt coverUrl likeCount commentCount retweetCount viewCount }
  evaluationMin evaluationMax lastUpdateAt`;

const VIDEO_NODE = `videoId title description coverUrl createAt duration videoUrl
  channelTitle channelId channelAvatar channelFollowerCount videoType categoryId
  likeCount commentCount playCount engagementRate
  channel { channelId title avatar country gender followerCount avgEngagementRate avgPlayCount videoCount evaluationMin evaluationMax }
  lastUpdateAt`;

const SERVICE_CREATORS_TOTAL = `query BenchCreators($filter: CreatorFilter, $sortBy: CreatorSort, $first: Int, $offset: Int) {
  creators(filter: $filter, sortBy: $sortBy, first: $first, offset: $offset) { totalCount nodes { ${CREATOR_NODE} } }
}`;
const SERVICE_CREATORS_WALK = `query BenchCreatorWalk($filter: CreatorFilter, $sortBy: CreatorSort, $first: Int, $after: String) {
  creators(filter: $filter, sortBy: $sortBy, first: $first, after: $after) { pageInfo { hasNextPage endCursor } nodes { ${CREATOR_NODE} } }
}`;
const SERVICE_VIDEOS = `query BenchVideos($filter: VideoFilter, $first: Int, $offset: Int) {
  videos(filter: $filter, sortBy: NEWEST, first: $first, offset: $offset) { totalCount nodes { ${VIDEO_NODE} } }
}`;

const SERVICE_VIDEO_CHANNELS = `query BenchVideoChannels($filter: VideoFilter, $first: Int, $nested: Int) {
  videos(filter: $filter, sortBy: NEWEST, first: $first) { nodes { videoId channel { videos(first: $nested, sortBy: NEWEST) { totalCount nodes { videoId title } } } } }
}`;
const SERVICE_CREATOR_FACETS = `query BenchCreatorFacets($filter: CreatorFilter, $sortBy: CreatorSort, $first: Int, $edges: [SafeInt!]!) {
  creators(filter: $filter, sortBy: $sortBy, first: $first) {
    totalCount
    facets { country { value count } gender { value count } followerCount(edges: $edges) { min max count } }
    nodes { ${CREATOR_NODE} }
  }
}`;
const SERVICE_NODES = `query BenchNodes($ids: [ID!]!) {
  nodes(ids: $ids) { id ... on Creator { userId } ... on Channel { channelId } ... on Video { videoId } }
}`;

const globalId = (ref: NodeRef) =>
  encodeGlobalId(
    ref.type === 'Creator' ? { type: 'Creator', platform: 'twitter', userId: ref.key } : ref.type === 'Channel' ? { type: 'Channel', channelId: ref.key } : { type: 'Video', videoId: ref.key },
  );

/** A service node back to what was asked: its type from the key field it has. */
const serviceRef = (node: Json | null): NodeRef | null =>
  !node ? null : node.userId !== undefined ? { type: 'Creator', key: node.userId } : node.channelId !== undefined ? { type: 'Channel', key: node.channelId } : { type: 'Video', key: node.videoId };

/** A filter in the REST body's wire format: snake_case, integer codes, lowercase enums. */
function restBody(filter: CreatorFilter | VideoFilter | LiveFilter): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(filter)) {
    if (value === undefined) continue;
    if (key === 'gender') body.gender = GENDER_CODES[value as keyof typeof GENDER_CODES];
    else if (key === 'videoType') body.video_type = VIDEO_TYPE_CODES[value as keyof typeof VIDEO_TYPE_CODES];
    else if (value === true) body[toSnake(key)] = 1;
    else body[toSnake(key)] = typeof value === 'string' && /^[A-Z]+$/.test(value) ? value.toLowerCase() : value;
  }
  return body;
}

export function serviceClient(key: string): SystemClient {
  return {
    name: 'service',
    headers: { authorization: key },
    request(session, step, cursor) {
      const page = { page: step + 1, page_size: session.pageSize };
      switch (session.kind) {
        case 'creators':
          if (session.paging === 'cursor') {
            return graphql(SERVICE_CREATORS_WALK, { filter: session.filter, sortBy: session.sort, first: session.pageSize, after: cursor });
          }
          if (session.door === 'graphql') {
            return graphql(SERVICE_CREATORS_TOTAL, { filter: session.filter, sortBy: session.sort, first: session.pageSize, offset: step * session.pageSize });
          }
          return { path: '/api/v1/search/twitter/user', body: JSON.stringify({ ...restBody(session.filter), sort_by: session.sort.toLowerCase(), ...page }) };
        case 'videos':
          if (session.door === 'graphql') return graphql(SERVICE_VIDEOS, { filter: session.filter, first: session.pageSize, offset: step * session.pageSize });
          return { path: '/api/v1/search/youtube/video', body: JSON.stringify({ ...restBody(session.filter), ...page }) };
        case 'videoChannels':
          return graphql(SERVICE_VIDEO_CHANNELS, { filter: session.filter, first: session.pageSize, nested: session.nestedFirst });
        case 'creatorFacets':
          return graphql(SERVICE_CREATOR_FACETS, { filter: session.filter, sortBy: session.sort, first: session.pageSize, edges: session.edges });
        case 'nodes':
          return graphql(SERVICE_NODES, { ids: session.refs.map(globalId) });
        case 'live':
          return {
            path: '/api/v1/twitch/search/live',
            body: JSON.stringify({ ...restBody(session.filter), first: session.pageSize, ...(cursor ? { after: cursor } : {}) }),
          };
      }
    },
    parse(session, body) {
      if (session.kind === 'videoChannels') {
        const nodes = graphqlData(body).videos.nodes as Json[];
        return videoChannelsResult(nodes.map((n) => ({ videoId: n.videoId, nested: { total: n.channel.videos.totalCount, videos: n.channel.videos.nodes } })));
      }
      if (session.kind === 'creatorFacets') {
        const connection = graphqlData(body).creators as Json;
        const { country, gender, followerCount } = connection.facets as { country: Counted; gender: Counted; followerCount: { count: number }[] };
        return {
          total: connection.totalCount,
          ids: (connection.nodes as Json[]).map((n) => n.userId),
          next: null,
          detail: facetsDetail({ country, gender, followers: followerCount.map((b) => b.count) }),
        };
      }
      if (session.kind === 'nodes') return { total: null, ids: (graphqlData(body).nodes as (Json | null)[]).map((n) => refText(serviceRef(n))), next: null };
      if (session.kind === 'live') {
        const { data } = body as { data: { more: boolean; offset: string; data: Json[] } };
        return { total: null, ids: data.data.map((s) => s.id), next: data.more ? data.offset : null };
      }
      if (session.door === 'graphql') {
        const connection = graphqlData(body)[session.kind] as Json;
        return {
          total: connection.totalCount ?? null,
          ids: (connection.nodes as Json[]).map((n) => (session.kind === 'creators' ? n.userId : n.videoId)),
          next: connection.pageInfo?.hasNextPage ? connection.pageInfo.endCursor : null,
        };
      }
      const { data } = body as { data: { total: number; items: Json[] } };
      return { total: data.total, ids: data.items.map((item) => item[session.kind === 'creators' ? 'user_id' : 'video_id']), next: null };
    },
  };
}

// ---- PostGraphile v4 ------------------------------------------------------------------------

const PG_CREATOR_NODE = `userId username fullName avatar country gender followerCount isVerified
  avgEngagementRate avgVideoEngagementRate avgCommentCount avgLikeCount avgRetweetCount avgViewCount
  retweetRatio replyRatio postCount videoCount lastPublishAt recentMonthPublishCount recentWeekPublishCount
  lastPost evaluationMin evaluationMax lastUpdateAt`;

const PG_VIDEO_NODE = `videoId title description coverUrl createAt durationSeconds videoUrl videoType categoryId
  likeCount commentCount playCount engagementRate lastUpdateAt
  channelByChannelId { channelId title avatar country gender followerCount avgEngagementRate avgPlayCount videoCount evaluationMin evaluationMax }`;

const PG_CREATORS_TOTAL = `query BenchCreators($filter: CreatorFilter, $orderBy: [CreatorsOrderBy!], $first: Int, $offset: Int) {
  allCreators(filter: $filter, orderBy: $orderBy, first: $first, offset: $offset) { totalCount nodes { ${PG_CREATOR_NODE} } }
}`;
const PG_CREATORS_WALK = `query BenchCreatorWalk($filter: CreatorFilter, $orderBy: [CreatorsOrderBy!], $first: Int, $after: Cursor) {
  allCreators(filter: $filter, orderBy: $orderBy, first: $first, after: $after) { pageInfo { hasNextPage endCursor } nodes { ${PG_CREATOR_NODE} } }
}`;
const PG_VIDEOS = `query BenchVideos($filter: VideoFilter, $first: Int, $offset: Int) {
  allVideos(filter: $filter, orderBy: [CREATE_AT_DESC, VIDEO_ID_DESC], first: $first, offset: $offset) { totalCount nodes { ${PG_VIDEO_NODE} } }
}`;
const PG_LIVE = `query BenchLive($filter: LiveStreamFilter, $first: Int, $after: Cursor) {
  allLiveStreams(filter: $filter, orderBy: [VIEWER_COUNT_DESC, ID_DESC], first: $first, after: $after) { pageInfo { hasNextPage endCursor } nodes { id userId userLogin userName gameId gameName type title viewerCount startedAt language thumbnailUrl tags isMature lastUpdateAt } }
}`;

const PG_ORDER_NEWEST = '[CREATE_AT_DESC, VIDEO_ID_DESC]';
const PG_VIDEO_CHANNELS = `query BenchVideoChannels($filter: VideoFilter, $first: Int, $nested: Int) {
  allVideos(filter: $filter, orderBy: ${PG_ORDER_NEWEST}, first: $first) {
    nodes { videoId channelByChannelId { videosByChannelId(first: $nested, orderBy: ${PG_ORDER_NEWEST}) { totalCount nodes { videoId title } } } }
  }
}`;
/** The facets document for a histogram of `buckets` buckets: one aliased count per bucket. */
const pgCreatorFacets = (buckets: number) => `query BenchCreatorFacets($filter: CreatorFilter, $orderBy: [CreatorsOrderBy!], $first: Int${Array.from({ length: buckets }, (_, i) => `, $b${i}: CreatorFilter`).join('')}) {
  allCreators(filter: $filter, orderBy: $orderBy, first: $first) {
    totalCount
    country: groupedAggregates(groupBy: [COUNTRY]) { keys distinctCount { userId } }
    gender: groupedAggregates(groupBy: [GENDER]) { keys distinctCount { userId } }
    nodes { ${PG_CREATOR_NODE} }
  }
${Array.from({ length: buckets }, (_, i) => `  b${i}: allCreators(filter: $b${i}) { totalCount }`).join('\n')}
}`;
const PG_NODES = `query BenchNodes($creators: CreatorFilter, $channels: ChannelFilter, $videos: VideoFilter) {
  allCreators(filter: $creators) { nodes { nodeId userId } }
  allChannels(filter: $channels) { nodes { nodeId channelId } }
  allVideos(filter: $videos) { nodes { nodeId videoId } }
}`;

// bigint and numeric columns are strings in PostGraphile v4 (BigInt, BigFloat); int columns are Int.
const atLeast = (value: number) => ({ greaterThanOrEqualTo: String(value) });
function range(min: number | undefined, max: number | undefined): Json | undefined {
  if (min == null && max == null) return undefined;
  return { ...(min != null ? atLeast(min) : {}), ...(max != null ? { lessThanOrEqualTo: String(max) } : {}) };
}
function days(start: string | undefined, end: string | undefined): Json | undefined {
  const { from, before } = dayBounds(start, end);
  if (!from && !before) return undefined;
  return { ...(from ? { greaterThanOrEqualTo: from } : {}), ...(before ? { lessThan: before } : {}) };
}
const textMatch = (query: string | undefined, columns: [string, string]) =>
  query ? { or: columns.map((column) => ({ [column]: { includesInsensitive: query } })) } : {};
const defined = (object: Json): Json => Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));
/** The connection-filter plugin refuses `{}` and null: no condition is no filter argument at all. */
const orNothing = (filter: Json): Json | undefined => (Object.keys(filter).length ? filter : undefined);

function pgCreatorFilter(filter: CreatorFilter, taxonomy: readonly Category[]): Json {
  return defined({
    platform: { equalTo: 'twitter' },
    ...textMatch(filter.query, ['username', 'fullName']),
    categoryIds: filter.categoryIds?.length ? { overlaps: expandCategoryIds(filter.categoryIds, taxonomy) } : undefined,
    country: filter.locations?.length ? { in: filter.locations.map((c) => c.toUpperCase()) } : undefined,
    language: filter.languages?.length ? { in: filter.languages.map((c) => c.toLowerCase()) } : undefined,
    followerCount: range(filter.followerCountMin, filter.followerCountMax),
    avgEngagementRate: range(filter.avgEngagementRateMin, filter.avgEngagementRateMax),
    recentMonthPublishCount: filter.recentMonthPublishCountMin != null ? { greaterThanOrEqualTo: filter.recentMonthPublishCountMin } : undefined,
    lastPublishAt: days(filter.createAtStart, filter.createAtEnd),
    gender: filter.gender ? { equalTo: GENDER_CODES[filter.gender] } : undefined,
    isVerified: filter.verified ? { equalTo: true } : undefined,
    hasEmail: filter.hasEmail ? { equalTo: true } : undefined,
  });
}

function pgVideoFilter(filter: VideoFilter): Json {
  const channel = defined({
    country: filter.locations?.length ? { in: filter.locations.map((c) => c.toUpperCase()) } : undefined,
    gender: filter.gender ? { equalTo: GENDER_CODES[filter.gender] } : undefined,
    followerCount: range(filter.followerCountMin, filter.followerCountMax),
  });
  return defined({
    ...textMatch(filter.query, ['title', 'description']),
    categoryId: filter.categorys?.length ? { in: filter.categorys } : undefined,
    createAt: days(filter.createAtStart, filter.createAtEnd),
    videoType: filter.videoType ? { equalTo: VIDEO_TYPE_CODES[filter.videoType] } : undefined,
    channelByChannelId: orNothing(channel),
  });
}

function pgLiveFilter(filter: LiveFilter): Json {
  return defined({
    language: filter.language ? { equalTo: filter.language.toLowerCase() } : undefined,
    gameId: filter.gameId ? { equalTo: filter.gameId } : undefined,
    type: filter.type === 'LIVE' ? { equalTo: 'live' } : undefined,
  });
}

/** The histogram's buckets as filters: (−∞, e0), [e0, e1), …, [en, +∞), one more than the edges. */
const pgBuckets = (edges: readonly number[]): Json[] =>
  Array.from({ length: edges.length + 1 }, (_, i) => ({
    followerCount: defined({ greaterThanOrEqualTo: i > 0 ? String(edges[i - 1]) : undefined, lessThan: i < edges.length ? String(edges[i]) : undefined }),
  }));

/** A grouped count of pg-aggregates as the service's facet. */
const pgFacet = (groups: { keys: string[]; distinctCount: { userId: string } }[], spell: (key: string) => string = (key) => key): Counted =>
  facetOrder(groups.map((g) => ({ value: spell(g.keys[0]), count: Number(g.distinctCount.userId) })));

const PG_CREATOR_ORDER = { FOLLOWER_COUNT: ['FOLLOWER_COUNT_DESC', 'USER_ID_DESC'], ENGAGEMENT_RATE: ['AVG_ENGAGEMENT_RATE_DESC', 'USER_ID_DESC'] };

export function postgraphileClient(taxonomy: readonly Category[]): SystemClient {
  return {
    name: 'postgraphile',
    headers: {},
    request(session, step, cursor) {
      switch (session.kind) {
        case 'creators': {
          const common = { filter: pgCreatorFilter(session.filter, taxonomy), orderBy: PG_CREATOR_ORDER[session.sort], first: session.pageSize };
          return session.paging === 'cursor'
            ? graphql(PG_CREATORS_WALK, { ...common, after: cursor })
            : graphql(PG_CREATORS_TOTAL, { ...common, offset: step * session.pageSize });
        }
        case 'videos':
          return graphql(PG_VIDEOS, { filter: orNothing(pgVideoFilter(session.filter)), first: session.pageSize, offset: step * session.pageSize });
        case 'videoChannels':
          return graphql(PG_VIDEO_CHANNELS, { filter: orNothing(pgVideoFilter(session.filter)), first: session.pageSize, nested: session.nestedFirst });
        case 'creatorFacets': {
          const filter = pgCreatorFilter(session.filter, taxonomy);
          const buckets = Object.fromEntries(pgBuckets(session.edges).map((bucket, i) => [`b${i}`, { and: [filter, bucket] }]));
          return graphql(pgCreatorFacets(session.edges.length + 1), { filter, orderBy: PG_CREATOR_ORDER[session.sort], first: session.pageSize, ...buckets });
        }
        case 'nodes': {
          const keys = keysByType(session.refs);
          return graphql(PG_NODES, {
            creators: { platform: { equalTo: 'twitter' }, userId: { in: keys.Creator } },
            channels: { channelId: { in: keys.Channel } },
            videos: { videoId: { in: keys.Video } },
          });
        }
        case 'live':
          return graphql(PG_LIVE, { filter: orNothing(pgLiveFilter(session.filter)), first: session.pageSize, after: cursor });
      }
    },
    parse(session, body) {
      if (session.kind === 'videoChannels') {
        const nodes = graphqlData(body).allVideos.nodes as Json[];
        return videoChannelsResult(
          nodes.map((n) => ({ videoId: n.videoId, nested: { total: n.channelByChannelId.videosByChannelId.totalCount, videos: n.channelByChannelId.videosByChannelId.nodes } })),
        );
      }
      if (session.kind === 'creatorFacets') {
        const data = graphqlData(body);
        const connection = data.allCreators as Json;
        return {
          total: connection.totalCount,
          ids: (connection.nodes as Json[]).map((n) => n.userId),
          next: null,
          detail: facetsDetail({
            country: pgFacet(connection.country),
            gender: pgFacet(connection.gender, (code) => GENDER_NAMES[Number(code)]),
            followers: Array.from({ length: session.edges.length + 1 }, (_, i) => data[`b${i}`].totalCount as number),
          }),
        };
      }
      if (session.kind === 'nodes') {
        const data = graphqlData(body);
        const keys = (root: string, field: string) => (data[root].nodes as Json[]).map((n) => n[field] as string);
        return inAskedOrder(session.refs, { Creator: keys('allCreators', 'userId'), Channel: keys('allChannels', 'channelId'), Video: keys('allVideos', 'videoId') });
      }
      const root = { creators: 'allCreators', videos: 'allVideos', live: 'allLiveStreams' }[session.kind];
      const idOf = { creators: 'userId', videos: 'videoId', live: 'id' }[session.kind];
      const connection = graphqlData(body)[root] as Json;
      return {
        total: connection.totalCount ?? null,
        ids: (connection.nodes as Json[]).map((node) => node[idOf]),
        next: connection.pageInfo?.hasNextPage ? connection.pageInfo.endCursor : null,
      };
    },
  };
}

// ---- the raw-SQL floor ----------------------------------------------------------------------

export function floorClient(): SystemClient {
  return {
    name: 'floor',
    headers: {},
    request(session, step, cursor) {
      let request: FloorRequest;
      switch (session.kind) {
        case 'creators':
          request =
            session.paging === 'cursor'
              ? { kind: 'creators', filter: session.filter, sort: session.sort, pageSize: session.pageSize, after: cursor, total: false }
              : { kind: 'creators', filter: session.filter, sort: session.sort, pageSize: session.pageSize, page: step + 1, total: true };
          break;
        case 'videos':
          // The REST video search orders a query's matches by relevance (GraphQL asks for newest).
          request = { kind: 'videos', filter: session.filter, pageSize: session.pageSize, page: step + 1, total: true, relevance: session.door === 'rest' && !!session.filter.query };
          break;
        case 'live':
          request = { kind: 'live', filter: session.filter, pageSize: session.pageSize, after: cursor };
          break;
        case 'videoChannels':
          request = { kind: 'videoChannels', filter: session.filter, pageSize: session.pageSize, nestedFirst: session.nestedFirst };
          break;
        case 'creatorFacets':
          request = { kind: 'creatorFacets', filter: session.filter, sort: session.sort, pageSize: session.pageSize, edges: session.edges };
          break;
        case 'nodes':
          request = { kind: 'nodes', keys: keysByType(session.refs) };
          break;
      }
      return { path: `/${session.kind}`, body: JSON.stringify(request) };
    },
    parse(session, body) {
      const answer = body as FloorResponse;
      if (session.kind === 'videoChannels') {
        return videoChannelsResult(
          answer.items.map((item) => ({
            videoId: item.video_id as string,
            nested: { total: item.total as number, videos: (item.videos as Json[]).map((v) => ({ videoId: v.video_id, title: v.title })) },
          })),
        );
      }
      if (session.kind === 'creatorFacets') {
        const facets = answer.facets!;
        return {
          total: answer.total!,
          ids: answer.items.map((item) => item.user_id as string),
          next: null,
          detail: facetsDetail({
            country: facetOrder(facets.country),
            gender: facetOrder(facets.gender.map((g) => ({ value: GENDER_NAMES[g.value], count: g.count }))),
            followers: facets.followers,
          }),
        };
      }
      if (session.kind === 'nodes') return inAskedOrder(session.refs, answer.found!);
      const idOf = { creators: 'user_id', videos: 'video_id', live: 'id' }[session.kind];
      return { total: answer.total ?? null, ids: answer.items.map((item) => item[idOf] as string), next: answer.next ?? null };
    },
  };
}

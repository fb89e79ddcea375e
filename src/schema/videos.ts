import { checkCursors } from '../domain/cursors.js';
import type { FacetRequest, VideoFacet } from '../domain/facets.js';
import { videoOrders } from '../domain/orders.js';
import type { Channel, Video } from '../domain/records.js';
import { valueFacetArgs } from '../inputs/facets.js';
import { channelLookupArgs, videoLookupArgs } from '../inputs/lookups.js';
import { channelVideoFilterShape, channelVideosArgs, defaultVideoSort, videoFilterShape, videosArgs, type VideoSearch, videoSort, videoTypeSchema } from '../inputs/videos.js';
import { countVideos, searchVideos, videoFacets } from '../store/videos.js';
import type { ChannelVideosQuery } from './loaders.js';
import { builder } from './builder.js';
import { categoriesOf, CategoryType } from './categories.js';
import { connectionType, facetAlone, indexedConnection, pageArgs, searchConnection, selectsTotalCount, sqlFacetSource } from './connection.js';
import type { Context } from './context.js';
import { facetsType, requestedFacets } from './facets.js';
import { Gender } from './gender.js';
import { NodeRef } from './node.js';
import { enumFromZod, inputFromZod } from './zod-input.js';

const videoIdOf = (video: Video) => video.videoId;

const VideoKind = enumFromZod('VideoType', videoTypeSchema);
const VideoSort = enumFromZod('VideoSort', videoSort);
const VideoFilter = inputFromZod('VideoFilter', videoFilterShape, "Video search filters; channel metrics filter on the video's channel");

const ChannelVideoFilter = inputFromZod('ChannelVideoFilter', channelVideoFilterShape, "Filters on a channel's own videos: the video filter without the channel conditions");

// Declared before they are implemented: a channel's videos and a video's channel refer to each other.
export const ChannelType = builder.objectRef<Channel>('Channel');
export const VideoObject = builder.objectRef<Video>('Video');
export const VideoFacets = facetsType<VideoFacet>('VideoFacets', "Exact counts of a video search's matches", [
  { facet: 'category', description: "By the video's category id; label: its name", args: valueFacetArgs, categoryLabels: true },
  { facet: 'videoType', description: 'By type ("video", "short")', args: valueFacetArgs },
  { facet: 'channelCountry', description: "By the channel's country code", args: valueFacetArgs },
  { facet: 'month', description: 'By publish month in UTC ("2026-03")', args: valueFacetArgs },
]);

export const VideoConnection = connectionType<Video>('Video', VideoObject, VideoFacets);

ChannelType.implement({
  description: 'A channel on the video platform, with summary metrics',
  interfaces: [NodeRef],
  fields: (t) => ({
    channelId: t.exposeString('channelId'),
    title: t.exposeString('title'),
    avatar: t.exposeString('avatar'),
    country: t.exposeString('country'),
    language: t.exposeString('language'),
    gender: t.expose('gender', { type: Gender }),
    followerCount: t.expose('followerCount', { type: 'SafeInt' }),
    avgEngagementRate: t.expose('avgEngagementRate', { type: 'Decimal', description: 'Percent' }),
    avgPlayCount: t.expose('avgPlayCount', { type: 'Decimal' }),
    avgLikeCount: t.expose('avgLikeCount', { type: 'Decimal' }),
    avgCommentCount: t.expose('avgCommentCount', { type: 'Decimal' }),
    videoCount: t.expose('videoCount', { type: 'SafeInt' }),
    recentMonthPublishCount: t.expose('recentMonthPublishCount', { type: 'SafeInt' }),
    evaluationMin: t.expose('evaluationMin', { type: 'Decimal', description: 'Estimated USD price of one sponsored video' }),
    evaluationMax: t.expose('evaluationMax', { type: 'Decimal', description: 'Estimated USD price of one sponsored video' }),
    lastUpdateAt: t.expose('lastUpdateAt', { type: 'DateTime' }),
    videos: t.field({
      type: VideoConnection,
      description: "The channel's videos matching the filter, as video search finds them; totalCount is the channel's",
      args: {
        filter: t.arg({ type: ChannelVideoFilter }),
        sortBy: t.arg({ type: VideoSort }),
        ...pageArgs(t.arg),
      },
      resolve: async (channel, rawArgs, ctx, info) => {
        const query = ctx.perField(info, (): ChannelVideosQuery => {
          const { filter, sortBy, ...page } = ctx.validated(channelVideosArgs, rawArgs);
          const sort = sortBy ?? defaultVideoSort(filter ?? {});
          checkCursors(videoOrders[sort], page);
          return { filter: filter ?? {}, sort, page, facets: requestedFacets(info, ctx, VideoFacets) };
        });
        // Batched with the same field under every other channel of the page (src/schema/loaders.ts).
        const found = await ctx.loaders.channelVideos.load({ query, channelId: channel.channelId });
        const search: VideoSearch = { filter: query.filter, sort: query.sort, channelId: channel.channelId };
        const alone = facetAlone((requests: readonly FacetRequest<VideoFacet>[]) => videoFacets(ctx.readDb, search, requests));
        if (found.indexed) {
          return indexedConnection(found.indexed, found.rows, videoOrders[query.sort], videoIdOf, query.facets, alone, () => countVideos(ctx.readDb, search));
        }
        return { page: found.page, totalCount: () => found.total, facets: sqlFacetSource(query.facets, alone) };
      },
    }),
  }),
});

// The channel of a video, through the request's DataLoader: one query per page, never per video.
async function channelOf(video: Video, ctx: Context): Promise<Channel> {
  const channel = await ctx.loaders.channel.load(video.channelId);
  if (!channel) throw new Error(`video ${video.videoId} references a missing channel`);
  return channel;
}

VideoObject.implement({
  description: 'A video on the video platform, with its channel and engagement counters',
  interfaces: [NodeRef],
  fields: (t) => ({
    videoId: t.exposeString('videoId'),
    title: t.exposeString('title'),
    description: t.exposeString('description'),
    coverUrl: t.exposeString('coverUrl'),
    createAt: t.expose('createAt', { type: 'DateTime' }),
    duration: t.exposeString('duration', { description: 'ISO 8601 duration (PT4M13S)' }),
    videoUrl: t.exposeString('videoUrl'),
    channelTitle: t.string({ resolve: async (v, _a, ctx) => (await channelOf(v, ctx)).title }),
    channelId: t.exposeString('channelId'),
    channelAvatar: t.string({ resolve: async (v, _a, ctx) => (await channelOf(v, ctx)).avatar }),
    channelFollowerCount: t.field({ type: 'SafeInt', resolve: async (v, _a, ctx) => (await channelOf(v, ctx)).followerCount }),
    videoType: t.expose('videoType', { type: VideoKind }),
    categoryId: t.exposeInt('categoryId'),
    likeCount: t.expose('likeCount', { type: 'SafeInt' }),
    commentCount: t.expose('commentCount', { type: 'SafeInt' }),
    playCount: t.expose('playCount', { type: 'SafeInt' }),
    engagementRate: t.expose('engagementRate', { type: 'Decimal', description: 'Percent' }),
    channel: t.field({ type: ChannelType, resolve: (v, _a, ctx) => channelOf(v, ctx) }),
    category: t.field({
      type: CategoryType,
      nullable: true,
      description: 'The category of categoryId; null when the taxonomy has none',
      resolve: async (v, _a, ctx) => (await categoriesOf(ctx, [v.categoryId]))[0] ?? null,
    }),
    lastUpdateAt: t.expose('lastUpdateAt', { type: 'DateTime', description: 'When the record was last collected or imported' }),
  }),
});

builder.queryField('videos', (t) =>
  t.field({
    type: VideoConnection,
    nullable: true,
    description: 'Video search (REST: POST /api/v1/search/youtube/video); 100 quota units',
    args: {
      filter: t.arg({ type: VideoFilter }),
      sortBy: t.arg({ type: VideoSort }),
      ...pageArgs(t.arg),
    },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(videosArgs, rawArgs);
      const filter = args.filter ?? {};
      const search: VideoSearch = { filter, sort: args.sortBy ?? defaultVideoSort(filter) };
      const order = videoOrders[search.sort];
      checkCursors(order, args);
      const facets = requestedFacets(info, ctx, VideoFacets);
      await ctx.access.reserve('search.videos', info.path.key as string);
      // Without totalCount or facets a newest-first page may be walked without counting (VideoIndex.search).
      const needsTotal = selectsTotalCount(info);
      return searchConnection(info, ctx.services.search?.videos(search, args, facets, needsTotal, ctx.access.caller?.accountId) ?? null, {
        order,
        facets: { requested: facets, sql: (requests) => videoFacets(ctx.readDb, search, requests) },
        rowsById: ctx.videosById,
        idOf: videoIdOf,
        cache: ctx.services.search?.rows.videos,
        sqlPage: () => searchVideos(ctx.readDb, search, args),
        sqlCount: () => countVideos(ctx.readDb, search),
      });
    },
  }),
);

builder.queryField('channel', (t) =>
  t.field({
    type: ChannelType,
    nullable: true,
    description: 'A channel by id; null when there is none. 1 quota unit',
    args: { channelId: t.arg.string({ required: true }) },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(channelLookupArgs, rawArgs);
      await ctx.access.reserve('graph.lookup', info.path.key as string);
      return ctx.loaders.channel.load(args.channelId);
    },
  }),
);

builder.queryField('video', (t) =>
  t.field({
    type: VideoObject,
    nullable: true,
    description: 'A video by id; null when there is none. 1 quota unit',
    args: { videoId: t.arg.string({ required: true }) },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(videoLookupArgs, rawArgs);
      await ctx.access.reserve('graph.lookup', info.path.key as string);
      return ctx.loaders.video.load(args.videoId);
    },
  }),
);

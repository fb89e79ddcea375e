import { checkCursors } from '../domain/cursors.js';
import type { VideoFacet } from '../domain/facets.js';
import { videoOrders } from '../domain/orders.js';
import type { Channel, Video } from '../domain/records.js';
import { valueFacetArgs } from '../inputs/facets.js';
import { defaultVideoSort, videoFilterShape, videosArgs, type VideoSearch, videoSort, videoTypeSchema } from '../inputs/videos.js';
import { countVideos, searchVideos, videoFacets } from '../store/videos.js';
import { builder } from './builder.js';
import { connectionType, searchConnection } from './connection.js';
import { facetsType, requestedFacets } from './facets.js';
import type { Context } from './context.js';
import { Gender } from './gender.js';
import { enumFromZod, inputFromZod } from './zod-input.js';

const VideoKind = enumFromZod('VideoType', videoTypeSchema);
const VideoSort = enumFromZod('VideoSort', videoSort);
const VideoFilter = inputFromZod('VideoFilter', videoFilterShape, "Video search filters; channel metrics filter on the video's channel");

export const ChannelType = builder.objectRef<Channel>('Channel').implement({
  description: 'A channel on the video platform, with summary metrics',
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
  }),
});

// The channel of a video, through the request's DataLoader: one query per page, never per video.
async function channelOf(video: Video, ctx: Context): Promise<Channel> {
  const channel = await ctx.loaders.channel.load(video.channelId);
  if (!channel) throw new Error(`video ${video.videoId} references a missing channel`);
  return channel;
}

export const VideoObject = builder.objectRef<Video>('Video').implement({
  description: 'A video on the video platform, with its channel and engagement counters',
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
    lastUpdateAt: t.expose('lastUpdateAt', { type: 'DateTime', description: 'When the record was last collected or imported' }),
  }),
});

export const VideoFacets = facetsType<VideoFacet>('VideoFacets', "Exact counts of a video search's matches", [
  { facet: 'category', description: "By the video's category id; label: its name", args: valueFacetArgs, categoryLabels: true },
  { facet: 'videoType', description: 'By type ("video", "short")', args: valueFacetArgs },
  { facet: 'channelCountry', description: "By the channel's country code", args: valueFacetArgs },
  { facet: 'month', description: 'By publish month in UTC ("2026-03")', args: valueFacetArgs },
]);

export const VideoConnection = connectionType<Video>('Video', VideoObject, VideoFacets);

builder.queryField('videos', (t) =>
  t.field({
    type: VideoConnection,
    nullable: true,
    description: 'Video search (REST: POST /api/v1/search/youtube/video); 100 quota units',
    args: {
      filter: t.arg({ type: VideoFilter }),
      sortBy: t.arg({ type: VideoSort }),
      first: t.arg.int(),
      last: t.arg.int(),
      after: t.arg.string(),
      before: t.arg.string(),
      offset: t.arg.int(),
    },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(videosArgs, rawArgs);
      const filter = args.filter ?? {};
      const search: VideoSearch = { filter, sort: args.sortBy ?? defaultVideoSort(filter) };
      checkCursors(videoOrders[search.sort], args);
      const facets = requestedFacets(info, ctx, VideoFacets);
      await ctx.access.reserve('search.videos', info.path.key as string);
      return searchConnection(info, ctx.services.search?.videos(search, args, facets) ?? null, {
        facets: { requested: facets, sql: (requests) => videoFacets(ctx.readDb, search, requests) },
        rowsById: ctx.videosById,
        idOf: (video) => video.videoId,
        cache: ctx.services.search?.rows.videos,
        sqlPage: () => searchVideos(ctx.readDb, search, args),
        sqlCount: () => countVideos(ctx.readDb, search),
      });
    },
  }),
);


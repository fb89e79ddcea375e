import { z } from 'zod';
import { channelNumericBounds } from '../domain/bounds.js';
import { type VideoSort, videoSorts } from '../domain/orders.js';
import {
  audienceFilterShape,
  checkConnectionArgs,
  checkOffsetWindow,
  checkRanges,
  connectionArgsShape,
  countryCodes,
  filterSchema,
  instant,
  INT32_MAX,
  pageShape,
  searchQuery,
} from './common.js';

export const videoTypeSchema = z.enum(['VIDEO', 'SHORT']).describe('VIDEO (1 in REST) or SHORT (2 in REST)');

// Video search filters (contract §4.2). Channel metrics filter on the video's channel.
export const videoFilterShape = {
  query: searchQuery.nullish().describe('Case-insensitive substring of title or description'),
  categorys: z.array(z.int().nonnegative().max(INT32_MAX)).max(100).nullish().describe("The video's category ids (the contract's spelling)"),
  locations: countryCodes.nullish().describe("The channel's country, ISO 3166-1 alpha-2"),
  ...audienceFilterShape,
  createAtStart: instant.nullish().describe('Video publish time from (ISO 8601 date or date-time)'),
  createAtEnd: instant.nullish().describe('Video publish time to, inclusive (ISO 8601 date or date-time)'),
  videoType: videoTypeSchema.nullish(),
};

export const videoFilter = filterSchema(videoFilterShape);
export type VideoFilter = z.infer<typeof videoFilter>;

export const videoSort = z
  .enum(videoSorts)
  .describe('Video order, always descending; RELEVANCE by default with a query, else NEWEST');
export type { VideoSort };

export const videoSearchBody = z
  .strictObject({ ...videoFilterShape, ...pageShape })
  .superRefine(checkRanges)
  .superRefine(checkOffsetWindow);

export const videosArgs = z
  .object({ filter: videoFilter.nullish(), sortBy: videoSort.nullish(), ...connectionArgsShape })
  .superRefine(checkConnectionArgs);

/** The filter fields that bound the video's channel: a channel's own videos (`Channel.videos`) have none. */
const channelConditionFields = ['locations', 'gender', ...channelNumericBounds.flatMap(([min, max]) => [min, max])] as const;
type ChannelConditionField = (typeof channelConditionFields)[number];

function withoutChannelConditions<Shape extends Record<string, z.ZodType>>(shape: Shape): Omit<Shape, ChannelConditionField> {
  const fields = new Set<string>(channelConditionFields);
  return Object.fromEntries(Object.entries(shape).filter(([field]) => !fields.has(field))) as Omit<Shape, ChannelConditionField>;
}

// `Channel.videos`: the video filter without the channel conditions (the channel is given).
export const channelVideoFilterShape = withoutChannelConditions(videoFilterShape);
export const channelVideoFilter = filterSchema(channelVideoFilterShape);

export const channelVideosArgs = z
  .object({ filter: channelVideoFilter.nullish(), sortBy: videoSort.nullish(), ...connectionArgsShape })
  .superRefine(checkConnectionArgs);

/** A validated video search: the filter and the order it is read in. */
export interface VideoSearch {
  filter: VideoFilter;
  sort: VideoSort;
  /** Only this channel's videos (`Channel.videos`); the filter then has no channel conditions. */
  channelId?: string | null;
}

export function defaultVideoSort(filter: VideoFilter): VideoSort {
  return filter.query ? 'RELEVANCE' : 'NEWEST';
}

/** Whether the filter bounds the video's channel (then the channel is joined). */
export function needsChannel(filter: VideoFilter): boolean {
  return Boolean(
    filter.locations?.length || filter.gender || channelNumericBounds.some(([min, max]) => filter[min] != null || filter[max] != null),
  );
}

import { z } from 'zod';
import type { CreatorFacet, FacetRequest, LiveStreamFacet, VideoFacet } from '../domain/facets.js';
import { METRIC_LIMIT } from './common.js';
import type { CreatorSearch } from './creators.js';
import type { LiveStreamFilter } from './live-streams.js';
import type { VideoSearch } from './videos.js';

// The arguments of a connection's facets (docs/contract/decisions.md §6.1), and what "without its
// own condition" means for each facet: the one definition the index and the SQL path both use.

/** At most this many edges per histogram: 51 buckets, one pass over the matches either way. */
export const MAX_FACET_EDGES = 50;

const excludeOwn = z.boolean().nullish().describe("true: count as if the filter's conditions on this field were absent");

export const valueFacetArgs = z.object({ excludeOwn });

function edgesOf<T extends z.ZodNumber>(item: T) {
  return z
    .array(item)
    .min(1)
    .max(MAX_FACET_EDGES)
    .superRefine((edges, ctx) => {
      const at = edges.findIndex((edge, i) => i > 0 && edge <= edges[i - 1]);
      if (at !== -1) ctx.addIssue({ code: 'custom', message: `must be strictly increasing (${edges[at]} follows ${edges[at - 1]})` });
    })
    .describe(`Bucket edges e0 < e1 < … (1 to ${MAX_FACET_EDGES}): buckets (-inf, e0), [e0, e1), …, [en, +inf)`);
}

export const followerFacetArgs = z.object({ edges: edgesOf(z.int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER)), excludeOwn });
export const engagementFacetArgs = z.object({ edges: edgesOf(z.number().gt(-METRIC_LIMIT).lt(METRIC_LIMIT)), excludeOwn });

/** A facet's validated arguments as a request. */
export function facetRequest<F extends string>(facet: F, args: { excludeOwn?: boolean | null; edges?: readonly number[] }): FacetRequest<F> {
  return args.edges ? { facet, excludeOwn: args.excludeOwn === true, edges: args.edges } : { facet, excludeOwn: args.excludeOwn === true };
}

/** The creator search a facet counts on: the search itself, or without the facet's own conditions. */
export function creatorFacetSearch(search: CreatorSearch, request: FacetRequest<CreatorFacet>): CreatorSearch {
  if (!request.excludeOwn) return search;
  const filter = { ...search.filter };
  switch (request.facet) {
    case 'country':
      filter.locations = null;
      break;
    case 'language':
      filter.languages = null;
      break;
    case 'gender':
      filter.gender = null;
      break;
    case 'category':
      filter.categoryIds = null;
      return { ...search, filter, categoryIds: null };
    case 'verified':
      filter.verified = null;
      break;
    case 'hasEmail':
      filter.hasEmail = null;
      break;
    case 'followerCount':
      filter.followerCountMin = null;
      filter.followerCountMax = null;
      break;
    case 'avgEngagementRate':
      filter.avgEngagementRateMin = null;
      filter.avgEngagementRateMax = null;
      break;
  }
  return { ...search, filter };
}

/** The video search a facet counts on. */
export function videoFacetSearch(search: VideoSearch, request: FacetRequest<VideoFacet>): VideoSearch {
  if (!request.excludeOwn) return search;
  const filter = { ...search.filter };
  switch (request.facet) {
    case 'category':
      filter.categorys = null;
      break;
    case 'videoType':
      filter.videoType = null;
      break;
    case 'channelCountry':
      filter.locations = null;
      break;
    case 'month':
      filter.createAtStart = null;
      filter.createAtEnd = null;
      break;
  }
  return { ...search, filter };
}

/** The live-stream filter a facet counts on. */
export function liveStreamFacetFilter(filter: LiveStreamFilter, request: FacetRequest<LiveStreamFacet>): LiveStreamFilter {
  if (!request.excludeOwn) return filter;
  return request.facet === 'game' ? { ...filter, gameId: null } : { ...filter, language: null };
}

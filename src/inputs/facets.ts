import { z } from 'zod';
import type { CreatorFacet, FacetRequest, LiveStreamFacet, VideoFacet } from '../domain/facets.js';
import { METRIC_LIMIT } from './common.js';
import type { CreatorFilter, CreatorSearch } from './creators.js';
import type { LiveStreamFilter } from './live-streams.js';
import type { VideoFilter, VideoSearch } from './videos.js';

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

// Each facet's own conditions: the filter fields that "without its own condition" leaves out.
const creatorFacetFields: Record<CreatorFacet, readonly (keyof CreatorFilter)[]> = {
  country: ['locations'],
  language: ['languages'],
  gender: ['gender'],
  category: ['categoryIds'],
  verified: ['verified'],
  hasEmail: ['hasEmail'],
  followerCount: ['followerCountMin', 'followerCountMax'],
  avgEngagementRate: ['avgEngagementRateMin', 'avgEngagementRateMax'],
};
const videoFacetFields: Record<VideoFacet, readonly (keyof VideoFilter)[]> = {
  category: ['categorys'],
  videoType: ['videoType'],
  channelCountry: ['locations'],
  month: ['createAtStart', 'createAtEnd'],
};
const liveStreamFacetFields: Record<LiveStreamFacet, readonly (keyof LiveStreamFilter)[]> = {
  game: ['gameId'],
  language: ['language'],
};

function without<F extends object>(filter: F, fields: readonly (keyof F)[]): F {
  const rest = { ...filter };
  for (const field of fields) (rest as Record<keyof F, unknown>)[field] = null;
  return rest;
}

/** The creator search a facet counts on: the search itself, or without the facet's own conditions. */
export function creatorFacetSearch(search: CreatorSearch, request: FacetRequest<CreatorFacet>): CreatorSearch {
  if (!request.excludeOwn) return search;
  const filter = without(search.filter, creatorFacetFields[request.facet]);
  // The category condition is also the expanded ids the search carries beside its filter.
  return request.facet === 'category' ? { ...search, filter, categoryIds: null } : { ...search, filter };
}

/** The video search a facet counts on. */
export function videoFacetSearch(search: VideoSearch, request: FacetRequest<VideoFacet>): VideoSearch {
  return request.excludeOwn ? { ...search, filter: without(search.filter, videoFacetFields[request.facet]) } : search;
}

/** The live-stream filter a facet counts on. */
export function liveStreamFacetFilter(filter: LiveStreamFilter, request: FacetRequest<LiveStreamFacet>): LiveStreamFilter {
  return request.excludeOwn ? without(filter, liveStreamFacetFields[request.facet]) : filter;
}

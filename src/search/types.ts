import type { PageArgs } from '../domain/cursors.js';
import type { CreatorFacet, FacetAnswer, FacetRequest, LiveStreamFacet, VideoFacet } from '../domain/facets.js';
import type { Channel, Creator, LiveStream, Video } from '../domain/records.js';
import type { CreatorSearch } from '../inputs/creators.js';
import type { LiveStreamFilter } from '../inputs/live-streams.js';
import type { VideoSearch } from '../inputs/videos.js';
import type { SearchRows } from './row-cache.js';

// What the rest of the service sees of the search index: a search answers the exact total and the
// page's ids and their places in the order (the rows are read by key, src/store/), or null while its table is not
// loaded (the caller then runs the SQL path). primitives/ are the data structures, tables/ the
// three tables' indexes over them, runtime/ loads them, follows the change feed and runs the thread.

/** One page as the index answers it. */
export interface IndexPage {
  ids: string[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  /** The exact number of matches; null when the caller said it needs none (see Search.videos). */
  total: number | null;
  /**
   * Each row's place in its order as two numbers, its tier (relevance; else 0) and its sort key,
   * row after row: with the id, what a search split over partitions merges pages by
   * (runtime/partitioned.ts), and what a row's cursor is made of where a client asks for one
   * (tables/paging.ts cursorAt): the index makes no cursors.
   */
  sortKeys: Float64Array;
  /** The facets asked with the search, in the order asked, counted on the same match as `total`. */
  facets?: FacetAnswer[];
}

/** The row caches of a server process (row-cache.ts). */
export type ServerRows = SearchRows<Creator, Video, Channel, LiveStream>;

/**
 * The search boundary. In: a validated filter, an order, a window (first/after, last/before or
 * offset) and facet requests. Out: the exact total, the page's ids and places, and the facet
 * counts; or null when it cannot answer now, and the caller runs the SQL path. Fed by the change
 * feed (src/store/changes.ts); rows are read by key outside it. The embedded index (LocalSearch,
 * SearchThread) is one implementation; docs/scale-out.md describes another, on OpenSearch.
 */
export interface Search {
  /** Every table loaded: searches are served from memory. */
  readonly ready: boolean;
  /** The rows of found pages, kept fresh by the index's change feed. */
  readonly rows: ServerRows;
  /**
   * `caller` (the account asking): an index thread serves its callers in turn, so one account's
   * heavy searches do not hold up another's (runtime/fair-queue.ts).
   */
  creators(search: CreatorSearch, page: PageArgs, facets?: readonly FacetRequest<CreatorFacet>[], caller?: string): Promise<IndexPage | null>;
  /**
   * `needsTotal` false (no totalCount, no facets asked): a newest-first page may be found by
   * walking the order testing rows, without the filter's bitset, and then has no total.
   */
  videos(search: VideoSearch, page: PageArgs, facets?: readonly FacetRequest<VideoFacet>[], needsTotal?: boolean, caller?: string): Promise<IndexPage | null>;
  /** The same page of one video search within each of these channels (`Channel.videos` of a page): one call for all. */
  channelVideos(search: VideoSearch, channelIds: readonly string[], page: PageArgs, facets?: readonly FacetRequest<VideoFacet>[], caller?: string): Promise<IndexPage[] | null>;
  liveStreams(filter: LiveStreamFilter, page: PageArgs, facets?: readonly FacetRequest<LiveStreamFacet>[], caller?: string): Promise<IndexPage | null>;
  stats(): SearchIndexStats;
  /** Loads every table, then follows the feed until stop(). Resolves once loaded. */
  start(): Promise<void>;
  /** Reads the feed now and applies it (tests; normally a timer does this). */
  refresh(): Promise<void>;
  stop(): Promise<void>;
}

export interface SearchIndexStats {
  creators: number | null;
  videos: number | null;
  channels: number | null;
  liveStreams: number | null;
  /** Milliseconds since the feed was last read successfully (null: never). */
  lagMs: number | null;
  /** Where the index was last loaded from whole: its snapshot file (then caught up) or the database. */
  loadedFrom: 'snapshot' | 'database' | null;
}

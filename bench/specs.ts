// What one benchmark session asks for, in one neutral shape that each system's client translates
// into its own request (REST body, GraphQL variables, the floor's JSON). Filters use the service's
// GraphQL names and values (camelCase, enum strings), so the service's doors need no guessing.

export type Gender = 'UNKNOWN' | 'MALE' | 'FEMALE';

export interface CreatorFilter {
  query?: string;
  locations?: string[];
  languages?: string[];
  followerCountMin?: number;
  followerCountMax?: number;
  avgEngagementRateMin?: number;
  avgEngagementRateMax?: number;
  recentMonthPublishCountMin?: number;
  gender?: Gender;
  verified?: boolean;
  hasEmail?: boolean;
  /** Level-2 and level-3 ids as a user sends them; a level-2 id covers its children. */
  categoryIds?: number[];
  /** UTC days, inclusive: `2026-03-01`. */
  createAtStart?: string;
  createAtEnd?: string;
}

export type CreatorSort = 'FOLLOWER_COUNT' | 'ENGAGEMENT_RATE';

export interface VideoFilter {
  query?: string;
  categorys?: number[];
  createAtStart?: string;
  createAtEnd?: string;
  videoType?: 'VIDEO' | 'SHORT';
  /** On the video's channel. */
  locations?: string[];
  followerCountMin?: number;
  followerCountMax?: number;
  gender?: Gender;
}

export interface LiveFilter {
  language?: string;
  gameId?: string;
  type?: 'LIVE';
}

/**
 * One session: `pages` requests in a row over one filter. Offset sessions ask for pages 1…pages
 * with an exact total; cursor sessions follow each system's own next-page cursor, without a total,
 * and stop early at the last page.
 */
export type Session =
  | { kind: 'creators'; door: 'rest' | 'graphql'; paging: 'offset' | 'cursor'; filter: CreatorFilter; sort: CreatorSort; pageSize: number; pages: number }
  | { kind: 'videos'; door: 'rest' | 'graphql'; filter: VideoFilter; pageSize: number; pages: number }
  | { kind: 'live'; filter: LiveFilter; pageSize: number; pages: number }
  /** Newest videos (GraphQL), each with its channel's first `nestedFirst` videos (newest) and their total. */
  | { kind: 'videoChannels'; filter: VideoFilter; pageSize: number; nestedFirst: number; pages: 1 }
  /** Creators by followers with their total and facets by country, gender and a follower histogram over `edges`. */
  | { kind: 'creatorFacets'; filter: CreatorFilter; sort: CreatorSort; edges: number[]; pageSize: number; pages: 1 }
  /** Lookups by key of mixed types, answered in the order asked; `pageSize` is how many. */
  | { kind: 'nodes'; refs: NodeRef[]; pageSize: number; pages: 1 };

export type NodeType = 'Creator' | 'Channel' | 'Video';
/** One looked-up row: its type and its key (a twitter user id, a channel id, a video id). */
export interface NodeRef {
  type: NodeType;
  key: string;
}

/** What a page answered, reduced to what the systems must agree on. */
export interface PageResult {
  total: number | null;
  ids: string[];
  /** The cursor of the next page (cursor sessions), null at the end. */
  next: string | null;
  /**
   * What else the systems must agree on, as canonical JSON (nested connections, facets); the
   * same text on every system when their answers are equal.
   */
  detail?: string;
}

/** A facet's values by count descending, then value in code-unit order (the service's order). */
export const facetOrder = (values: { value: string; count: number }[]) =>
  [...values].sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));

/** The service's spelling of a gender code in facets. */
export const GENDER_NAMES: Record<number, string> = { 0: 'unknown', 1: 'male', 2: 'female' };

export interface Category {
  id: number;
  parentId: number | null;
  level: number;
}

/** The ids a category filter matches: the given ones and the level-3 children of level-2 ones. */
export function expandCategoryIds(ids: readonly number[], taxonomy: readonly Category[]): number[] {
  const level2 = new Set(taxonomy.filter((c) => c.level === 2 && ids.includes(c.id)).map((c) => c.id));
  const expanded = new Set(ids);
  for (const category of taxonomy) if (category.parentId !== null && level2.has(category.parentId)) expanded.add(category.id);
  return [...expanded].sort((a, b) => a - b);
}

/** A UTC day range as the half-open instants `[start, endExclusive)`. */
export function dayBounds(start: string | undefined, end: string | undefined): { from?: string; before?: string } {
  return {
    from: start ? new Date(`${start}T00:00:00.000Z`).toISOString() : undefined,
    before: end ? new Date(Date.parse(`${end}T00:00:00.000Z`) + 86_400_000).toISOString() : undefined,
  };
}

export const GENDER_CODES: Record<Gender, number> = { UNKNOWN: 0, MALE: 1, FEMALE: 2 };
export const VIDEO_TYPE_CODES = { VIDEO: 1, SHORT: 2 } as const;

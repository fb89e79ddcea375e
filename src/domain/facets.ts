// Facets of a search: how its matches spread over the values of a field (country, category…) or
// over ranges of a number (a follower histogram). The index counts them on its bitsets, the SQL
// path with GROUP BY; both hand their raw counts to the functions here, so the answers are shaped,
// spelled and ordered in one place (docs/contract/decisions.md §6.1).

export const creatorFacets = ['country', 'language', 'gender', 'category', 'verified', 'hasEmail', 'followerCount', 'avgEngagementRate'] as const;
export const videoFacets = ['category', 'videoType', 'channelCountry', 'month'] as const;
export const liveStreamFacets = ['game', 'language'] as const;
export type CreatorFacet = (typeof creatorFacets)[number];
export type VideoFacet = (typeof videoFacets)[number];
export type LiveStreamFacet = (typeof liveStreamFacets)[number];

/** One facet asked of a search. */
export interface FacetRequest<F extends string = string> {
  facet: F;
  /** Count as if the search's conditions on the facet's own field were absent (disjunctive faceting). */
  excludeOwn: boolean;
  /** Range facets: the bucket edges, strictly increasing. */
  edges?: readonly number[];
}

/** A value and how many matches have it; `label` where the value is an id with a name (a game). */
export interface FacetCount {
  value: string;
  count: number;
  label?: string | null;
}

/** Matches with min <= value < max (null: unbounded). */
export interface RangeCount {
  min: number | null;
  max: number | null;
  count: number;
}

export type FacetAnswer = FacetCount[] | RangeCount[];

/** The request's identity among those of one connection (its arguments included). */
export const facetKey = (request: FacetRequest): string => JSON.stringify([request.facet, request.excludeOwn, request.edges ?? null]);

/**
 * Value counts as the API answers them: counts of one value (two codes may share a spelling) added
 * up, zero counts left out, by count descending, then value.
 */
export function valueCounts(counts: Iterable<FacetCount>): FacetCount[] {
  const byValue = new Map<string, FacetCount>();
  for (const { value, count, label } of counts) {
    if (count === 0) continue;
    const seen = byValue.get(value);
    if (seen) {
      seen.count += count;
      // The smallest label (by code units) when rows of one value disagree: the same on both paths.
      if (label != null && (seen.label == null || label < seen.label)) seen.label = label;
    } else byValue.set(value, label === undefined ? { value, count } : { value, count, label });
  }
  return [...byValue.values()].sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

/** `counts[i]` is the number of values with exactly i edges at or below them: the n + 2 buckets. */
export function rangeCounts(edges: readonly number[], counts: ArrayLike<number>): RangeCount[] {
  return Array.from({ length: edges.length + 1 }, (_, i) => ({
    min: i === 0 ? null : edges[i - 1],
    max: i === edges.length ? null : edges[i],
    count: counts[i] ?? 0,
  }));
}

/** How many of the ascending `thresholds` are <= value (the bucket of `value`; SQL's width_bucket). */
export function bucketOf(thresholds: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = thresholds.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (thresholds[mid] <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A month as a number (year * 12 + month - 1) from epoch milliseconds, in UTC, without a Date. */
export function monthNumber(ms: number): number {
  // Howard Hinnant's civil_from_days.
  const z = Math.floor(ms / 86_400_000) + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return year * 12 + month - 1;
}

/** "2026-03" for a month number. */
export function monthText(month: number): string {
  return `${String(Math.floor(month / 12)).padStart(4, '0')}-${String((month % 12) + 1).padStart(2, '0')}`;
}

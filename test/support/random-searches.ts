import type { PageArgs } from '../../src/domain/cursors.js';
import type { ChannelIndexRow, CreatorIndexRow, VideoIndexRow } from '../../src/domain/index-rows.js';
import type { Kysely } from 'kysely';
import { type CreatorFilter, creatorsArgs, type CreatorSearch, defaultCreatorSort } from '../../src/inputs/creators.js';
import type { VideoFilter } from '../../src/inputs/videos.js';
import { expandCategoryIds } from '../../src/store/categories.js';
import type { Database } from '../../src/store/database.js';
import type { SeededRandom } from '../../src/upstreams/seeded-random.js';

// Random searches near the data's own values (a seeded generator: the same searches every run),
// for the property tests that hold the index to the SQL path and a loaded snapshot to a new build.

export const pick = <T>(rng: SeededRandom, items: readonly T[]): T => items[Math.floor(rng.next() * items.length)];

/**
 * A random creator search as the API would run it: a random order (half the time the filter's
 * default), a random filter, sometimes bounded on the order's key, parsed by the API's schema and
 * its categories expanded; null when the schema refuses the filter.
 */
export async function randomCreatorSearch(
  rng: SeededRandom,
  db: Kysely<Database>,
  rows: readonly CreatorIndexRow[],
  categoryIds: readonly number[],
): Promise<CreatorSearch | null> {
  const sort = rng.chance(0.5) ? null : pick(rng, ['FOLLOWER_COUNT', 'ENGAGEMENT_RATE', 'RELEVANCE'] as const);
  let filter = randomCreatorFilter(rng, rows, categoryIds);
  if (rng.chance(0.3)) filter = boundSortKey(rng, rows, filter, sort ?? defaultCreatorSort(filter));
  const parsed = creatorsArgs.safeParse({ filter });
  if (!parsed.success) return null;
  const valid = parsed.data.filter!;
  const expanded = valid.categoryIds?.length ? await expandCategoryIds(db, valid.categoryIds) : null;
  return { platform: 'twitter', filter: valid, categoryIds: expanded ? expanded.expanded : null, sort: sort ?? defaultCreatorSort(valid) };
}

/** A bound near real values: a row's exact value, a hair either side, or a round number. */
export function bound(rng: SeededRandom, values: number[], cents: boolean): number {
  const value = pick(rng, values) / (cents ? 100 : 1);
  switch (rng.int(0, 3)) {
    case 0:
      return value;
    case 1:
      return cents ? Math.max(0, value + pick(rng, [-0.005, 0.005, -0.01, 0.001])) : Math.max(0, value + pick(rng, [-1, 1]));
    case 2:
      return cents ? Math.round(value * 10) / 10 : Math.round(value / 1000) * 1000;
    default:
      return cents ? rng.int(0, 100) / 4 : 10 ** rng.int(0, 8);
  }
}

export function randomCreatorFilter(rng: SeededRandom, rows: readonly CreatorIndexRow[], categoryIds: readonly number[]): CreatorFilter {
  const filter: Record<string, unknown> = {};
  const sample = () => pick(rng, rows);
  if (rng.chance(0.3)) {
    const source = rng.chance(0.6) ? sample().username : sample().fullName;
    const start = rng.int(0, Math.max(0, source.length - 1));
    const text = source.slice(start, start + rng.int(1, 5));
    filter.query = rng.chance(0.3) ? text.toUpperCase() : rng.chance(0.1) ? `${text}%` : text;
  }
  if (rng.chance(0.3)) filter.locations = Array.from({ length: rng.int(1, 3) }, () => (rng.chance(0.9) ? sample().country || 'US' : 'ZZ').toLowerCase());
  if (rng.chance(0.2)) filter.languages = Array.from({ length: rng.int(1, 2) }, () => sample().language || 'en');
  if (rng.chance(0.2)) filter.gender = pick(rng, ['UNKNOWN', 'MALE', 'FEMALE']);
  if (rng.chance(0.15)) filter.hasEmail = rng.chance(0.7);
  if (rng.chance(0.15)) filter.verified = rng.chance(0.7);
  if (rng.chance(0.2)) filter.categoryIds = Array.from({ length: rng.int(1, 3) }, () => pick(rng, categoryIds));
  const numeric: [string, (row: CreatorIndexRow) => number, boolean][] = [
    ['followerCount', (r) => r.followerCount, false],
    ['avgEngagementRate', (r) => r.avgEngagementRate, true],
    ['avgCommentCount', (r) => r.avgCommentCount, true],
    ['avgLikeCount', (r) => r.avgLikeCount, true],
    ['avgPlayCount', (r) => r.avgViewCount, true],
    ['recentMonthPublishCount', (r) => r.recentMonthPublishCount, false],
    ['avgEngagementCount', (r) => r.avgEngagementCount, true],
    ['avgVideoEngagementRate', (r) => r.avgVideoEngagementRate, true],
  ];
  for (const [name, of, cents] of numeric) {
    if (!rng.chance(0.12)) continue;
    const values = rows.map(of);
    const min = rng.chance(0.7) ? bound(rng, values, cents) : undefined;
    const max = rng.chance(0.6) ? bound(rng, values, cents) : undefined;
    if (min !== undefined) filter[`${name}Min`] = min;
    if (max !== undefined && (min === undefined || max >= min)) filter[`${name}Max`] = max;
  }
  if (rng.chance(0.08)) filter.retweetRatioMax = bound(rng, rows.map((r) => r.retweetRatio), true);
  if (rng.chance(0.15)) {
    const times = rows.map((r) => r.lastPublishAt).filter((t) => !Number.isNaN(t));
    const day = (t: number) => new Date(t).toISOString().slice(0, 10);
    const a = pick(rng, times);
    const b = a + rng.int(0, 60) * 86_400_000;
    if (rng.chance(0.7)) filter.createAtStart = rng.chance(0.5) ? day(a) : new Date(a).toISOString();
    if (rng.chance(0.7)) filter.createAtEnd = rng.chance(0.5) ? day(b) : new Date(b).toISOString();
  }
  return filter as CreatorFilter;
}

/**
 * Bounds on the order's own key (followers for the follower order and relevance's tiers,
 * engagement for its order): pages then start and end inside the order, where a walk must seek.
 */
export function boundSortKey(rng: SeededRandom, rows: readonly CreatorIndexRow[], filter: CreatorFilter, sort: CreatorSearch['sort']): CreatorFilter {
  const engagement = sort === 'ENGAGEMENT_RATE';
  const name = engagement ? 'avgEngagementRate' : 'followerCount';
  const values = rows.map((row) => (engagement ? row.avgEngagementRate : row.followerCount));
  const [low, high] = [bound(rng, values, engagement), bound(rng, values, engagement)].sort((a, b) => a - b);
  const bounded: Record<string, unknown> = { ...filter, [`${name}Min`]: undefined, [`${name}Max`]: undefined };
  // A maximum alone, a minimum alone, or both.
  const which = rng.int(0, 2);
  if (which !== 1) bounded[`${name}Max`] = high;
  if (which !== 0) bounded[`${name}Min`] = low;
  return bounded as CreatorFilter;
}

export function randomPage(rng: SeededRandom): PageArgs {
  switch (rng.int(0, 3)) {
    case 0:
      return { first: rng.int(1, 50) };
    case 1:
      return { first: rng.int(1, 30), offset: rng.int(0, 200) };
    case 2:
      return { last: rng.int(1, 30) };
    default:
      return {};
  }
}


export function randomVideoFilter(rng: SeededRandom, videoRows: readonly VideoIndexRow[], channelRows: readonly ChannelIndexRow[]): VideoFilter {
  const filter: Record<string, unknown> = {};
  const video = () => pick(rng, videoRows);
  const channel = () => pick(rng, channelRows);
  if (rng.chance(0.3)) {
    const source = rng.chance(0.7) ? video().title : video().description;
    const start = rng.int(0, Math.max(0, source.length - 1));
    filter.query = source.slice(start, start + rng.int(1, 8));
  }
  if (rng.chance(0.3)) filter.categorys = Array.from({ length: rng.int(1, 3) }, () => video().categoryId);
  if (rng.chance(0.2)) filter.videoType = pick(rng, ['VIDEO', 'SHORT']);
  if (rng.chance(0.25)) {
    const day = (t: number) => new Date(t).toISOString().slice(0, 10);
    const a = video().createAt;
    if (rng.chance(0.7)) filter.createAtStart = rng.chance(0.5) ? day(a) : new Date(a).toISOString();
    if (rng.chance(0.7)) filter.createAtEnd = day(a + rng.int(0, 90) * 86_400_000);
  }
  if (rng.chance(0.2)) filter.locations = Array.from({ length: rng.int(1, 3) }, () => channel().country || 'US');
  if (rng.chance(0.15)) filter.gender = pick(rng, ['UNKNOWN', 'MALE', 'FEMALE']);
  const bounds: [string, (row: ChannelIndexRow) => number, boolean][] = [
    ['followerCount', (r) => r.followerCount, false],
    ['avgEngagementRate', (r) => r.avgEngagementRate, true],
    ['avgPlayCount', (r) => r.avgPlayCount, true],
    ['avgLikeCount', (r) => r.avgLikeCount, true],
    ['avgCommentCount', (r) => r.avgCommentCount, true],
    ['recentMonthPublishCount', (r) => r.recentMonthPublishCount, false],
  ];
  for (const [name, of, cents] of bounds) {
    if (!rng.chance(0.1)) continue;
    const values = channelRows.map(of);
    const min = rng.chance(0.7) ? bound(rng, values, cents) : undefined;
    const max = rng.chance(0.5) ? bound(rng, values, cents) : undefined;
    if (min !== undefined) filter[`${name}Min`] = min;
    if (max !== undefined && (min === undefined || max >= min)) filter[`${name}Max`] = max;
  }
  return filter as VideoFilter;
}


/** A random set of `slots` slots as a bitset and a list: every slot (density 1) or each with chance `density`. */
export function randomRowSet(rng: SeededRandom, slots: number, density: number): { rows: Uint32Array; given: number[] } {
  const rows = new Uint32Array(Math.ceil(slots / 32));
  const given: number[] = [];
  for (let slot = 0; slot < slots; slot++) {
    if (density < 1 && !rng.chance(density)) continue;
    rows[slot >>> 5] |= 1 << (slot & 31);
    given.push(slot);
  }
  return { rows, given };
}

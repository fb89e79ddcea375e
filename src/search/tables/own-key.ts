import { setWords } from '../primitives/bitset.js';
import type { Bounds, RangeIndex } from '../primitives/range-index.js';
import type { Match } from '../primitives/result-cache.js';
import { SortOrder, type RunRanks } from '../primitives/sort-order.js';

// A creator search bounded on the key its order sorts by (a follower maximum by followers, an
// engagement maximum by engagement) needs no bitset of its bound: the page is walked along the
// order from the bound, and the total is how many of the other conditions' matches have a key
// within it. Those matches are one cached bitset for every bound ("US", whatever the maximum),
// where a bitset of the whole filter was computed afresh for each new bound: one pass over every
// word, at ten million creators most of such a search. The count is taken the cheapest of three
// ways (countWithinKey), or, once the same other conditions come back within a table version
// (a country beside random maxima), from their ranks along the order: one pass ranks them, and
// every later bound is two lookups. Videos keep the whole filter's bitset (VideoIndex#boundOnOrderOnly).

export type BoundCount = 'inside' | 'outside' | 'pass' | 'ranks';

/** A search's match when its filter bounds its order's key. */
export interface BoundedMatch extends Match {
  /** Rows within the bound. */
  count: number;
  /** Rows set in `bits`: those of the other conditions, within the bound or not. */
  held: number;
  /** Every row within the bound matches (the filter is the bound alone). */
  everyRowWithin: boolean;
}

/**
 * Rows of a run read in order (each one bit tested at a random place) for the cost of one word of
 * the range index's passes (six slices compared, twice). Measured with one country beside a
 * follower bound, at 1M and 10M creators (2026-11-26): about 2 ns a row, 20 ns a word; 8 ns a row
 * once slots changed since the order's sort (each row is then tested against them).
 */
const ROWS_PER_WORD = 10;
const ROW_COST_WITH_CHANGES = 4;
/** Counts kept for the filters asked last (the pages of one search), per table version. */
const KEPT = 256;
/** Other conditions ranked per order and table version: 4 bytes per 512 rows each (80 KB at 10M). */
const RANKED = 32;
/** A count reading fewer rows than this is not worth ranking its conditions for. */
const RANKS_WORTH_ROWS = 8 * SortOrder.rankedCountRows;

export class BoundedCounts {
  #version = -1;
  readonly #counts = new Map<string, number>();
  /** Per order, the other conditions counted in this version: their ranks, or null when counted once. */
  readonly #ranks = new Map<SortOrder, Map<string, RunRanks | null>>();

  /**
   * How many rows of `match` (the other conditions, `others` their filter key) have a key of
   * `order` (also the values of `range`) within `bounds`, `alive` rows in the table: the order's
   * run within the bounds read with each row's bit tested, the runs outside them read and taken
   * from the matches, or the range index's passes over the words holding matches, whichever reads
   * least; from the matches' ranks along the order when those conditions were counted before in
   * this version. Remembered per `key` until the version changes.
   */
  count(key: string, others: string, version: number, order: SortOrder, range: RangeIndex, match: Match, bounds: Bounds, alive: number, way?: BoundCount): number {
    if (version !== this.#version) {
      this.#counts.clear();
      this.#ranks.clear();
      this.#version = version;
    }
    const known = way === undefined ? this.#counts.get(key) : undefined;
    if (known !== undefined) return known;
    const count = countWithinKey(order, range, match, bounds, alive, way, (worth) => this.#ranksOf(order, others, match, worth, way === 'ranks'));
    if (way !== undefined) return count;
    if (this.#counts.size >= KEPT) this.#counts.delete(this.#counts.keys().next().value!);
    this.#counts.set(key, count);
    return count;
  }

  /**
   * The ranks of `others` along `order`: kept, or made on their second count worth ranking in
   * this version (ranking reads the whole order once), or at once when `now`; else undefined.
   */
  #ranksOf(order: SortOrder, others: string, match: Match, worth: boolean, now: boolean): RunRanks | undefined {
    let ranked = this.#ranks.get(order);
    if (ranked === undefined) this.#ranks.set(order, (ranked = new Map()));
    const known = ranked.get(others);
    // Ranks of a snapshot merged since (a snapshot written) are made again, as on a second count.
    if (known && order.ranksCurrent(known)) return known;
    if (!now && !worth) return undefined;
    if (!now && known === undefined) {
      if (ranked.size < RANKED) ranked.set(others, null);
      return undefined;
    }
    const ranks = order.rank(match.bits);
    ranked.set(others, ranks);
    return ranks;
  }
}

/** `ranksOf(worth)`: the matches' ranks if kept (or made, when worth it); see BoundedCounts. */
function countWithinKey(
  order: SortOrder,
  range: RangeIndex,
  match: Match,
  bounds: Bounds,
  alive: number,
  way: BoundCount | undefined,
  ranksOf: (worth: boolean) => RunRanks | undefined,
): number {
  if (match.count === 0) return 0;
  const min = bounds.min ?? -Infinity;
  const max = bounds.max ?? Infinity;
  const exclusive = bounds.maxExclusive === true;
  const inside = order.countKeyRange(min, max, exclusive);
  const matched = setWords(match.bits);
  const window = range.wordWindow(bounds);
  const from = Math.max(matched.from, window.from);
  const to = Math.max(from, Math.min(matched.to, window.to));
  // A pass compares the words holding a match (at most one a match) and skips the empty ones.
  const words = to - from;
  const row = order.changedCount === 0 ? 1 : ROW_COST_WITH_CHANGES;
  const costs: Record<Exclude<BoundCount, 'ranks'>, number> = { inside: inside * row, outside: (alive - inside) * row, pass: Math.min(match.count, words) * ROWS_PER_WORD + words / 2 };
  const cheapest = (Object.keys(costs) as (keyof typeof costs)[]).reduce((best, next) => (costs[next] < costs[best] ? next : best));
  // Ranking pays once a few counts would each read more than the ranked count's two blocks.
  const ranks = way === undefined || way === 'ranks' ? ranksOf(costs[cheapest] > RANKS_WORTH_ROWS * row) : undefined;
  if (ranks !== undefined) return order.countKeyRangeIn(match.bits, min, max, exclusive, ranks);
  switch (way === 'ranks' ? cheapest : (way ?? cheapest)) {
    case 'inside':
      return order.countKeyRangeIn(match.bits, min, max, exclusive);
    case 'outside':
      return match.count - order.countKeyOutsideIn(match.bits, min, max, exclusive);
    case 'pass':
      return range.countWithin(match.bits, bounds, from, to, match.count);
  }
}

import { setWords } from '../primitives/bitset.js';
import type { Bounds, RangeIndex } from '../primitives/range-index.js';
import type { Match } from '../primitives/result-cache.js';
import type { SortOrder } from '../primitives/sort-order.js';

// A creator search bounded on the key its order sorts by (a follower maximum by followers, an
// engagement maximum by engagement) needs no bitset of its bound: the page is walked along the
// order from the bound, and the total is how many of the other conditions' matches have a key
// within it. Those matches are one cached bitset for every bound ("US", whatever the maximum),
// where a bitset of the whole filter was computed afresh for each new bound: one pass over every
// word, at ten million creators most of such a search. The count is taken the cheapest of three
// ways (countWithinKey). Videos keep the whole filter's bitset (VideoIndex#boundOnOrderOnly).

export type BoundCount = 'inside' | 'outside' | 'pass';

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

export class BoundedCounts {
  #version = -1;
  readonly #counts = new Map<string, number>();

  /**
   * How many rows of `match` have a key of `order` (also the values of `range`) within `bounds`,
   * `alive` rows in the table: the order's run within the bounds read with each row's bit tested,
   * the runs outside them read and taken from the matches, or the range index's passes over the
   * words holding matches, whichever reads least. Remembered per `key` until the version changes.
   */
  count(key: string, version: number, order: SortOrder, range: RangeIndex, match: Match, bounds: Bounds, alive: number, way?: BoundCount): number {
    if (version !== this.#version) {
      this.#counts.clear();
      this.#version = version;
    }
    const known = way === undefined ? this.#counts.get(key) : undefined;
    if (known !== undefined) return known;
    const count = countWithinKey(order, range, match, bounds, alive, way);
    if (way !== undefined) return count;
    if (this.#counts.size >= KEPT) this.#counts.delete(this.#counts.keys().next().value!);
    this.#counts.set(key, count);
    return count;
  }
}

function countWithinKey(order: SortOrder, range: RangeIndex, match: Match, bounds: Bounds, alive: number, way?: BoundCount): number {
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
  const costs: Record<BoundCount, number> = { inside: inside * row, outside: (alive - inside) * row, pass: Math.min(match.count, words) * ROWS_PER_WORD + words / 2 };
  const chosen = way ?? (Object.keys(costs) as BoundCount[]).reduce((best, next) => (costs[next] < costs[best] ? next : best));
  switch (chosen) {
    case 'inside':
      return order.countKeyRangeIn(match.bits, min, max, exclusive);
    case 'outside':
      return match.count - order.countKeyOutsideIn(match.bits, min, max, exclusive);
    case 'pass':
      return range.countWithin(match.bits, bounds, from, to, match.count);
  }
}

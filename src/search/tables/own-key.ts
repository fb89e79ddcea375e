import { setWords } from '../primitives/bitset.js';
import type { Bounds, RangeIndex } from '../primitives/range-index.js';
import type { Match } from '../primitives/result-cache.js';
import { type CodeRanks, type RunRanks, type SlotCodes, SortOrder } from '../primitives/sort-order.js';

// A creator search bounded on the key its order sorts by (a follower maximum by followers, an
// engagement maximum by engagement) needs no bitset of its bound: the page is walked along the
// order from the bound, and the total is how many of the other conditions' matches have a key
// within it. Those matches are one cached bitset for every bound ("US", whatever the maximum),
// where a bitset of the whole filter was computed afresh for each new bound: one pass over every
// word, at ten million creators most of such a search. The count is taken the cheapest of three
// ways (countWithinKey), or, once the same other conditions come back within a table version
// (a country beside random maxima), from their ranks along the order: one pass ranks them, and
// every later bound is two lookups. A video search (newest first) with dates and values of one
// single-valued column (1–2 categories) counts those codes within the dates the same way, and the
// column's ranks are every value's at once: any set of values is counted from one ranking.

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
 * a range index's pass (its slices compared by the kernel, whatever the matches: copies in and out
 * cost as much as the blocks it skips). Measured at 10M creators with 8-bit codes, a follower
 * bound beside one value (2026-12-07, EPYC): 4.5–5.5 ns a row, 3.6–4.4 ns a word. Before the kernel a word
 * cost ten rows, and broad counts walked millions of rows where a pass took 2 ms; 4 times a row
 * once slots changed since the order's sort (each row is then tested against them).
 */
const ROWS_PER_WORD = 0.8;
const ROW_COST_WITH_CHANGES = 4;
/** Counts kept for the filters asked last (the pages of one search), per table version. */
const KEPT = 256;
/** Other conditions ranked per order and table version: 4 bytes per 512 rows each (80 KB at 10M). */
const RANKED = 32;
/** Columns of more values than this are not ranked: 4 bytes per value per 512 rows (2.2 MB for 14 codes at 20M). */
const RANKED_CODES = 64;

export class BoundedCounts {
  #version = -1;
  readonly #counts = new Map<string, number>();
  /** Per order, the other conditions counted in this version: their ranks, or what their counts have cost so far (rows). */
  readonly #ranks = new Map<SortOrder, Map<string, RunRanks | number>>();
  /** Per order, the single-valued columns counted in this version: their codes' ranks, or what their counts have cost so far. */
  readonly #codeRanks = new Map<SortOrder, Map<string, CodeRanks | number>>();

  /**
   * How many rows of `match` (the other conditions, `others` their filter key) have a key of
   * `order` (also the values of `range`) within `bounds`, `alive` rows in the table: the order's
   * run within the bounds read with each row's bit tested, the runs outside them read and taken
   * from the matches, or the range index's passes over the words holding matches, whichever reads
   * least; from the matches' ranks along the order once those conditions' counts in this version
   * have cost as much as ranking them (ranksOf). Remembered per `key` until the version changes.
   */
  count(key: string, others: string, version: number, order: SortOrder, range: RangeIndex, match: Match, bounds: Bounds, alive: number, way?: BoundCount): number {
    return this.#remembered(key, version, way, () =>
      countWithinKey(order, range, match, bounds, alive, way, (cost, row) =>
        ranksOf(this.#ranks, order, others, cost, order.snapshotRows * row, way === 'ranks', () => order.rank(match.bits)),
      ),
    );
  }

  /**
   * How many rows whose code in a single-valued column (`column` its name, `codeOf` its codes)
   * is `wanted` have a key of `order` within `bounds`: the order's run within the bounds read,
   * each row's code tested, or from the column's ranks along the order once its counts in this
   * version have cost as much as ranking it (see count). Remembered per `key` until the version changes.
   */
  countCodes(key: string, column: string, version: number, order: SortOrder, { codeOf, codes }: { codeOf: SlotCodes; codes: number }, wanted: Uint8Array, bounds: Bounds, way?: BoundCount): number {
    return this.#remembered(key, version, way, () => {
      const min = bounds.min ?? -Infinity;
      const max = bounds.max ?? Infinity;
      const exclusive = bounds.maxExclusive === true;
      // A count reads the run within the bounds, a ranking the whole order.
      const cost = codes <= RANKED_CODES ? order.countKeyRange(min, max, exclusive) : 0;
      const ranks =
        way === undefined || way === 'ranks' ? ranksOf(this.#codeRanks, order, column, cost, order.snapshotRows, way === 'ranks', () => order.rankCodes(codeOf, codes)) : undefined;
      return order.countKeyRangeOfCodes(codeOf, wanted, min, max, exclusive, ranks);
    });
  }

  /** The count under `key` in this version, or `count()` remembered (unless a test forces its way). */
  #remembered(key: string, version: number, way: BoundCount | undefined, count: () => number): number {
    if (version !== this.#version) {
      this.#counts.clear();
      this.#ranks.clear();
      this.#codeRanks.clear();
      this.#version = version;
    }
    if (way !== undefined) return count();
    const known = this.#counts.get(key);
    if (known !== undefined) return known;
    const counted = count();
    if (this.#counts.size >= KEPT) this.#counts.delete(this.#counts.keys().next().value!);
    this.#counts.set(key, counted);
    return counted;
  }
}

/**
 * The ranks of `name` (other conditions, a column) along `order`, from `ranked` (this version's):
 * kept, or made once this version's counts of `name`, this one's `cost` with them, would cost more
 * than ranking (`rankCost`: it reads the whole order once), or at once when `now`; else undefined,
 * and the cost added to what its counts have cost. A rent-or-buy rule: at most twice the cheaper
 * of never ranking and ranking at the first count, however often the conditions come back. Ranking
 * on the second count, as before, stalled the search thread for a whole order's read (50-70 ms at
 * 10M) for conditions that came back a few times, each count then a pass of 1-3 ms.
 */
function ranksOf<R extends RunRanks | CodeRanks>(
  ranked: Map<SortOrder, Map<string, R | number>>,
  order: SortOrder,
  name: string,
  cost: number,
  rankCost: number,
  now: boolean,
  rank: () => R,
): R | undefined {
  let byName = ranked.get(order);
  if (byName === undefined) ranked.set(order, (byName = new Map()));
  const known = byName.get(name);
  if (typeof known === 'object' && order.ranksCurrent(known)) return known;
  // Ranks of a snapshot merged since (a snapshot written) are made again: they paid once already.
  const spent = known === undefined ? 0 : typeof known === 'number' ? known : rankCost;
  if (!now && (cost === 0 || spent + cost <= rankCost)) {
    if (known !== undefined || byName.size < RANKED) byName.set(name, spent + cost);
    return undefined;
  }
  const ranks = rank();
  byName.set(name, ranks);
  return ranks;
}

/** `ranksOf(cost, row)`: the matches' ranks if kept (or made, when they pay); see BoundedCounts. */
function countWithinKey(
  order: SortOrder,
  range: RangeIndex,
  match: Match,
  bounds: Bounds,
  alive: number,
  way: BoundCount | undefined,
  ranksOf: (cost: number, row: number) => RunRanks | undefined,
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
  // A pass reads every word between the first and the last match (it skips empty blocks, but its
  // copies in and out of the kernel's memory cost about what a compared block does).
  const words = to - from;
  const row = order.changedCount === 0 ? 1 : ROW_COST_WITH_CHANGES;
  const costs: Record<Exclude<BoundCount, 'ranks'>, number> = { inside: inside * row, outside: (alive - inside) * row, pass: range.passesWithin(bounds) * words * ROWS_PER_WORD };
  const cheapest = (Object.keys(costs) as (keyof typeof costs)[]).reduce((best, next) => (costs[next] < costs[best] ? next : best));
  const ranks = way === undefined || way === 'ranks' ? ranksOf(costs[cheapest], row) : undefined;
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

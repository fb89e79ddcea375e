import { Bitset } from './bitset.js';
import { Float64Column } from './row-table.js';
import type { SortOrder } from './sort-order.js';

// A numeric column with bucket bitmaps for range filters (follower bounds, metric bounds, dates).
// Values are split into up to ~40 buckets at quantiles of the data; `below[k]` holds the slots of
// buckets < k. A range is then one word-wise pass (`below[hi] AND NOT below[lo]`) plus a test of
// the rows of the one or two buckets the bounds fall inside. Updates move a slot between buckets
// in place, so the index never needs a rebuild to stay exact (only to stay balanced).
//
// When an order over the same values is kept anyway (the sort orders of searches), the rows of an
// edge bucket are read from it as one run instead: testing them one by one reads their values at
// random places (a cache miss each), most of a date window's cost over millions of videos.
//
// Values are compared exactly as stored: integers (counts, metrics in cents) or epoch milliseconds.
// NaN is SQL NULL: it is in no bucket and matches no range.

const DEFAULT_BUCKETS = 32;

export interface Bounds {
  min?: number;
  max?: number;
  /** `max` itself excluded (timestamps: an end date is inclusive through its last millisecond). */
  maxExclusive?: boolean;
}

/** How many values of the sorted `values` are <= value. */
function upperIndex(values: Float64Array, value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid] <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class RangeIndex {
  readonly values = new Float64Column();
  #boundaries = new Float64Array(0);
  /** below[k], k = 0..bucketCount: slots whose bucket is < k; below[bucketCount] = every non-null slot. */
  #below: Bitset[] = [new Bitset(), new Bitset()];
  /** An order whose key is this column's value, for the edge buckets (see above). */
  #order: SortOrder | null = null;

  /**
   * @param integer values are whole numbers (then a bucket [a, b) holds a..b-1 and can be known full).
   * @param targetBuckets more buckets: fewer rows tested at a bound's edge, one more bitset each
   *   (at most 200: a slot's bucket is a byte, and heavy values may add buckets of their own).
   */
  constructor(
    private readonly integer: boolean,
    private readonly targetBuckets = DEFAULT_BUCKETS,
  ) {}

  /** Reads edge buckets from `order`, a sort order keyed by exactly these values. */
  useOrder(order: SortOrder): void {
    this.#order = order;
  }

  get bucketCount(): number {
    return this.#boundaries.length + 1;
  }

  #bucket(value: number): number {
    if (Number.isNaN(value)) return this.bucketCount; // NULL: below no boundary, in no bitmap
    let lo = 0;
    let hi = this.#boundaries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#boundaries[mid] <= value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  set(slot: number, value: number): void {
    this.values.ensure(slot + 1);
    // A slot's bucket is its value's (the boundaries only change in rebalance, which re-files
    // every slot): found again by binary search rather than kept, a byte per slot and column.
    const from = this.#bucket(this.values.data[slot]);
    this.values.data[slot] = value;
    const to = this.#bucket(value);
    // below[k] holds the slot exactly for k > its bucket.
    if (to < from) {
      for (let k = to + 1; k <= from; k++) {
        this.#below[k].grow(slot + 1);
        this.#below[k].set(slot);
      }
    } else {
      for (let k = from + 1; k <= to; k++) this.#below[k].clear(slot);
    }
  }

  /**
   * Re-derives the bucket boundaries from the values of `size` slots and rebuilds the bitmaps:
   * after the first load, and when updates have skewed the buckets.
   */
  rebalance(size: number): void {
    this.values.ensure(size);
    const present = this.values.data.subarray(0, size).filter((value) => !Number.isNaN(value));
    present.sort();
    const boundaries: number[] = [];
    const push = (value: number) => {
      if (boundaries.length === 0 || value > boundaries[boundaries.length - 1]) boundaries.push(value);
    };
    // Rows holding exactly `value` (whole numbers: those above value - 1).
    const countOf = (value: number) => upperIndex(present, value) - upperIndex(present, value - 1);
    const target = this.targetBuckets;
    for (let j = 1; j < target && present.length > 0; j++) {
      const value = present[Math.floor((j * present.length) / target)];
      push(value);
      // A whole number holding a large share of the rows (0 posts, 0 followers) gets a bucket of
      // its own, so a bound at it never means testing every one of those rows.
      if (this.integer && countOf(value) * target * 2 >= present.length) push(value + 1);
    }
    this.#boundaries = Float64Array.from(boundaries);
    const buckets = this.bucketCount;
    this.#below = Array.from({ length: buckets + 1 }, () => new Bitset(size));
    for (let slot = 0; slot < size; slot++) {
      const bucket = this.#bucket(this.values.data[slot]);
      for (let k = bucket + 1; k <= buckets; k++) this.#below[k].set(slot);
    }
  }

  /**
   * rows = the slots of `rows` whose value is within `bounds`, in place, `words` long. One pass:
   * a word is the full buckets' bits, plus the bits of the one or two buckets the bounds fall
   * inside, tested row by row (or read from the order, into `scratch`, when there is one);
   * words with no row left are skipped.
   */
  selectInto(rows: Uint32Array, words: number, bounds: Bounds, scratch?: Uint32Array): void {
    const buckets = this.bucketCount;
    const lowerOf = (bucket: number) => (bucket === 0 ? -Infinity : this.#boundaries[bucket - 1]);
    const upperOf = (bucket: number) => (bucket === buckets - 1 ? Infinity : this.#boundaries[bucket]);

    let lo = 0;
    let lowFull = true;
    if (bounds.min !== undefined) {
      lo = this.#bucket(bounds.min);
      lowFull = bounds.min <= lowerOf(lo);
    }
    let hi = buckets - 1;
    let highFull = true;
    if (bounds.max !== undefined) {
      hi = this.#bucket(bounds.max);
      if (bounds.maxExclusive && bounds.max === lowerOf(hi)) {
        // Nothing in bucket hi is below max, and everything before it is.
        hi -= 1;
      } else {
        // A bucket [a, b) of whole numbers holds a..b-1: all of them are <= max when max is b-1.
        highFull = this.integer && !bounds.maxExclusive && bounds.max >= upperOf(hi) - 1;
      }
    }
    if (hi < lo) {
      rows.fill(0, 0, words);
      return;
    }
    const fullFrom = lowFull ? lo : lo + 1;
    const fullTo = Math.max(fullFrom, highFull ? hi + 1 : hi);
    // The edge buckets tested row by row (one when both bounds fall inside the same bucket).
    const testLow = !lowFull;
    const testHigh = !highFull && (hi !== lo || lowFull);
    // Bitmaps grow lazily: make the ones read here cover every word, so the loop needs no checks.
    const bitmap = (k: number) => {
      this.#below[k].grow(words * 32);
      return this.#below[k].words;
    };
    const fullUpper = bitmap(fullTo);
    const fullLower = bitmap(fullFrom);
    const lowUpper = bitmap(testLow ? lo + 1 : 0);
    const lowLower = bitmap(testLow ? lo : 0);
    const highUpper = bitmap(testHigh ? hi + 1 : 0);
    const highLower = bitmap(testHigh ? hi : 0);
    const values = this.values.data;
    const min = bounds.min ?? -Infinity;
    const max = bounds.max ?? Infinity;
    const exclusive = bounds.maxExclusive === true;
    if (!testLow && !testHigh) {
      for (let i = 0; i < words; i++) rows[i] &= fullUpper[i] & ~fullLower[i];
      return;
    }
    if (this.#order?.built && scratch !== undefined) {
      scratch.fill(0, 0, words);
      // The rows of an edge bucket b within the bounds: keys from max(min, b's lower boundary) to
      // the bound when it falls inside b, else to b's upper boundary (excluded: the next bucket's).
      const markEdge = (bucket: number) => {
        const upper = upperOf(bucket);
        const bounded = max < upper;
        this.#order!.markKeyRange(scratch, Math.max(min, lowerOf(bucket)), bounded ? max : upper, bounded ? exclusive : true);
      };
      if (testLow) markEdge(lo);
      if (testHigh) markEdge(hi);
      for (let i = 0; i < words; i++) rows[i] &= (fullUpper[i] & ~fullLower[i]) | scratch[i];
      return;
    }
    // One edge (the usual single bound): its bitmaps only; two: both.
    const edgeUpper = testLow ? lowUpper : highUpper;
    const edgeLower = testLow ? lowLower : highLower;
    const secondUpper = testLow && testHigh ? highUpper : null;
    const secondLower = testLow && testHigh ? highLower : null;
    for (let i = 0; i < words; i++) {
      const mask = rows[i];
      if (mask === 0) continue;
      let kept = fullUpper[i] & ~fullLower[i] & mask;
      let edge = edgeUpper[i] & ~edgeLower[i];
      if (secondUpper !== null) edge |= secondUpper[i] & ~secondLower![i];
      edge &= mask;
      while (edge !== 0) {
        const lowest = edge & -edge;
        const value = values[(i << 5) + 31 - Math.clz32(lowest)];
        if (value >= min && (exclusive ? value < max : value <= max)) kept |= lowest;
        edge ^= lowest;
      }
      rows[i] = kept;
    }
  }
}

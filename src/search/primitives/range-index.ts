import { bucketOf } from '../../domain/facets.js';
import { grownLength, popcount, withRoom, type WordWindow } from './bitset.js';
import { lowerBound } from './lower-bound.js';
import { type Chunk, countBits, MAX_BITS, MAX_EACH, SlicedCodes, sliceAt, sliceWords } from './word-kernel.js';
import { NumberColumn } from './row-table.js';
import { SnapshotRejected, type SnapshotReader, type SnapshotWriter } from './snapshot-io.js';
import type { SortOrder } from './sort-order.js';

// A numeric column with a bit-sliced bucket index for range filters (follower bounds, metric
// bounds, dates). Values are split into up to ~40 buckets at quantiles of the data (a count's
// moved onto round numbers near them: roundedBoundaries), and each slot's bucket is kept as a
// small number, bit-sliced as Pilosa and FeatureBase keep values: for every
// word of 32 slots, one word per bit of the bucket number (6 words for 32 buckets; one cumulative
// bitmap per bucket, as before, took 33). A range is then one word-wise pass that compares the
// slices with the bounds' buckets, giving the buckets wholly inside it and the one or two the
// bounds fall inside, whose rows are tested. Updates rewrite a slot's bits in place, so the index
// never needs a rebuild to stay exact (only to stay balanced).
//
// Testing an edge bucket's rows one by one reads their values at random places in a column of
// megabytes, a cache miss each. So each slot also keeps a byte: which of 256 quantile sub-ranges of
// its bucket its value is in. Only rows in the bound's own sub-range need their value read; the
// others are decided by a byte from an array an eighth the size. When an order over the same values
// is kept anyway (the sort orders of searches), the rows of an edge bucket are read from it as one
// run instead, and no bytes are kept.
//
// Each bucket also knows the lowest and highest slot holding one of its values. Where slots follow
// the values (videos are given slots in date order), a range's rows lie in a narrow window of words
// and a search touches only that window (wordWindow), and of it only the words at its two edges:
// the words between hold rows of the buckets the range keeps whole alone (#wholeWords);
// elsewhere the window is every word and every word is passed over.
//
// Values are compared exactly as stored: integers (counts, metrics in cents) or epoch milliseconds.
// NaN is SQL NULL: it is in no bucket and matches no range.

/** 63 codes of 6 bits with NULL's 0 (32 buckets, as before, took 6 bits too and left half the codes unused). */
const DEFAULT_BUCKETS = 62;
/** Sub-range boundaries per bucket: a slot's sub-range (0..255) is a byte. */
const SUB_BOUNDARIES = 255;
/**
 * Fewer whole words than this are passed over like the rest (a second pass call costs about as
 * much); low enough that the demo set's 5,000 videos (157 words) take the skip in the property
 * tests against PostgreSQL.
 */
const MIN_WHOLE_WORDS = 64;

/** A lower bound's own bucket (see RangeIndex.#edgeOf). */
interface EdgeBucket {
  code: number;
  lowFull: boolean;
  fromOrder: 'above' | 'below' | null;
  lower: number;
  upper: number;
}

export interface Bounds {
  min?: number;
  max?: number;
  /** `max` itself excluded (timestamps: an end date is inclusive through its last millisecond). */
  maxExclusive?: boolean;
}

/** The bits of a slot's code: 0 is NULL, b + 1 bucket b (so a slot never written reads as NULL). */
const sliceCount = (bucketCount: number) => 32 - Math.clz32(bucketCount);
/** The first word wholly after slot `below` (-1: none before), and the word of slot `above` (0x7fffffff: none after). */
const wordAfter = (below: number) => (below < 0 ? 0 : (below >>> 5) + 1);
const wordOf = (above: number) => (above === 0x7fffffff ? 0x7fffffff : above >>> 5);
/** Whole words strictly between two slots. */
const wordsBetween = (below: number, above: number) => wordOf(above) - wordAfter(below);

/**
 * Round numbers, roundest first: what people bound a count with (10,000 followers, 1 % engagement
 * in cents = 100), and a facet's histogram edges.
 */
function roundNumbers(from: number, to: number): number[] {
  const round: number[] = [];
  // Past what a double holds exactly (a bigint beyond 2^53, an infinite numeric) no number is round.
  to = Math.min(to, Number.MAX_SAFE_INTEGER);
  for (const step of [1, 5, 2]) {
    for (let power = 1; power * step <= to; power *= 10) if (power * step > from) round.push(power * step);
  }
  return round;
}

/**
 * The quantile boundaries with each round number moved onto the boundary nearest to it, when that
 * one is at most half a bucket's rows away and the move keeps the boundaries in order: a bound or a
 * histogram edge at a round number then falls on a bucket's edge, and the pass tests no row of an
 * edge bucket. Buckets stay within half a bucket's rows of their quantiles. The boundaries of a
 * heavy value's own bucket stay where they are.
 */
export function roundedBoundaries(present: Float64Array, boundaries: readonly number[]): number[] {
  if (boundaries.length === 0) return [...boundaries];
  const rounded = [...boundaries];
  const rankOf = (value: number) => lowerBound(present, value);
  const ranks = rounded.map(rankOf);
  const half = present.length / (rounded.length + 1) / 2;
  // A heavy value's bucket: the value as a boundary and the next whole number as the next.
  const pinned = rounded.map((value, i) => rounded[i + 1] === value + 1 || rounded[i - 1] === value - 1);
  const claimed = new Set<number>();
  for (const round of roundNumbers(present[0], present[present.length - 1])) {
    const rank = rankOf(round);
    // The boundary nearest in rows: the first at or above the round number's rank, or the one before.
    let i = lowerBound(ranks, rank);
    if (i === ranks.length || (i > 0 && rank - ranks[i - 1] < ranks[i] - rank)) i -= 1;
    // A boundary already at a rounder number keeps it, one there by chance too.
    if (rounded[i] === round) claimed.add(i);
    if (claimed.has(i) || pinned[i] || Math.abs(ranks[i] - rank) > half) continue;
    if ((i > 0 && rounded[i - 1] >= round) || (i < rounded.length - 1 && rounded[i + 1] <= round)) continue;
    rounded[i] = round;
    ranks[i] = rank;
    claimed.add(i);
  }
  return rounded;
}

export class RangeIndex {
  readonly values: NumberColumn;
  #boundaries = new Float64Array(0);
  /**
   * Bits per code (sliceCount), and the slices in blocks of four words (128 slots): bit j of the
   * codes of word w at `sliceAt(w, #bits, j)`, the four words' side by side, as the kernel's SIMD
   * passes read them, in the kernel's memory (word-kernel.ts).
   */
  #bits = 1;
  readonly #slices = new SlicedCodes();
  /** Rows per bucket at the last rebalance: what marking an edge bucket from the order costs. */
  #bucketRows = 0;
  /** An order whose key is this column's value, for the edge buckets (see above). */
  #order: SortOrder | null = null;
  /** Per bucket, SUB_BOUNDARIES ascending sub-range boundaries (+Infinity where a bucket has fewer). */
  #sub = new Float64Array(SUB_BOUNDARIES).fill(Infinity);
  /** Per slot, how many of its bucket's sub-range boundaries are <= its value (without an order). */
  #codes: Uint8Array | null = new Uint8Array(1024);
  /** Per bucket, the lowest and highest slot filed in it since the last rebalance (a superset). */
  #spanFrom = new Int32Array([0x7fffffff]);
  #spanTo = new Int32Array([-1]);
  /** The lowest and highest slot set to NULL (a superset, kept in memory only: null after a load until needed). */
  #nullSpan: { from: number; to: number } | null = { from: 0x7fffffff, to: -1 };

  /**
   * @param integer values are whole numbers (then a bucket [a, b) holds a..b-1 and can be known full).
   * @param targetBuckets more buckets: fewer rows tested at a bound's edge, one more bit a code
   *   once past a power of two. A code is at most 8 bits (the kernel's): at most 255 buckets;
   *   where heavy whole numbers (a bucket each) would need more codes, rebalance asks for fewer.
   */
  constructor(
    private readonly integer: boolean,
    private readonly targetBuckets = DEFAULT_BUCKETS,
  ) {
    if (targetBuckets > 255) throw new RangeError('a range index takes at most 255 buckets');
    this.values = new NumberColumn(!integer);
  }

  /** Reads edge buckets from `order`, a sort order keyed by exactly these values. */
  useOrder(order: SortOrder): void {
    this.#order = order;
    this.#codes = null;
    order.useCodes({
      codeOf: (key) => this.#codeOf(this.#bucket(key)),
      eachWithin: (matches, from, to, code, atMost, visit) => {
        this.#coverWords(to);
        this.#slices.within(this.#bits, matches, from, to, code, atMost, ({ start, list, listed, lows }) => {
          for (let n = 0; n < listed; n++) {
            for (let at = list[n] * 4, end = at + 4; at < end; at++) {
              let word = lows[at];
              const base = (start + at) << 5;
              while (word !== 0) {
                const lowest = word & -word;
                visit(base + 31 - Math.clz32(lowest));
                word ^= lowest;
              }
            }
          }
        });
      },
    });
  }

  /** How many of `bucket`'s sub-range boundaries are <= value. */
  #code(bucket: number, value: number): number {
    const sub = this.#sub;
    let lo = bucket * SUB_BOUNDARIES;
    let hi = lo + SUB_BOUNDARIES;
    const start = lo;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sub[mid] <= value) lo = mid + 1;
      else hi = mid;
    }
    return lo - start;
  }

  #setCode(slot: number, bucket: number, value: number): void {
    if (this.#codes === null) return;
    this.#codes = withRoom(this.#codes, slot + 1);
    this.#codes[slot] = bucket < this.bucketCount ? this.#code(bucket, value) : 0;
  }

  get bucketCount(): number {
    return this.#boundaries.length + 1;
  }

  /** A bucket's code in the slices: bucket + 1, and 0 for NULL (#bucket's bucketCount). */
  #codeOf(bucket: number): number {
    return bucket >= this.bucketCount ? 0 : bucket + 1;
  }

  #bucket(value: number): number {
    if (Number.isNaN(value)) return this.bucketCount; // NULL: below no boundary, in no bitmap
    return bucketOf(this.#boundaries, value);
  }

  set(slot: number, value: number): void {
    // A slot's bucket is its value's (the boundaries only change in rebalance, which re-files
    // every slot): found again by binary search rather than read back from the slices.
    this.values.ensure(slot + 1);
    this.values.set(slot, value);
    const bucket = this.#bucket(value);
    this.#setCode(slot, bucket, value);
    this.#widenSpan(bucket, slot);
    this.#file(slot, bucket);
  }

  /** Writes the slot's code (bucket + 1; 0 for NULL) into the slices. */
  #file(slot: number, bucket: number): void {
    const code = this.#codeOf(bucket);
    this.#coverWords((slot >>> 5) + 1);
    const bits = this.#bits;
    const at = sliceAt(slot >>> 5, bits, 0);
    const bit = 1 << (slot & 31);
    const slices = this.#slices.words;
    for (let j = 0; j < bits; j++) {
      if ((code >>> j) & 1) slices[at + (j << 2)] |= bit;
      else slices[at + (j << 2)] &= ~bit;
    }
  }

  /** Room in the slices for `words` words of slots; slots added read as NULL. */
  #coverWords(words: number): void {
    const block = this.#bits * 4;
    if (sliceWords(words, this.#bits) <= this.#slices.length) return;
    this.#slices.resize(grownLength(this.#slices.length / block, (words + 3) >>> 2) * block);
  }

  /** Drops the room past `size` slots (after a bulk load). */
  trim(size: number): void {
    this.values.trim(size);
    const words = sliceWords(Math.max(1, Math.ceil(size / 32)), this.#bits);
    if (this.#slices.length > words) this.#slices.resize(words);
    if (this.#codes !== null && this.#codes.length > size) this.#codes = this.#codes.slice(0, Math.max(size, 1));
  }

  save(out: SnapshotWriter): void {
    this.values.save(out);
    out.array(this.#boundaries);
    out.value({ bucketRows: this.#bucketRows, bits: this.#bits, codes: this.#codes !== null });
    out.array(this.#slices.words);
    out.array(this.#sub);
    if (this.#codes !== null) out.array(this.#codes);
    out.array(this.#spanFrom);
    out.array(this.#spanTo);
  }

  /** Into an index constructed as the saved one was (the same order, if any, already given). */
  load(input: SnapshotReader): void {
    this.values.load(input);
    this.#boundaries = input.array(Float64Array);
    const { bucketRows, bits, codes } = input.value<{ bucketRows: number; bits: number; codes: boolean }>();
    if (bits !== sliceCount(this.bucketCount) || bits > MAX_BITS || codes !== (this.#codes !== null)) throw new SnapshotRejected('a range index does not add up');
    this.#bucketRows = bucketRows;
    this.#bits = bits;
    // Read straight into the kernel's memory: at 10M rows the slices are ~150 MB in all, which a
    // copy would allocate (and fault in) once more.
    input.arrayInto(Uint32Array, (length) => {
      if (length % (bits * 4) !== 0) throw new SnapshotRejected('a range index does not add up');
      this.#slices.resize(length);
      return this.#slices.words;
    });
    this.#sub = input.array(Float64Array);
    if (codes) this.#codes = input.array(Uint8Array);
    this.#spanFrom = input.array(Int32Array);
    this.#spanTo = input.array(Int32Array);
    this.#nullSpan = null;
  }

  /** The NULL slots' span, found from the values once after a load. */
  #nulls(): { from: number; to: number } {
    if (this.#nullSpan === null) {
      const span = { from: 0x7fffffff, to: -1 };
      for (let slot = 0, end = this.values.capacity; slot < end; slot++) {
        if (!Number.isNaN(this.values.get(slot))) continue;
        span.from = Math.min(span.from, slot);
        span.to = slot;
      }
      this.#nullSpan = span;
    }
    return this.#nullSpan;
  }

  /**
   * Words [from, to) in which every slot is NULL-free and in a bucket the bounds keep whole
   * (none: from = to), from the spans of every other bucket: where slots are filed in the order of
   * their values (videos by date), a range's kept buckets fill the words between its edge runs.
   */
  #wholeWords(lo: number, hi: number, testLow: boolean, testHigh: boolean): WordWindow {
    let below = -1;
    for (let bucket = 0, end = testLow ? lo + 1 : lo; bucket < end; bucket++) below = Math.max(below, this.#spanTo[bucket]);
    let above = 0x7fffffff;
    for (let bucket = testHigh ? hi : hi + 1; bucket < this.bucketCount; bucket++) above = Math.min(above, this.#spanFrom[bucket]);
    // Slots in no order of their values (most columns): nothing whole, and no look for NULLs.
    if (wordsBetween(below, above) < MIN_WHOLE_WORDS) return { from: 0, to: 0 };
    const nulls = this.#nulls();
    if (nulls.from <= nulls.to && nulls.to > below && nulls.from < above) {
      // NULLs between: the larger side of them stays whole.
      if (nulls.from - below > above - nulls.to) above = nulls.from;
      else below = nulls.to;
    }
    return wordsBetween(below, above) > 0 ? { from: wordAfter(below), to: wordOf(above) } : { from: 0, to: 0 };
  }

  /**
   * Re-derives the bucket boundaries from the values of `size` slots and rebuilds the bitmaps:
   * after the first load, and when updates have skewed the buckets.
   */
  rebalance(size: number): void {
    const present = this.values.present(size);
    present.sort();
    // Heavy values' own buckets may add to the target: fewer are asked for until the codes fit
    // the bits the target's take (more bits would cost every pass a slice and every row a bit).
    const most = (1 << sliceCount(this.targetBuckets)) - 1;
    let boundaries = this.#quantileBoundaries(present, this.targetBuckets);
    if (boundaries.length + 1 > most) {
      // The largest target that fits (a binary search: each try is a few dozen lookups).
      let fits = 1;
      let tooMany = this.targetBuckets;
      while (tooMany - fits > 1) {
        const target = (fits + tooMany) >>> 1;
        if (this.#quantileBoundaries(present, target).length + 1 <= most) fits = target;
        else tooMany = target;
      }
      boundaries = this.#quantileBoundaries(present, fits);
    }
    if (this.integer) boundaries = roundedBoundaries(present, boundaries);
    this.#boundaries = Float64Array.from(boundaries);
    const buckets = this.bucketCount;
    this.#bucketRows = present.length / buckets;
    if (this.#codes !== null) {
      // Each bucket's sub-ranges at quantiles of its own values (a sorted run of `present`).
      this.#sub = new Float64Array(buckets * SUB_BOUNDARIES).fill(Infinity);
      for (let bucket = 0; bucket < buckets; bucket++) {
        const start = bucket === 0 ? 0 : lowerBound(present, boundaries[bucket - 1]);
        const end = bucket === buckets - 1 ? present.length : lowerBound(present, boundaries[bucket]);
        let count = 0;
        for (let j = 1; j <= SUB_BOUNDARIES && end > start; j++) {
          const value = present[start + Math.floor((j * (end - start)) / (SUB_BOUNDARIES + 1))];
          const at = bucket * SUB_BOUNDARIES;
          if (count === 0 || value > this.#sub[at + count - 1]) this.#sub[at + count++] = value;
        }
      }
    }
    this.#bits = sliceCount(buckets);
    this.#slices.clear(sliceWords(Math.max(1, Math.ceil(size / 32)), this.#bits));
    this.#spanFrom = new Int32Array(buckets).fill(0x7fffffff);
    this.#spanTo = new Int32Array(buckets).fill(-1);
    this.#nullSpan = { from: 0x7fffffff, to: -1 };
    for (let slot = 0; slot < size; slot++) {
      const value = this.values.get(slot);
      const bucket = this.#bucket(value);
      this.#setCode(slot, bucket, value);
      this.#widenSpan(bucket, slot);
      this.#file(slot, bucket);
    }
  }

  /** Boundaries of about `target` buckets at quantiles of `present` (sorted). */
  #quantileBoundaries(present: Float64Array, target: number): number[] {
    const boundaries: number[] = [];
    const push = (value: number) => {
      if (boundaries.length === 0 || value > boundaries[boundaries.length - 1]) boundaries.push(value);
    };
    // Rows holding exactly `value` (whole numbers: those above value - 1).
    const countOf = (value: number) => bucketOf(present, value) - bucketOf(present, value - 1);
    for (let j = 1; j < target && present.length > 0; j++) {
      const value = present[Math.floor((j * present.length) / target)];
      push(value);
      // A whole number holding a large share of the rows (0 posts, 0 followers) gets a bucket of
      // its own, so a bound at it never means testing every one of those rows.
      if (this.integer && countOf(value) * target * 2 >= present.length) push(value + 1);
    }
    return boundaries;
  }

  #widenSpan(bucket: number, slot: number): void {
    if (bucket >= this.bucketCount) {
      const nulls = this.#nullSpan;
      if (nulls !== null) {
        nulls.from = Math.min(nulls.from, slot);
        nulls.to = Math.max(nulls.to, slot);
      }
      return;
    }
    if (slot < this.#spanFrom[bucket]) this.#spanFrom[bucket] = slot;
    if (slot > this.#spanTo[bucket]) this.#spanTo[bucket] = slot;
  }

  #lowerOf(bucket: number): number {
    return bucket === 0 ? -Infinity : this.#boundaries[bucket - 1];
  }

  #upperOf(bucket: number): number {
    return bucket === this.bucketCount - 1 ? Infinity : this.#boundaries[bucket];
  }

  /** The buckets a range touches (lo..hi; none when hi < lo) and whether its end buckets lie wholly inside it. */
  #bucketRange(bounds: Bounds): { lo: number; hi: number; lowFull: boolean; highFull: boolean } {
    let lo = 0;
    let lowFull = true;
    if (bounds.min !== undefined) {
      lo = this.#bucket(bounds.min);
      lowFull = bounds.min <= this.#lowerOf(lo);
    }
    let hi = this.bucketCount - 1;
    let highFull = true;
    if (bounds.max !== undefined) {
      hi = this.#bucket(bounds.max);
      if (bounds.maxExclusive && bounds.max === this.#lowerOf(hi)) {
        // Nothing in bucket hi is below max, and everything before it is.
        hi -= 1;
      } else {
        // A bucket [a, b) of whole numbers holds a..b-1: all of them are <= max when max is b-1.
        highFull = this.integer && !bounds.maxExclusive && bounds.max >= this.#upperOf(hi) - 1;
      }
    }
    return { lo, hi, lowFull, highFull };
  }

  /** Words [from, to) outside which no slot has a value within `bounds` (from = to: no slot has). */
  wordWindow(bounds: Bounds): WordWindow {
    const { lo, hi } = this.#bucketRange(bounds);
    let first = 0x7fffffff;
    let last = -1;
    for (let bucket = lo; bucket <= hi; bucket++) {
      first = Math.min(first, this.#spanFrom[bucket]);
      last = Math.max(last, this.#spanTo[bucket]);
    }
    return last < first ? { from: 0, to: 0 } : { from: first >>> 5, to: (last >>> 5) + 1 };
  }

  /**
   * How many slots of `matches` (words [from, to), `count` of them) hold a value >= min (a
   * histogram edge), in one pass that changes nothing: whole buckets above min's own by their
   * codes, and the matches in min's bucket by their values or from the order (#edgeOf).
   */
  countAtLeast(matches: Uint32Array, min: number, from: number, to: number, count: number): number {
    const edge = this.#edgeOf(min, count, 0);
    this.#coverWords(to);
    const slices = this.#slices;
    const bits = this.#bits;
    if (edge.lowFull) return slices.countAtLeast(bits, matches, from, to, edge.code, true).above;
    let total = 0;
    // Without an order, the matches in min's bucket are tested one by one: by their sub-range
    // byte, and by value only in min's own sub-range.
    const codes = this.#codes;
    const values = this.values;
    const minCode = codes === null ? -1 : this.#code(edge.code - 1, min);
    const testValues =
      edge.fromOrder !== null
        ? undefined
        : ({ start, list, listed, lows }: Chunk) => {
            for (let n = 0; n < listed; n++) {
              for (let at = list[n] * 4, end = at + 4; at < end; at++) {
                let equal = lows[at];
                const base = (start + at) << 5;
                while (equal !== 0) {
                  const lowest = equal & -equal;
                  const slot = base + 31 - Math.clz32(lowest);
                  const code = codes === null ? minCode : codes[slot];
                  if (code > minCode || (code === minCode && values.get(slot) >= min)) total++;
                  equal ^= lowest;
                }
              }
            }
          };
    const { above, equal } = slices.countAtLeast(bits, matches, from, to, edge.code, false, testValues);
    return total + above + this.#fromOrder(edge, matches, min, equal);
  }

  /**
   * countAtLeast for each of `mins` (a histogram's edges), in one pass over the matches and the
   * slices for every edge whose own bucket is whole or read from the order, where one pass each
   * read them once per edge; an edge whose bucket's rows are tested one by one takes its own pass.
   */
  countAtLeastEach(matches: Uint32Array, mins: Float64Array, from: number, to: number, count: number): number[] {
    const edges = Array.from(mins, (min) => this.#edgeOf(min, count, to - from));
    const fused = edges.flatMap((edge, i) => (edge.lowFull || edge.fromOrder !== null ? [i] : [])).slice(0, MAX_EACH);
    const counts = Array.from(mins, (min, i) => (fused.includes(i) ? 0 : this.countAtLeast(matches, min, from, to, count)));
    if (fused.length === 0) return counts;
    this.#coverWords(to);
    const { above, equal } = this.#slices.countAtLeastEach(this.#bits, matches, from, to, fused.map((i) => edges[i].code));
    fused.forEach((i, q) => {
      const edge = edges[i];
      counts[i] = edge.lowFull ? above[q] + equal[q] : above[q] + this.#fromOrder(edge, matches, mins[i], equal[q]);
    });
    return counts;
  }

  /**
   * Where `min` falls for a count of values >= min among `count` matches: its bucket's code, whether
   * the bucket lies wholly at or above it, and else whether its matches there come from the order:
   * reading the shorter side of min in that bucket's run and testing each row's bit (a run is read
   * in order; the values of matches are read at random, a cache miss each: at 1M creators this
   * halved a five-edge follower histogram, 2026-11-26). `passWords`: the words of a pass of its
   * own that testing the bucket's matches would take besides (countAtLeastEach's edges share one).
   */
  #edgeOf(min: number, count: number, passWords: number): EdgeBucket {
    const lo = this.#bucket(min);
    const lower = this.#lowerOf(lo);
    const upper = this.#upperOf(lo);
    const lowFull = min <= lower;
    const order = this.#order;
    let fromOrder: EdgeBucket['fromOrder'] = null;
    if (!lowFull && order?.built === true) {
      const aboveRun = order.countKeyRange(min, upper, upper !== Infinity);
      const belowRun = order.countKeyRange(lower, min, true);
      // About a row read in order against ten matches' values read at random, or a word of a pass.
      if (Math.min(aboveRun, belowRun) < (count / this.bucketCount) * 10 + passWords) fromOrder = aboveRun <= belowRun ? 'above' : 'below';
    }
    return { code: lo + 1, lowFull, fromOrder, lower, upper };
  }

  /** The matches in an edge's own bucket with a value >= min, from the order (`equal`: the matches in that bucket). */
  #fromOrder(edge: EdgeBucket, matches: Uint32Array, min: number, equal: number): number {
    const { fromOrder, lower, upper } = edge;
    if (fromOrder === 'above') return this.#order!.countKeyRangeIn(matches, min, upper, upper !== Infinity);
    if (fromOrder === 'below') return equal - this.#order!.countKeyRangeIn(matches, lower, min, true);
    return 0;
  }

  /** The passes over the slices countWithin takes for `bounds`. */
  passesWithin(bounds: Bounds): number {
    return (bounds.min !== undefined || this.#holdsNull() ? 1 : 0) + (bounds.max !== undefined ? 1 : 0);
  }

  #holdsNull(): boolean {
    const nulls = this.#nulls();
    return nulls.from <= nulls.to;
  }

  /**
   * How many slots of `matches` (words [from, to), `count` of them) hold a value within `bounds`:
   * those at or above the lower bound less those above the upper, countAtLeast passes (see
   * passesWithin) that change nothing (a search's total when its page needs no bitset of the bound).
   */
  countWithin(matches: Uint32Array, bounds: Bounds, from: number, to: number, count: number): number {
    // A maximum alone over a column without NULL: every match is at least the minimum, counted by
    // a popcount (a word read where a pass compares its slices).
    const atLeastMin =
      bounds.min === undefined && !this.#holdsNull() ? countBits(matches, from, to) : this.countAtLeast(matches, bounds.min ?? -Infinity, from, to, count);
    if (bounds.max === undefined) return atLeastMin;
    const aboveMax = bounds.maxExclusive ? bounds.max : this.integer ? Math.floor(bounds.max) + 1 : nextUp(bounds.max);
    return Math.max(0, atLeastMin - this.countAtLeast(matches, aboveMax, from, to, count));
  }

  /**
   * Adds each match's histogram bucket to `counts` (bucket k: values in [thresholds[k-1],
   * thresholds[k]); NULL in none), reading a match's bucket code from the slices of its word (read
   * once a word, in order) and its value only when its bucket straddles a threshold: the values
   * of few matches at random places cost a cache miss each.
   */
  addHistogram(matches: Uint32Array, thresholds: Float64Array, from: number, to: number, counts: Float64Array): void {
    this.#coverWords(to);
    const buckets = this.bucketCount;
    // Per code: the histogram bucket all of its range bucket's values fall in, or -1 (read the value).
    const histogramOf = new Int32Array(buckets + 1).fill(-1);
    for (let bucket = 0; bucket < buckets; bucket++) {
      const lower = this.#lowerOf(bucket);
      const upper = this.#upperOf(bucket);
      if (!thresholds.some((threshold) => threshold > lower && threshold < upper)) histogramOf[bucket + 1] = bucketOf(thresholds, lower);
    }
    const slices = this.#slices.words;
    const bits = this.#bits;
    const values = this.values;
    for (let i = from; i < to; i++) {
      let word = matches[i];
      if (word === 0) continue;
      const base = sliceAt(i, bits, 0);
      while (word !== 0) {
        const lowest = word & -word;
        const bit = 31 - Math.clz32(lowest);
        word ^= lowest;
        let code = 0;
        for (let j = 0; j < bits; j++) code |= ((slices[base + (j << 2)] >>> bit) & 1) << j;
        if (code === 0) continue; // NULL
        const bucket = histogramOf[code];
        if (bucket >= 0) counts[bucket]++;
        else counts[bucketOf(thresholds, values.get((i << 5) + bit))]++;
      }
    }
  }

  /** The rows a histogram over `thresholds` read from the order walks, or null without a built order. */
  orderedRowsRead(thresholds: Float64Array): number | null {
    return this.#order?.built === true ? this.#order.histogramRowsRead(thresholds) : null;
  }

  /** addHistogram's counts of `count` matches read from the order instead (see SortOrder.addHistogramIn); only with orderedRowsRead. */
  addHistogramFromOrder(matches: Uint32Array, thresholds: Float64Array, counts: Float64Array, count: number): void {
    this.#order!.addHistogramIn(matches, thresholds, counts, count);
  }

  /**
   * rows = the slots of `rows` whose value is within `bounds`, in place, over words [from, words). One pass:
   * a word's codes are compared with the bounds' buckets, keeping the buckets wholly inside them
   * and testing the rows of the one or two buckets the bounds fall inside row by row (or reading
   * them from the order, into `scratch`, when there is one); words with no row left are skipped.
   */
  selectInto(rows: Uint32Array, words: number, bounds: Bounds, scratch?: Uint32Array, from = 0): void {
    const buckets = this.bucketCount;
    const { lo, hi, lowFull, highFull } = this.#bucketRange(bounds);
    if (hi < lo) {
      rows.fill(0, from, words);
      return;
    }
    // The edge buckets tested row by row (one when both bounds fall inside the same bucket).
    const testLow = !lowFull;
    const testHigh = !highFull && (hi !== lo || lowFull);
    this.#coverWords(words);
    const slices = this.#slices;
    const bits = this.#bits;
    const lowCode = lo + 1;
    // No maximum: the highest code the bits hold, which the kernel knows bounds nothing.
    const highCode = hi === buckets - 1 && !testHigh ? 2 ** bits - 1 : hi + 1;
    const values = this.values;
    const min = bounds.min ?? -Infinity;
    const max = bounds.max ?? Infinity;
    const exclusive = bounds.maxExclusive === true;
    // Marking an edge run costs about a row a few nanoseconds and a pass over the words; testing
    // the matching rows of the edges about 200 ns each (a cache miss). A name search leaves a few
    // hundred rows, a category a tenth of them: the order is worth it only for the second.
    const edges = (testLow ? 1 : 0) + (testHigh ? 1 : 0);
    const useOrder =
      edges > 0 &&
      this.#order?.built === true &&
      scratch !== undefined &&
      ((popcount(rows, words, from) * edges) / buckets) * 64 > edges * this.#bucketRows + (words - from);
    if (useOrder) {
      scratch.fill(0, 0, words);
      // The rows of an edge bucket b within the bounds: keys from max(min, b's lower boundary) to
      // the bound when it falls inside b, else to b's upper boundary (excluded: the next bucket's).
      const markEdge = (bucket: number) => {
        const upper = this.#upperOf(bucket);
        const bounded = max < upper;
        this.#order!.markKeyRange(scratch!, Math.max(min, this.#lowerOf(bucket)), bounded ? max : upper, bounded ? exclusive : true);
      };
      if (testLow) markEdge(lo);
      if (testHigh) markEdge(hi);
    }
    const codes = useOrder ? null : this.#codes;
    // The bounds' sub-ranges in their edge buckets; -1 and 256: that bound cannot fail there.
    const lowMinCode = codes !== null && testLow ? this.#code(lo, min) : -1;
    const lowMaxCode = codes !== null && testLow && hi === lo ? this.#code(lo, max) : 256;
    const highMaxCode = codes !== null && testHigh ? this.#code(hi, max) : 256;
    // Only a row in a bound's own sub-range needs its value read.
    const passes = (slot: number, minCode: number, maxCode: number): boolean => {
      if (codes !== null) {
        const code = codes[slot];
        if (code < minCode || code > maxCode) return false;
        if (code > minCode && code < maxCode) return true;
      }
      const value = values.get(slot);
      return value >= min && (exclusive ? value < max : value <= max);
    };
    // The kernel keeps the buckets wholly inside the bounds; the edge buckets' rows come from the
    // order's marks, or are tested here row by row.
    const testEdges = ({ start, list, listed, lows, highs }: Chunk) => {
      for (let n = 0; n < listed; n++) {
        for (let at = list[n] * 4, end = at + 4; at < end; at++) {
          let low = lows[at];
          let high = highs[at];
          if ((low | high) === 0) continue;
          const i = start + at;
          let kept = rows[i];
          while (low !== 0) {
            const lowest = low & -low;
            if (passes((i << 5) + 31 - Math.clz32(lowest), lowMinCode, lowMaxCode)) kept |= lowest;
            low ^= lowest;
          }
          while (high !== 0) {
            const lowest = high & -high;
            if (passes((i << 5) + 31 - Math.clz32(lowest), -1, highMaxCode)) kept |= lowest;
            high ^= lowest;
          }
          rows[i] = kept;
        }
      }
    };
    // Words whose every row the bounds keep need no pass: a date range's middle at 20M videos.
    const whole = this.#wholeWords(lo, hi, testLow, testHigh);
    const skipFrom = Math.max(from, whole.from);
    const skipTo = Math.min(words, whole.to);
    const select = (start: number, end: number) => {
      if (end > start) slices.select(bits, rows, start, end, lowCode, highCode, testLow, testHigh, useOrder ? scratch! : null, testEdges);
    };
    if (skipTo - skipFrom < MIN_WHOLE_WORDS) select(from, words);
    else {
      select(from, skipFrom);
      select(skipTo, words);
    }
  }
}

/** The least double above `value` (inclusive bounds on a column of decimals). */
function nextUp(value: number): number {
  if (Number.isNaN(value) || value === Infinity) return value;
  if (value === 0) return Number.MIN_VALUE;
  const bits = new BigInt64Array(new Float64Array([value]).buffer);
  bits[0] += value > 0 ? 1n : -1n;
  return new Float64Array(bits.buffer)[0];
}

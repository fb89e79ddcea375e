import { bucketOf } from '../../domain/facets.js';
import { Bitset, setRange, type WordWindow } from './bitset.js';
import { lowerBound } from './lower-bound.js';
import type { RowTable } from './row-table.js';
import { SnapshotRejected, type SnapshotReader, type SnapshotWriter } from './snapshot-io.js';
import { compareUtf8 } from './string-store.js';

// One documented order of a table: a numeric key descending, the row id (bytewise, as COLLATE "C"
// compares it) descending as the tie-break. It is kept as a sorted snapshot of all slots plus the
// slots changed since (sorted on demand and merged in), so a change costs no re-sort; once the
// changed slots are many, snapshot and changes merge into a new snapshot in one linear pass.
// The snapshot holds slots, not keys: a slot not changed since has the key it was sorted by, read
// from the table's own column (a copy of every key was 30 MiB at 1M creators and 2M videos). A
// binary search that lands on a changed slot looks at the next unchanged one instead.
//
// A page of matching rows is found one of two ways, whichever is cheaper: walking the order and
// testing each row (dense matches: a few rows per hit), or reading each match's key once and
// keeping the best (skip + take) in a bounded heap (sparse matches: no row visited twice); where
// a range index keeps the same keys as bucket codes, a match whose code cannot beat the heap's
// worst row is passed over without reading its key. No rank per row is kept for the second way:
// 4 bytes a row per order was ~23 MiB at 1M creators and 2M videos, ~230 MB at ten times that,
// and a match's key costs one read as its rank did.

/** Snapshot positions per entry of a run's ranks (SortOrder.rank). */
const RANK_BLOCK = 512;

/**
 * How many slots of one bitset stand in a snapshot before each RANK_BLOCK-th position, so that a
 * run of it counts in two lookups and at most two partial blocks. Made for one snapshot and one
 * content of the bits: a caller keeps them no longer than its table's version.
 */
export interface RunRanks {
  readonly snapshot: Uint32Array;
  readonly before: Uint32Array;
}

/**
 * The same for every value of a single-valued column at once: how many unchanged slots of each
 * code stand before each RANK_BLOCK-th position (`before[block * codes + code]`), so a run of any
 * set of its values counts in a lookup a value and at most two partial blocks. As RunRanks, made
 * for one snapshot and one content of the column.
 */
export interface CodeRanks {
  readonly snapshot: Uint32Array;
  readonly codes: number;
  readonly before: Uint32Array;
}

/** A single-valued column as a code per slot (0: none; a slot past its end has none). */
export type SlotCodes = Uint8Array | Uint16Array | Uint32Array;

export interface Position {
  key: number;
  id: string;
}

/** Orders positions by (key DESC, id DESC, bytewise): negative when a comes first. */
function compare(keyA: number, idA: string, keyB: number, idB: string): number {
  if (keyA !== keyB) return keyA > keyB ? -1 : 1;
  return -compareUtf8(idA, idB);
}

export interface Walk {
  /** Start strictly after this position (in the walking direction); null: from the beginning. */
  from: Position | null;
  /** Stop before reaching this position (exclusive); null: to the end. */
  until: Position | null;
  backward: boolean;
  skip: number;
  take: number;
  /** Told the key of every row read from the order, the one that ends the walk included (tests watch where it reads). */
  visit?: (key: number) => void;
  /** Tests force one way of reading the order; by default select() takes the cheaper. */
  strategy?: 'walk' | 'heap';
}

/**
 * The order's keys as bucket codes that rise with them, bit-sliced (a RangeIndex over the same
 * values, ./range-index.ts): a word's 32 codes compare with a code at once, so the heap reads the
 * key only of a match that may still beat the worst row it keeps.
 */
export interface KeyCodes {
  /** The code of `key`: never lower for a higher key; NaN's is 0, the lowest. */
  codeOf(key: number): number;
  /**
   * Each of `matches`' slots in words [from, to) whose code is at least `code()` (`atMost`: at
   * most it), to `visit`; the code is asked again every few words, so a rising bound keeps up.
   */
  eachWithin(matches: Uint32Array, from: number, to: number, code: () => number, atMost: boolean, visit: (slot: number) => void): void;
}

export class SortOrder {
  /** The snapshot: slots in order; a slot changed since is skipped (its key may have moved). */
  #perm: Uint32Array = new Uint32Array(0);
  readonly #dirty = new Bitset();
  #dirtyList: number[] = [];
  /** Where each changed slot stood in the snapshot, for the slots that were in it. */
  #dirtyAt: number[] = [];
  #delta: number[] | null = null;
  #built = false;
  /**
   * Where the snapshot's runs of consecutive slots begin (each slot one more, or each one less,
   * than the one before it), when they are long: the videos' slots follow their dates, so the
   * newest order is a few runs from a load on, and a key range's rows are set a word at a time.
   * Null when runs are short (slots in no relation to the keys), and rows are marked one by one.
   */
  #runStarts: Uint32Array | null = null;
  #codes: KeyCodes | null = null;

  /** @param keyOf the slot's current key; every change to it is told through touch() */
  constructor(
    private readonly table: RowTable,
    private readonly keyOf: (slot: number) => number,
  ) {}

  /** Codes of this order's keys, kept current by their owner with every change (RangeIndex.useOrder). */
  useCodes(codes: KeyCodes): void {
    this.#codes = codes;
  }

  /** Slots changed since the last sort (each walk or count tests every row it reads against them). */
  get changedCount(): number {
    return this.#dirtyList.length;
  }

  /** The rows of the sorted snapshot: what ranking matches along the order reads (rank, rankCodes). */
  get snapshotRows(): number {
    return this.#perm.length;
  }

  /** The snapshot's runs of consecutive slots, or null when they are too short to keep (tests watch which). */
  get runs(): number | null {
    return this.#runStarts?.length ?? null;
  }

  /** Whether rebuild() has run: until then the order holds no row. */
  get built(): boolean {
    return this.#built;
  }

  /** Sorts every alive slot: the first build. */
  rebuild(): void {
    const slots = new Uint32Array(this.table.aliveCount);
    for (let slot = 0, n = 0; slot < this.table.size; slot++) if (this.table.alive.has(slot)) slots[n++] = slot;
    slots.sort((a, b) => this.#bySlots(this.keyOf(a), a, this.keyOf(b), b));
    this.#setSnapshot(slots);
  }

  /** The order as of now: the changed slots are merged in first. */
  save(out: SnapshotWriter): void {
    if (this.#built && this.#dirtyList.length > 0) this.compact();
    out.value(this.#built);
    out.array(this.#perm);
  }

  /** After the table's own load. */
  load(input: SnapshotReader): void {
    this.#built = input.value<boolean>() === true;
    const perm = input.array(Uint32Array);
    if (perm.length > this.table.size) throw new SnapshotRejected('a sort order does not add up');
    for (let i = 0; i < perm.length; i++) if (perm[i] >= this.table.size) throw new SnapshotRejected('a sort order holds a slot past its table');
    this.#perm = perm;
    this.#runStarts = runStartsOf(perm);
    this.#dirtyList = [];
    this.#dirtyAt = [];
    this.#delta = null;
  }

  /**
   * The slot's key is about to change, or the slot to be added or removed: called before the
   * change, while its key is still the one the snapshot was sorted by.
   */
  touch(slot: number): void {
    this.#dirty.grow(slot + 1);
    this.#delta = null;
    if (this.#dirty.has(slot)) return;
    // Merged before this slot joins them: every change touched before has been made, this one not yet.
    if (this.#dirtyList.length >= Math.max(5_000, this.#perm.length / 50)) this.compact();
    const at = this.#snapshotIndexOf(slot);
    if (at !== -1) this.#dirtyAt.push(at);
    this.#dirty.set(slot);
    this.#dirtyList.push(slot);
  }

  /** Merges the changed slots into a new snapshot (linear). */
  compact(): void {
    const delta = this.#sortedDelta();
    // An array of the exact size: at 20M rows each spare copy (a slice) was 80 MB more at the peak.
    let kept = 0;
    for (let i = 0; i < this.#perm.length; i++) if (!this.#dirty.has(this.#perm[i])) kept++;
    const perm = new Uint32Array(kept + delta.length);
    let out = 0;
    let i = 0;
    let j = 0;
    while (i < this.#perm.length || j < delta.length) {
      while (i < this.#perm.length && this.#dirty.has(this.#perm[i])) i++;
      const takeSnapshot = i < this.#perm.length && (j >= delta.length || this.compareSlots(this.#perm[i], delta[j]) < 0);
      if (takeSnapshot) perm[out++] = this.#perm[i++];
      else if (j < delta.length) perm[out++] = delta[j++];
    }
    this.#setSnapshot(perm);
  }

  /**
   * Up to `take` slots of `bits` (which holds `count` rows) in order, after skipping `skip`, within
   * the walk's bounds; in reverse order when walking backward (for `last`/`before`). `held`: the
   * bits set, when they reach beyond the walk's bounds (`count` is then the rows within them).
   */
  select(bits: Uint32Array, count: number, walk: Walk, held = count, window?: WordWindow): number[] {
    const start = walk.from === null ? (walk.backward ? this.#perm.length - 1 : 0) : this.#snapshotStart(walk.from, walk.backward);
    const end = walk.until === null ? (walk.backward ? -1 : this.#perm.length) : this.#snapshotStart(walk.until, walk.backward) + (walk.backward ? 1 : -1);
    const span = Math.max(0, walk.backward ? start - end : end - start);
    // Rows visited walking: about (skip + take) per share of matches, at most the span; the heap visits each bit once.
    const walkCost = Math.min(span, ((walk.skip + walk.take) * span) / Math.max(count, 1));
    const accept = (slot: number) => (bits[slot >>> 5] & (1 << (slot & 31))) !== 0;
    if (walk.strategy === 'walk') return this.#walk(walk, accept)!;
    if (walk.strategy === undefined && walkCost <= held) {
      // The estimate takes the matches as spread evenly along the order; where they gather at its
      // far end (a high engagement minimum under the follower order) the walk reads most of the
      // span. Past as many rows as the heap reads matches, it gives way to the heap: never more
      // than about twice the cheaper way.
      const found = this.#walk(walk, accept, held);
      if (found !== null) return found;
    }
    return this.#best(bits, count, walk, window);
  }

  /**
   * Up to `take` rows passing `accept`, in order within the walk's bounds, after skipping `skip` of
   * them: no bitset of the matches, each row read is tested (a page whose total nobody asked for).
   */
  walkTesting(walk: Walk, accept: (slot: number) => boolean): number[] {
    return this.#walk(walk, accept)!;
  }

  /**
   * Sets in `out` the bit of every alive slot whose key is within [from, to] (`to` itself left out
   * when `toExclusive`). The snapshot holds such rows in one run, read in order: a range index
   * uses this for the rows of a bucket a bound falls inside, instead of testing each row's value
   * at a random place in memory.
   */
  markKeyRange(out: Uint32Array, from: number, to: number, toExclusive: boolean): void {
    const perm = this.#perm;
    const dirty = this.#dirty;
    // Keys descend: from the first index at or below `to` (below it, when exclusive) to the first
    // below `from`, found by two binary searches; the unchanged slots between are the run.
    const start = this.#firstAfter((key) => (toExclusive ? key >= to : key > to));
    const end = this.#firstAfter((key) => key >= from);
    if (this.#runStarts !== null && end - start >= RUN_ROWS) this.#markRuns(out, start, end);
    else {
      for (let i = start; i < end; i++) {
        const slot = perm[i];
        if (!dirty.has(slot)) out[slot >>> 5] |= 1 << (slot & 31);
      }
    }
    const alive = this.table.alive;
    for (const slot of this.#dirtyList) {
      const key = this.keyOf(slot);
      if (key >= from && (toExclusive ? key < to : key <= to) && alive.has(slot)) out[slot >>> 5] |= 1 << (slot & 31);
    }
  }

  /**
   * out |= the slots of snapshot places [start, end) but the changed ones, a run of consecutive
   * slots at a time: each changed slot's bit is put back as it was (its place is stale).
   */
  #markRuns(out: Uint32Array, start: number, end: number): void {
    const changed = this.#dirtyList;
    const had = new Uint8Array(changed.length);
    for (let k = 0; k < changed.length; k++) had[k] = (out[changed[k] >>> 5] >>> (changed[k] & 31)) & 1;
    const perm = this.#perm;
    const starts = this.#runStarts!;
    for (let r = lowerBound(starts, start + 1) - 1; r < starts.length && starts[r] < end; r++) {
      const first = perm[Math.max(start, starts[r])];
      const last = perm[Math.min(end, r + 1 < starts.length ? starts[r + 1] : perm.length) - 1];
      setRange(out, Math.min(first, last), Math.max(first, last) + 1);
    }
    for (let k = 0; k < changed.length; k++) {
      const slot = changed[k];
      if (had[k] === 1) out[slot >>> 5] |= 1 << (slot & 31);
      else out[slot >>> 5] &= ~(1 << (slot & 31));
    }
  }

  /**
   * How many alive slots have a key within [from, to] (`to` itself left out when `toExclusive`):
   * two binary searches in the snapshot, less its changed slots there, plus the changed slots
   * whose current key is within. What a B-tree count over the range reads row by row.
   */
  countKeyRange(from: number, to: number, toExclusive: boolean): number {
    const start = this.#firstAfter((key) => (toExclusive ? key >= to : key > to));
    const end = this.#firstAfter((key) => key >= from);
    let count = Math.max(0, end - start);
    for (const at of this.#dirtyAt) if (at >= start && at < end) count--;
    const alive = this.table.alive;
    for (const slot of this.#dirtyList) {
      const key = this.keyOf(slot);
      if (key >= from && (toExclusive ? key < to : key <= to) && alive.has(slot)) count++;
    }
    return count;
  }

  /**
   * How many alive slots set in `bits` have a key within [from, to] (`to` left out when
   * `toExclusive`): the run of such keys read in order, each slot's bit tested. A histogram's edge
   * counts its bucket's matches this way rather than reading each match's value at random.
   */
  countKeyRangeIn(bits: Uint32Array, from: number, to: number, toExclusive: boolean, ranks?: RunRanks): number {
    const start = this.#firstAfter((key) => (toExclusive ? key >= to : key > to));
    const end = this.#firstAfter((key) => key >= from);
    return this.#countRunIn(bits, start, end, ranks) + this.#countChangedIn(bits, from, to, toExclusive, true);
  }

  /**
   * Ranks `bits` along the snapshot (one pass, as one count over every row): any run of them then
   * counts in two lookups and at most 2 × RANK_BLOCK rows read (countKeyRangeIn). Valid while the
   * snapshot stays and the bits do not change; a snapshot merged since makes them ignored.
   */
  rank(bits: Uint32Array): RunRanks {
    const length = this.#perm.length;
    const before = new Uint32Array(Math.floor(length / RANK_BLOCK) + 1);
    for (let block = 1; block < before.length; block++) {
      before[block] = before[block - 1] + this.#countRunIn(bits, (block - 1) * RANK_BLOCK, block * RANK_BLOCK);
    }
    return { snapshot: this.#perm, before };
  }

  /**
   * How many alive slots whose code is wanted (`wanted[code]` 1) have a key within [from, to]: as
   * countKeyRangeIn, a slot's code read in place of its bit, from the codes' ranks when given.
   */
  countKeyRangeOfCodes(codeOf: SlotCodes, wanted: Uint8Array, from: number, to: number, toExclusive: boolean, ranks?: CodeRanks): number {
    const start = this.#firstAfter((key) => (toExclusive ? key >= to : key > to));
    const end = this.#firstAfter((key) => key >= from);
    let count = this.#countRunOfCodes(codeOf, wanted, start, end, ranks);
    const alive = this.table.alive;
    for (const slot of this.#dirtyList) {
      if (wanted[codeOf[slot] ?? 0] !== 1 || !alive.has(slot)) continue;
      const key = this.keyOf(slot);
      if (key >= from && (toExclusive ? key < to : key <= to)) count++;
    }
    return count;
  }

  /** Ranks every code of `codeOf` (`codes` of them) along the snapshot in one pass (see CodeRanks). */
  rankCodes(codeOf: SlotCodes, codes: number): CodeRanks {
    const perm = this.#perm;
    const dirty = this.#dirtyList.length > 0 ? this.#dirty : null;
    const blocks = Math.floor(perm.length / RANK_BLOCK) + 1;
    const before = new Uint32Array(blocks * codes);
    const running = new Uint32Array(codes);
    for (let block = 1; block < blocks; block++) {
      for (let i = (block - 1) * RANK_BLOCK; i < block * RANK_BLOCK; i++) {
        const slot = perm[i];
        if (dirty === null || !dirty.has(slot)) running[codeOf[slot] ?? 0]++;
      }
      before.set(running, block * codes);
    }
    return { snapshot: perm, codes, before };
  }

  /** Whether `ranks` were made on this snapshot (a merge since makes them ignored). */
  ranksCurrent(ranks: RunRanks | CodeRanks): boolean {
    return ranks.snapshot === this.#perm;
  }

  /** What a count within a key range reads with ranks, in rows: the two partial blocks at most. */
  static readonly rankedCountRows = 2 * RANK_BLOCK;

  /**
   * The same for the keys outside [from, to]: the two runs beyond it, read in order. A count within
   * a wide range is the matches less this, when fewer rows lie outside the range than inside.
   */
  countKeyOutsideIn(bits: Uint32Array, from: number, to: number, toExclusive: boolean): number {
    const start = this.#firstAfter((key) => (toExclusive ? key >= to : key > to));
    const end = this.#firstAfter((key) => key >= from);
    return this.#countRunIn(bits, 0, start) + this.#countRunIn(bits, end, this.#perm.length) + this.#countChangedIn(bits, from, to, toExclusive, false);
  }

  /**
   * Adds to counts[k] the alive slots set in `bits` (`count` of them) whose key falls in bucket k
   * of the ascending `thresholds` (bucket 0 below the first, k in [thresholds[k-1], thresholds[k]),
   * the last at or above the last): the snapshot's runs between thresholds read in order, each
   * slot's bit tested, then the changed slots by their current keys. The longest run is not read:
   * its count is what the others leave of the matches. It costs the snapshot's rows less that run
   * (histogramRowsRead) whatever the matches; reading each match's value instead costs a cache miss
   * a match near an edge.
   */
  addHistogramIn(bits: Uint32Array, thresholds: Float64Array, counts: Float64Array, count: number): void {
    const perm = this.#perm;
    // The changed slots count below by their current keys, not in the run they stood in: taken out
    // of a copy of the matches once, rather than tested at every row read.
    let unchanged = bits;
    let unchangedCount = count;
    if (this.#dirtyList.length > 0) {
      unchanged = bits.slice();
      for (const slot of this.#dirtyList) {
        const bit = 1 << (slot & 31);
        if (slot >>> 5 < unchanged.length && (unchanged[slot >>> 5] & bit) !== 0) {
          unchanged[slot >>> 5] &= ~bit;
          unchangedCount--;
        }
      }
    }
    // Every unchanged match stands in exactly one run: the longest is the rest.
    const ends = this.#histogramRunEnds(thresholds);
    const longest = longestRun(ends);
    let counted = 0;
    for (let k = thresholds.length; k >= 0; k--) {
      if (k === longest) continue;
      let inRun = 0;
      for (let i = ends[k + 1], end = ends[k]; i < end; i++) {
        const slot = perm[i];
        inRun += (unchanged[slot >>> 5] >>> (slot & 31)) & 1;
      }
      counts[k] += inRun;
      counted += inRun;
    }
    counts[longest] += unchangedCount - counted;
    const alive = this.table.alive;
    for (const slot of this.#dirtyList) {
      if ((bits[slot >>> 5] & (1 << (slot & 31))) !== 0 && alive.has(slot)) counts[bucketOf(thresholds, this.keyOf(slot))]++;
    }
  }

  /** The snapshot rows addHistogramIn reads for `thresholds`: all but the longest run between them. */
  histogramRowsRead(thresholds: Float64Array): number {
    const ends = this.#histogramRunEnds(thresholds);
    const longest = longestRun(ends);
    return this.#perm.length - (ends[longest] - ends[longest + 1]);
  }

  /**
   * Where each bucket's run ends in the snapshot. Keys descend, so the top bucket's run comes
   * first: bucket k (of the ascending thresholds) is the run [ends[k + 1], ends[k]), with
   * ends[thresholds.length + 1] = 0 and ends[0] the snapshot's length.
   */
  #histogramRunEnds(thresholds: Float64Array): Int32Array {
    const ends = new Int32Array(thresholds.length + 2);
    for (let k = thresholds.length; k >= 1; k--) ends[k] = this.#firstAfter((key) => key >= thresholds[k - 1]);
    ends[0] = this.#perm.length;
    return ends;
  }

  /** The unchanged slots of snapshot indexes [start, end) set in `bits`; from their ranks when given and current. */
  #countRunIn(bits: Uint32Array, start: number, end: number, ranks?: RunRanks): number {
    const perm = this.#perm;
    if (ranks !== undefined && ranks.snapshot === perm && end - start > 2 * RANK_BLOCK) {
      const first = Math.ceil(start / RANK_BLOCK);
      const last = Math.floor(end / RANK_BLOCK);
      return this.#countRunIn(bits, start, first * RANK_BLOCK) + ranks.before[last] - ranks.before[first] + this.#countRunIn(bits, last * RANK_BLOCK, end);
    }
    let count = 0;
    if (this.#dirtyList.length === 0) {
      for (let i = start; i < end; i++) {
        const slot = perm[i];
        count += (bits[slot >>> 5] >>> (slot & 31)) & 1;
      }
      return count;
    }
    const dirty = this.#dirty;
    for (let i = start; i < end; i++) {
      const slot = perm[i];
      if ((bits[slot >>> 5] & (1 << (slot & 31))) !== 0 && !dirty.has(slot)) count++;
    }
    return count;
  }

  /** The unchanged slots of snapshot indexes [start, end) with a wanted code; from the codes' ranks when given and current. */
  #countRunOfCodes(codeOf: SlotCodes, wanted: Uint8Array, start: number, end: number, ranks?: CodeRanks): number {
    const perm = this.#perm;
    if (ranks !== undefined && ranks.snapshot === perm && end - start > 2 * RANK_BLOCK) {
      const first = Math.ceil(start / RANK_BLOCK);
      const last = Math.floor(end / RANK_BLOCK);
      let count = this.#countRunOfCodes(codeOf, wanted, start, first * RANK_BLOCK) + this.#countRunOfCodes(codeOf, wanted, last * RANK_BLOCK, end);
      const { before, codes } = ranks;
      for (let code = 0; code < codes; code++) if (wanted[code] === 1) count += before[last * codes + code] - before[first * codes + code];
      return count;
    }
    const dirty = this.#dirtyList.length > 0 ? this.#dirty : null;
    let count = 0;
    for (let i = start; i < end; i++) {
      const slot = perm[i];
      if (wanted[codeOf[slot] ?? 0] === 1 && (dirty === null || !dirty.has(slot))) count++;
    }
    return count;
  }

  /** The alive changed slots set in `bits` whose current key is within [from, to] (`inside`) or outside it. */
  #countChangedIn(bits: Uint32Array, from: number, to: number, toExclusive: boolean, inside: boolean): number {
    const alive = this.table.alive;
    let count = 0;
    for (const slot of this.#dirtyList) {
      if ((bits[slot >>> 5] & (1 << (slot & 31))) === 0 || !alive.has(slot)) continue;
      const key = this.keyOf(slot);
      if ((key >= from && (toExclusive ? key < to : key <= to)) === inside) count++;
    }
    return count;
  }

  /** Where a slot stands in this order, for its cursor and for comparisons. */
  positionOf(slot: number): Position {
    return { key: this.keyOf(slot), id: this.table.ids.get(slot) };
  }

  /** Orders two slots as this order does (negative: a first). */
  compareSlots(a: number, b: number): number {
    return this.#bySlots(this.keyOf(a), a, this.keyOf(b), b);
  }

  /** Orders two positions (negative: a first). */
  comparePositions(a: Position, b: Position): number {
    return compare(a.key, a.id, b.key, b.id);
  }

  /** Orders a slot against a position (negative: the slot comes first). */
  comparePosition(slot: number, position: Position): number {
    return this.#toPosition(this.keyOf(slot), slot, position);
  }

  /** Orders slot a (whose key is keyA) against slot b: negative when a comes first. */
  #bySlots(keyA: number, a: number, keyB: number, b: number): number {
    if (keyA !== keyB) return keyA > keyB ? -1 : 1;
    return a === b ? 0 : -this.table.ids.compare(a, b);
  }

  /** Orders a slot (whose key is `key`) against a position: negative when the slot comes first. */
  #toPosition(key: number, slot: number, position: Position): number {
    if (key !== position.key) return key > position.key ? -1 : 1;
    return -this.table.ids.compareText(slot, position.id);
  }

  /**
   * Walks the snapshot and the changed rows together, testing each row; null once it has read
   * `budget` rows unfinished, or once the rows read so far, at the share of them that matched,
   * make a walk of more than `budget` rows likely.
   */
  #walk(walk: Walk, accept: (slot: number) => boolean, budget = Infinity): number[] | null {
    const { from, until, backward } = walk;
    let skip = walk.skip;
    const limit = budget;
    const wanted = walk.skip + walk.take;
    let read = 0;
    let accepted = 0;
    const delta = this.#sortedDelta();
    const found: number[] = [];
    const step = backward ? -1 : 1;
    let i = from === null ? (backward ? this.#perm.length - 1 : 0) : this.#snapshotStart(from, backward);
    let j = from === null ? (backward ? delta.length - 1 : 0) : this.#listStart(delta, from, backward);
    // Where `until` falls in the snapshot, found once: an unchanged row is past it by its index,
    // not by its key, read at a random place in memory for every row walked (10 % of a selective
    // search's thread at 10M rows). Changed rows still compare their keys.
    const untilIndex =
      until === null ? -1 : this.#firstAfter((key, slot) => (backward ? this.#toPosition(key, slot, until) <= 0 : this.#toPosition(key, slot, until) < 0));
    const inSnapshot = () => i >= 0 && i < this.#perm.length;
    const inDelta = () => j >= 0 && j < delta.length;
    // Likewise the next changed row's place among the unchanged ones: the snapshot's rows before
    // it are merged by index, not each by its key (with writes flowing, some changed row is
    // nearly always ahead of a walk).
    const placeOf = (slot: number) => {
      const key = this.keyOf(slot);
      return this.#firstAfter((k, s) => this.#bySlots(k, s, key, slot) < 0);
    };
    let deltaAt = inDelta() ? placeOf(delta[j]) : 0;
    while (found.length < walk.take) {
      while (inSnapshot() && this.#dirty.has(this.#perm[i])) i += step;
      if (!inSnapshot() && !inDelta()) break;
      let slot: number;
      if (inSnapshot() && (!inDelta() || (backward ? i >= deltaAt : i < deltaAt))) {
        if (until !== null && (backward ? i < untilIndex : i >= untilIndex)) break;
        slot = this.#perm[i];
        i += step;
      } else {
        slot = delta[j];
        j += step;
        if (inDelta()) deltaAt = placeOf(delta[j]);
        if (until !== null && this.#toPosition(this.keyOf(slot), slot, until) * step >= 0) break;
      }
      walk.visit?.(this.keyOf(slot));
      if (--budget < 0) return null;
      // Matches gathered at the order's far end (a follower minimum under the engagement order):
      // the projection (one more match counted, so none found yet projects a finite walk) gives up
      // after a few thousand rows, where the budget would read every row the heap reads.
      if ((++read & 1023) === 0 && (read * wanted) / (accepted + 1) > limit) return null;
      if (!accept(slot)) continue;
      accepted++;
      if (skip > 0) skip--;
      else found.push(slot);
    }
    return found;
  }

  /**
   * Reads every match's key once and keeps the first (skip + take) of them in the walking direction
   * in a heap whose top is the last kept; changed slots need no merge, their keys are current.
   */
  #best(bits: Uint32Array, count: number, walk: Walk, window: WordWindow = { from: 0, to: bits.length }): number[] {
    const { from, until, skip } = walk;
    const direction = walk.backward ? -1 : 1;
    const room = Math.min(skip + walk.take, count);
    if (room <= 0) return [];
    const slots = new Uint32Array(room);
    const keys = new Float64Array(room);
    // > 0: slot a (key ka) comes after slot b in the walking direction.
    const later = (ka: number, a: number, kb: number, b: number) => this.#bySlots(ka, a, kb, b) * direction > 0;
    const sift = (size: number) => {
      for (let i = 0; ; ) {
        const left = 2 * i + 1;
        if (left >= size) return;
        const right = left + 1;
        const child = right < size && later(keys[right], slots[right], keys[left], slots[left]) ? right : left;
        if (!later(keys[child], slots[child], keys[i], slots[i])) return;
        swap(slots, keys, i, child);
        i = child;
      }
    };
    let held = 0;
    const alive = this.table.alive;
    // Once the heap is full, a match whose key's code is below the last kept key's (walking
    // backward: above it) cannot get in: its key is not read (a cache miss each at random slots).
    const codes = this.#codes;
    let lastKeptCode = -1;
    const consider = (slot: number) => {
      if (!alive.has(slot)) return;
      const key = this.keyOf(slot);
      walk.visit?.(key);
      if (from !== null && this.#toPosition(key, slot, from) * direction <= 0) return;
      if (until !== null && this.#toPosition(key, slot, until) * direction >= 0) return;
      if (held < room) {
        // Sift up: the new row rises while it comes after its parent.
        let i = held++;
        slots[i] = slot;
        keys[i] = key;
        while (i > 0) {
          const parent = (i - 1) >>> 1;
          if (!later(keys[i], slots[i], keys[parent], slots[parent])) break;
          swap(slots, keys, i, parent);
          i = parent;
        }
      } else if (later(keys[0], slots[0], key, slot)) {
        slots[0] = slot;
        keys[0] = key;
        sift(held);
      } else return;
      if (codes !== null && held === room) lastKeptCode = codes.codeOf(keys[0]);
    };
    // Only the words that can hold a match (a date window's are a few percent of 20M videos').
    const end = Math.min(window.to, bits.length);
    let w = window.from;
    // Every match until the heap is full; then, with codes, only those the codes let through,
    // found by the kernel a span of words at a time.
    for (; w < end && lastKeptCode < 0; w++) {
      let word = bits[w];
      while (word !== 0) {
        const lowest = word & -word;
        consider((w << 5) + 31 - Math.clz32(lowest));
        word ^= lowest;
      }
    }
    if (w < end) codes!.eachWithin(bits, w, end, () => lastKeptCode, walk.backward, consider);
    // Drain the heap from its last row to its first.
    const found: number[] = new Array(held);
    for (let size = held; size > 0; size--) {
      found[size - 1] = slots[0];
      swap(slots, keys, 0, size - 1);
      sift(size - 1);
    }
    return found.slice(skip);
  }

  /** First snapshot index strictly after `from`; walking backward, the last one strictly before it. */
  #snapshotStart(from: Position, backward: boolean): number {
    const after = this.#firstAfter((key, slot) => this.#toPosition(key, slot, from) <= 0);
    if (!backward) return after;
    // Walkers skip changed slots themselves: stepping over them here is only for the one equal to `from`.
    let before = after - 1;
    while (before >= 0 && (this.#dirty.has(this.#perm[before]) || this.comparePosition(this.#perm[before], from) === 0)) before--;
    return before;
  }

  /**
   * The first snapshot index whose unchanged slots, from there on, all fail `before` (which holds
   * for a prefix of the order): a binary search over the unchanged slots, a probe landing on a
   * changed one moving on to the next unchanged one.
   */
  #firstAfter(before: (key: number, slot: number) => boolean): number {
    const perm = this.#perm;
    const dirty = this.#dirty;
    let lo = 0;
    let hi = perm.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      let probe = mid;
      while (probe < hi && dirty.has(perm[probe])) probe++;
      if (probe === hi) hi = mid;
      else if (before(this.keyOf(perm[probe]), perm[probe])) lo = probe + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The slot's index in the snapshot, or -1 when it is not there (new, removed, or changed since). */
  #snapshotIndexOf(slot: number): number {
    // The snapshot's unchanged slots are all alive: a dead one left it when it was removed.
    if (this.#dirty.has(slot) || !this.table.alive.has(slot)) return -1;
    const key = this.keyOf(slot);
    let at = this.#firstAfter((k, s) => this.#bySlots(k, s, key, slot) < 0);
    while (at < this.#perm.length && this.#dirty.has(this.#perm[at])) at++;
    return at < this.#perm.length && this.#perm[at] === slot ? at : -1;
  }

  /** The same in a sorted list of slots (current keys). */
  #listStart(slots: number[], from: Position, backward: boolean): number {
    let lo = 0;
    let hi = slots.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#toPosition(this.keyOf(slots[mid]), slots[mid], from) <= 0) lo = mid + 1;
      else hi = mid;
    }
    if (!backward) return lo;
    let before = lo - 1;
    while (before >= 0 && this.#toPosition(this.keyOf(slots[before]), slots[before], from) === 0) before--;
    return before;
  }

  #sortedDelta(): number[] {
    if (this.#delta) return this.#delta;
    const live = this.#dirtyList.filter((slot) => this.table.alive.has(slot));
    live.sort((a, b) => this.#bySlots(this.keyOf(a), a, this.keyOf(b), b));
    this.#delta = live;
    return live;
  }

  #setSnapshot(perm: Uint32Array): void {
    this.#built = true;
    this.#perm = perm;
    this.#runStarts = runStartsOf(perm);
    for (const slot of this.#dirtyList) this.#dirty.clear(slot);
    this.#dirtyList = [];
    this.#dirtyAt = [];
    this.#delta = null;
  }
}

/** Rows a run holds on average at least for the runs to be kept, and a range to be marked by them. */
const RUN_ROWS = 64;

/** Where each run of consecutive slots (perm[i] = perm[i - 1] ± 1, one way) begins, or null past one run per RUN_ROWS rows. */
function runStartsOf(perm: Uint32Array): Uint32Array | null {
  if (perm.length === 0) return null;
  const most = Math.max(1, Math.floor(perm.length / RUN_ROWS));
  const starts = [0];
  let step = 0;
  for (let i = 1; i < perm.length; i++) {
    const next = perm[i] - perm[i - 1];
    if ((next === 1 || next === -1) && (step === 0 || next === step)) {
      step = next;
      continue;
    }
    if (starts.length === most) return null;
    starts.push(i);
    step = 0;
  }
  return Uint32Array.from(starts);
}

function swap(slots: Uint32Array, keys: Float64Array, i: number, j: number): void {
  const slot = slots[i];
  slots[i] = slots[j];
  slots[j] = slot;
  const key = keys[i];
  keys[i] = keys[j];
  keys[j] = key;
}

/** The bucket whose run is the longest, of runs [ends[k + 1], ends[k]) (SortOrder#histogramRunEnds). */
function longestRun(ends: Int32Array): number {
  let longest = 0;
  for (let k = 1; k < ends.length - 1; k++) if (ends[k] - ends[k + 1] > ends[longest] - ends[longest + 1]) longest = k;
  return longest;
}

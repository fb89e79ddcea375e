import { Bitset, grownLength } from './bitset.js';
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
// testing each row (dense matches: a few rows per hit), or placing the matches in a bitset by
// their rank in the order and reading it in rank order (sparse matches: no row visited twice).

export interface Position {
  key: number;
  id: string;
}

/** Orders positions by (key DESC, id DESC, bytewise): negative when a comes first. */
function compare(keyA: number, idA: string, keyB: number, idB: string): number {
  if (keyA !== keyB) return keyA > keyB ? -1 : 1;
  return -compareUtf8(idA, idB);
}

const NO_RANK = 0xffffffff;

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
  strategy?: 'walk' | 'ranked';
}

export class SortOrder {
  /** The snapshot: slots in order; a slot changed since is skipped (its key may have moved). */
  #perm: Uint32Array = new Uint32Array(0);
  /** Each snapshot slot's index in #perm (NO_RANK for slots outside the snapshot). */
  #rankOf = new Uint32Array(0);
  readonly #dirty = new Bitset();
  #dirtyList: number[] = [];
  #delta: number[] | null = null;
  #built = false;

  /** @param keyOf the slot's current key; every change to it is told through touch() */
  constructor(
    private readonly table: RowTable,
    private readonly keyOf: (slot: number) => number,
  ) {}

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

  /** After the table's own load: the ranks are derived again, a linear pass. */
  load(input: SnapshotReader): void {
    this.#built = input.value<boolean>() === true;
    const perm = input.array(Uint32Array);
    if (perm.length > this.table.size) throw new SnapshotRejected('a sort order does not add up');
    this.#perm = perm;
    this.#rankOf = new Uint32Array(Math.max(this.table.size, 1)).fill(NO_RANK);
    for (let rank = 0; rank < perm.length; rank++) {
      if (perm[rank] >= this.table.size) throw new SnapshotRejected('a sort order holds a slot past its table');
      this.#rankOf[perm[rank]] = rank;
    }
    this.#dirtyList = [];
    this.#delta = null;
  }

  /** The slot's key changed, or it was added or removed. */
  touch(slot: number): void {
    this.#dirty.grow(slot + 1);
    this.#delta = null;
    if (this.#dirty.has(slot)) return;
    this.#dirty.set(slot);
    this.#dirtyList.push(slot);
    if (this.#dirtyList.length > Math.max(5_000, this.#perm.length / 50)) this.compact();
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
   * the walk's bounds; in reverse order when walking backward (for `last`/`before`).
   */
  select(bits: Uint32Array, count: number, walk: Walk): number[] {
    const start = walk.from === null ? (walk.backward ? this.#perm.length - 1 : 0) : this.#snapshotStart(walk.from, walk.backward);
    const end = walk.until === null ? (walk.backward ? -1 : this.#perm.length) : this.#snapshotStart(walk.until, walk.backward) + (walk.backward ? 1 : -1);
    const span = Math.max(0, walk.backward ? start - end : end - start);
    // Rows visited walking: about (skip + take) per share of matches; ranking visits each match once.
    const walkCost = ((walk.skip + walk.take) * span) / Math.max(count, 1);
    const accept = (slot: number) => (bits[slot >>> 5] & (1 << (slot & 31))) !== 0;
    if (walk.strategy === 'walk' || (walk.strategy === undefined && walkCost <= count)) return this.#walk(walk, accept);
    return this.#ranked(bits, walk, start);
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
    for (let i = start; i < end; i++) {
      const slot = perm[i];
      if (!dirty.has(slot)) out[slot >>> 5] |= 1 << (slot & 31);
    }
    const alive = this.table.alive;
    for (const slot of this.#dirtyList) {
      const key = this.keyOf(slot);
      if (key >= from && (toExclusive ? key < to : key <= to) && alive.has(slot)) out[slot >>> 5] |= 1 << (slot & 31);
    }
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

  /** Walks the snapshot and the changed rows together, testing each row. */
  #walk(walk: Walk, accept: (slot: number) => boolean): number[] {
    const { from, until, backward } = walk;
    let skip = walk.skip;
    const delta = this.#sortedDelta();
    const found: number[] = [];
    const step = backward ? -1 : 1;
    let i = from === null ? (backward ? this.#perm.length - 1 : 0) : this.#snapshotStart(from, backward);
    let j = from === null ? (backward ? delta.length - 1 : 0) : this.#listStart(delta, from, backward);
    const inSnapshot = () => i >= 0 && i < this.#perm.length;
    const inDelta = () => j >= 0 && j < delta.length;
    while (found.length < walk.take) {
      while (inSnapshot() && this.#dirty.has(this.#perm[i])) i += step;
      if (!inSnapshot() && !inDelta()) break;
      let slot: number;
      if (inSnapshot() && (!inDelta() || this.compareSlots(this.#perm[i], delta[j]) * step < 0)) {
        slot = this.#perm[i];
        i += step;
      } else {
        slot = delta[j];
        j += step;
      }
      walk.visit?.(this.keyOf(slot));
      if (until !== null && this.#toPosition(this.keyOf(slot), slot, until) * step >= 0) break;
      if (!accept(slot)) continue;
      if (skip > 0) skip--;
      else found.push(slot);
    }
    return found;
  }

  /**
   * Places the matching snapshot rows in a bitset by rank and reads it in order, merging in the
   * matching changed rows (sorted on the spot: they are few).
   */
  #ranked(bits: Uint32Array, walk: Walk, start: number): number[] {
    const ranks = new Uint32Array(Math.max(1, Math.ceil(this.#perm.length / 32)));
    const changed: number[] = [];
    const rankOf = this.#rankOf;
    for (let w = 0; w < bits.length; w++) {
      let word = bits[w];
      while (word !== 0) {
        const lowest = word & -word;
        const slot = (w << 5) + 31 - Math.clz32(lowest);
        word ^= lowest;
        const rank = slot < rankOf.length ? rankOf[slot] : NO_RANK;
        if (rank === NO_RANK || this.#dirty.has(slot)) {
          if (this.table.alive.has(slot)) changed.push(slot);
        } else ranks[rank >>> 5] |= 1 << (rank & 31);
      }
    }
    changed.sort((a, b) => this.#bySlots(this.keyOf(a), a, this.keyOf(b), b));
    const { from, until, backward } = walk;
    const step = backward ? -1 : 1;
    let j = from === null ? (backward ? changed.length - 1 : 0) : this.#listStart(changed, from, backward);
    let rank = nextRank(ranks, start, backward, this.#perm.length);
    let skip = walk.skip;
    const found: number[] = [];
    while (found.length < walk.take) {
      const inDelta = j >= 0 && j < changed.length;
      if (rank === -1 && !inDelta) break;
      let slot: number;
      if (rank !== -1 && (!inDelta || this.compareSlots(this.#perm[rank], changed[j]) * step < 0)) {
        slot = this.#perm[rank];
        rank = nextRank(ranks, rank + step, backward, this.#perm.length);
      } else {
        slot = changed[j];
        j += step;
      }
      walk.visit?.(this.keyOf(slot));
      if (until !== null && this.#toPosition(this.keyOf(slot), slot, until) * step >= 0) break;
      if (skip > 0) skip--;
      else found.push(slot);
    }
    return found;
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
    if (this.#rankOf.length < this.table.size) this.#rankOf = new Uint32Array(grownLength(this.#rankOf.length, this.table.size));
    this.#rankOf.fill(NO_RANK);
    for (let rank = 0; rank < perm.length; rank++) this.#rankOf[perm[rank]] = rank;
    for (const slot of this.#dirtyList) this.#dirty.clear(slot);
    this.#dirtyList = [];
    this.#delta = null;
  }
}

/** The next set bit at or after `at` (at or before when backward), or -1. */
function nextRank(bits: Uint32Array, at: number, backward: boolean, size: number): number {
  if (at < 0 || at >= size) return -1;
  let w = at >>> 5;
  if (!backward) {
    let word = bits[w] & (~0 << (at & 31));
    for (;;) {
      if (word !== 0) {
        const rank = (w << 5) + 31 - Math.clz32(word & -word);
        return rank < size ? rank : -1;
      }
      if (++w >= bits.length) return -1;
      word = bits[w];
    }
  }
  const shift = 31 - (at & 31);
  let word = shift === 0 ? bits[w] : bits[w] & (~0 >>> shift);
  for (;;) {
    if (word !== 0) return (w << 5) + 31 - Math.clz32(word);
    if (--w < 0) return -1;
    word = bits[w];
  }
}

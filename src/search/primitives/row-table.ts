import { Bitset, grownLength } from './bitset.js';
import { SnapshotRejected, type SnapshotReader, type SnapshotWriter } from './snapshot-io.js';
import { StringStore } from './string-store.js';

// Row slots of one indexed table: a slot per row key, never reused for another key (a deleted row
// keeps its slot, dead, and gets it back if it returns), so every column is a plain array indexed
// by slot. Keys are found through an open-addressing hash table of slot numbers: a few bytes a row,
// where a Map<string, number> costs ~80 bytes a row (hundreds of MB at a few million rows).

/**
 * Whether an open-addressing table of `capacity` places is too full for `entries`: past three
 * quarters, where linear probing's misses start to lengthen. (Half full cost 134 MB more at 20M
 * videos than this, for probes a lookup by key barely notices.)
 */
export const tooFull = (entries: number, capacity: number) => entries * 4 > capacity * 3;

/** FNV-1a of a string: the hash of the open-addressing tables here and in the text index. */
export function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export class RowTable {
  /** Slots in use (alive or dead). */
  size = 0;
  /** The row's id, by slot (the id tie-break of every order), outside the V8 heap. */
  readonly ids = new StringStore();
  readonly alive = new Bitset();
  aliveCount = 0;
  /** Bumped on every change: cached query results of an older version are stale. */
  version = 0;
  /** Open addressing: slot + 1, or 0 for an empty place. */
  #table = new Int32Array(16);

  /**
   * A slot's key is its id, unless `keyOf` and `isKeyOf` say otherwise (creators: platform and id).
   * No hash is kept per slot (4 bytes a row, 128 MB at 10M creators and 20M videos): a probe
   * compares the key itself, and growing the table hashes each slot's key again.
   */
  constructor(
    private readonly keyOf: (slot: number) => string = (slot) => this.ids.get(slot),
    private readonly isKeyOf: (slot: number, key: string) => boolean = (slot, key) => this.ids.equals(slot, key),
  ) {}

  slotOf(key: string): number {
    const mask = this.#table.length - 1;
    for (let place = hashOf(key) & mask; ; place = (place + 1) & mask) {
      const entry = this.#table[place];
      if (entry === 0) return -1;
      if (this.isKeyOf(entry - 1, key)) return entry - 1;
    }
  }

  /**
   * The slot of `key`, a new one if the key was never seen; `init` fills the new slot's columns
   * (it is called before the slot is findable by key, with its id already stored).
   */
  slotFor(key: string, id: string, init: (slot: number) => void): number {
    const existing = this.slotOf(key);
    if (existing !== -1) return existing;
    const slot = this.size++;
    this.ids.push(id);
    this.alive.grow(this.size);
    init(slot);
    if (tooFull(this.size, this.#table.length)) this.#rehash(this.#table.length * 2);
    else this.#place(slot, hashOf(key));
    return slot;
  }

  /** Drops the room past the slots in use (after a bulk load). */
  trim(): void {
    this.ids.trim();
    this.alive.trim(this.size);
  }

  markAlive(slot: number, alive: boolean): void {
    if (this.alive.has(slot) === alive) return;
    this.alive.assign(slot, alive);
    this.aliveCount += alive ? 1 : -1;
  }

  save(out: SnapshotWriter): void {
    out.value({ size: this.size, aliveCount: this.aliveCount });
    this.ids.save(out);
    this.alive.save(out);
    out.array(this.#table);
  }

  load(input: SnapshotReader): void {
    const { size, aliveCount } = input.value<{ size: number; aliveCount: number }>();
    this.ids.load(input);
    this.alive.load(input);
    const table = input.array(Int32Array);
    // The hash table's length is a power of two with room for the slots (slotOf masks with it).
    if (this.ids.size !== size || tooFull(size, table.length) || (table.length & (table.length - 1)) !== 0) {
      throw new SnapshotRejected('a row table does not add up');
    }
    this.size = size;
    this.aliveCount = aliveCount;
    this.#table = table;
    this.version++;
  }

  /** Words of a bitset covering every slot. */
  get words(): number {
    return Math.max(1, Math.ceil(this.size / 32));
  }

  #place(slot: number, hash: number): void {
    const mask = this.#table.length - 1;
    let place = hash & mask;
    while (this.#table[place] !== 0) place = (place + 1) & mask;
    this.#table[place] = slot + 1;
  }

  #rehash(capacity: number): void {
    this.#table = new Int32Array(capacity);
    for (let slot = 0; slot < this.size; slot++) this.#place(slot, hashOf(this.keyOf(slot)));
  }
}

/** A growable Float64Array (NaN for "no value"). */
export class Float64Column {
  data = new Float64Array(1024).fill(NaN);

  ensure(size: number): void {
    if (size <= this.data.length) return;
    const next = new Float64Array(grownLength(this.data.length, size)).fill(NaN);
    next.set(this.data);
    this.data = next;
  }
}

/** The Int32 that stands for NULL in a NumberColumn's whole-number form. */
const NULL_INT = -0x80000000;

/**
 * A growable numeric column (NaN for NULL), 4 bytes a value while every value is a whole number
 * that fits an Int32 (counts, cents of most metrics), 8 from the first value that does not (it is
 * then widened, once, to a Float64Array). Exact either way; at a million rows per column the
 * narrow form saves 4 MB.
 */
export class NumberColumn {
  /**
   * The values as stored: Int32 (NULL_INT for NULL) while narrow, else Float64 (NaN). Read it
   * directly only where NULL slots cannot occur (a range's bucket bitmaps hold none).
   */
  data: Int32Array | Float64Array;
  #narrow: boolean;

  /** @param wide start as Float64 (a column whose values never fit: epoch milliseconds) */
  constructor(wide = false) {
    this.#narrow = !wide;
    this.data = wide ? new Float64Array(1024).fill(NaN) : new Int32Array(1024).fill(NULL_INT);
  }

  /** Whether it holds 4-byte whole numbers (tests). */
  get narrow(): boolean {
    return this.#narrow;
  }

  /** The slot's value, NaN for NULL; the slot must be below the capacity `ensure` gave. */
  get(slot: number): number {
    const value = this.data[slot];
    return value === NULL_INT && this.#narrow ? NaN : value;
  }

  set(slot: number, value: number): void {
    this.ensure(slot + 1);
    if (this.#narrow) {
      if (Number.isNaN(value)) value = NULL_INT;
      else if (!Number.isInteger(value) || value <= NULL_INT || value > 0x7fffffff) this.#widen();
    }
    this.data[slot] = value;
  }

  ensure(size: number): void {
    const length = this.data.length;
    if (size <= length) return;
    const next = this.#narrow ? new Int32Array(grownLength(length, size)).fill(NULL_INT) : new Float64Array(grownLength(length, size)).fill(NaN);
    next.set(this.data);
    this.data = next;
  }

  /** Drops the room past `size` slots (after a bulk load). */
  trim(size: number): void {
    if (this.data.length > size) this.data = this.data.slice(0, Math.max(size, 1));
  }

  save(out: SnapshotWriter): void {
    out.array(this.data);
  }

  /** Narrow or wide, as it was written. */
  load(input: SnapshotReader): void {
    const data = input.anyArray();
    if (!(data instanceof Int32Array || data instanceof Float64Array)) throw new SnapshotRejected('a number column is neither Int32 nor Float64');
    this.data = data;
    this.#narrow = data instanceof Int32Array;
  }

  /** The non-NULL values of slots [0, size), as doubles (for sorting). */
  present(size: number): Float64Array {
    this.ensure(size);
    const out = new Float64Array(size);
    let n = 0;
    for (let slot = 0; slot < size; slot++) {
      const value = this.get(slot);
      if (!Number.isNaN(value)) out[n++] = value;
    }
    return out.subarray(0, n);
  }

  #widen(): void {
    const floats = new Float64Array(this.data.length);
    for (let slot = 0; slot < floats.length; slot++) floats[slot] = this.get(slot);
    this.data = floats;
    this.#narrow = false;
  }
}

/** A growable Int32Array (-1 for "none"). */
export class Int32Column {
  data = new Int32Array(1024).fill(-1);

  /** Drops the room past `size` slots (after a bulk load). */
  trim(size: number): void {
    if (this.data.length > size) this.data = this.data.slice(0, Math.max(size, 1));
  }

  save(out: SnapshotWriter): void {
    out.array(this.data);
  }

  load(input: SnapshotReader): void {
    this.data = input.array(Int32Array);
  }

  ensure(size: number): void {
    if (size <= this.data.length) return;
    const next = new Int32Array(grownLength(this.data.length, size)).fill(-1);
    next.set(this.data);
    this.data = next;
  }
}

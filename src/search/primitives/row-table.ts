import { Bitset, grownLength, trimmed, withRoom } from './bitset.js';
import { SnapshotRejected, type SnapshotReader, type SnapshotWriter } from './snapshot-io.js';
import { IdStore } from './id-store.js';

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

/**
 * The place of `hash` in a table of `capacity` places: (hash × capacity) / 2^32, which needs no
 * power-of-two capacity (Lemire's multiply-shift reduction), computed in two halves so that every
 * product is exact in a double.
 */
export function placeOf(hash: number, capacity: number): number {
  return Math.floor(((hash >>> 16) * capacity + Math.floor(((hash & 0xffff) * capacity) / 65536)) / 65536);
}

/**
 * Places for `entries` after a bulk load: filled to 70 %, so the next 5 % of rows arrive before a
 * growth. A power of two had left the videos' table at 48 % (4.2M places for 2M rows, 134 MB at 20M).
 */
const trimmedCapacity = (entries: number) => Math.max(16, Math.ceil(entries / 0.7));

export class RowTable {
  /** Slots in use (alive or dead). */
  size = 0;
  /** The row's id, by slot (the id tie-break of every order), outside the V8 heap. */
  readonly ids = new IdStore();
  readonly alive = new Bitset();
  aliveCount = 0;
  /** Bumped on every change: cached query results of an older version are stale. */
  version = 0;
  /** Open addressing: slot + 1, or 0 for an empty place. */
  #table = new Int32Array(16);
  /**
   * Once trimmed (or loaded), the table grows by an eighth past a million places: a doubling is
   * 100 MB more at 20M videos. A bulk load still doubles it, which re-hashes every key fewer times.
   */
  #trimmed = false;

  /**
   * A slot's key is its id, unless `keyOf` and `isKeyOf` say otherwise (creators: platform and id).
   * No hash is kept per slot (4 bytes a row, 128 MB at 10M creators and 20M videos): a probe
   * compares the key itself, and growing the table hashes each slot's key again.
   */
  constructor(
    private readonly keyOf: (slot: number) => string = (slot) => this.ids.get(slot),
    private readonly isKeyOf: (slot: number, key: string) => boolean = (slot, key) => this.ids.equals(slot, key),
  ) {}

  /** Places in the hash table (tests). */
  get places(): number {
    return this.#table.length;
  }

  slotOf(key: string): number {
    const table = this.#table;
    const capacity = table.length;
    for (let place = placeOf(hashOf(key), capacity); ; place = place + 1 === capacity ? 0 : place + 1) {
      const entry = table[place];
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
    if (tooFull(this.size, this.#table.length)) this.#rehash(this.#trimmed ? grownLength(this.#table.length, this.#table.length + 1) : this.#table.length * 2);
    else this.#place(slot, hashOf(key));
    return slot;
  }

  /** Drops the room past the slots in use (after a bulk load), the hash table's included. */
  trim(): void {
    this.ids.trim();
    this.alive.trim(this.size);
    const capacity = trimmedCapacity(this.size);
    if (capacity < this.#table.length) this.#rehash(capacity);
    this.#trimmed = true;
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
    // The hash table has room for the slots (a full one would make a probe for a missing key endless).
    if (this.ids.size !== size || tooFull(size, table.length) || table.length < 16) {
      throw new SnapshotRejected('a row table does not add up');
    }
    this.size = size;
    this.aliveCount = aliveCount;
    this.#table = table;
    this.#trimmed = true;
    this.version++;
  }

  /** Words of a bitset covering every slot. */
  get words(): number {
    return Math.max(1, Math.ceil(this.size / 32));
  }

  #place(slot: number, hash: number): void {
    const table = this.#table;
    const capacity = table.length;
    let place = placeOf(hash, capacity);
    while (table[place] !== 0) place = place + 1 === capacity ? 0 : place + 1;
    table[place] = slot + 1;
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
    this.data = withRoom(this.data, size, NaN);
  }
}

type Stored = Int16Array | Int32Array | Float64Array;

/** What stands for NULL in each form: the lowest whole number, or NaN. */
const nullOf = (data: Stored) => (data instanceof Int16Array ? -0x8000 : data instanceof Int32Array ? -0x80000000 : NaN);
const fits16 = (value: number) => Number.isInteger(value) && value > -0x8000 && value <= 0x7fff;
const fits32 = (value: number) => Number.isInteger(value) && value > -0x80000000 && value <= 0x7fffffff;

/** 2^32, the weight of the high byte of a 40-bit offset. */
const LOW = 4294967296;
/** Offsets of a 40-bit column: [0, 2^40 - 1); the last one stands for NULL. */
const SPAN = 2 ** 40 - 1;
const NULL_LOW = 0xffffffff;
const NULL_HIGH = 0xff;
/** The base of a column of instants (2000-01-01), unless its first value is 17 years before it. */
const INSTANTS_FROM = Date.UTC(2000, 0, 1);
/** The base of a whole-number column past an Int32: every value it held so far is above it. */
const WHOLE_BASE = -0x80000000;

/**
 * Whole milliseconds from `base`, in 5 bytes: a Uint32 and a Uint8 per slot. 2^40 ms is 34.8
 * years, so a column of instants from 2000 holds 2000 to late 2034 in 5 bytes where a double takes
 * 8 (90 MB less at 10M creators and 20M videos). Two reads a value.
 */
class Offsets40 {
  low: Uint32Array;
  high: Uint8Array;

  constructor(
    readonly base: number,
    length: number,
  ) {
    this.low = new Uint32Array(length).fill(NULL_LOW);
    this.high = new Uint8Array(length).fill(NULL_HIGH);
  }

  static fits(base: number, value: number): boolean {
    const offset = value - base;
    return Number.isInteger(value) && offset >= 0 && offset < SPAN;
  }

  get(slot: number): number {
    const high = this.high[slot];
    const low = this.low[slot];
    return high === NULL_HIGH && low === NULL_LOW ? NaN : high * LOW + low + this.base;
  }

  /** `value` fits (see fits) or is NaN. */
  set(slot: number, value: number): void {
    if (Number.isNaN(value)) {
      this.low[slot] = NULL_LOW;
      this.high[slot] = NULL_HIGH;
      return;
    }
    const offset = value - this.base;
    this.high[slot] = Math.floor(offset / LOW);
    this.low[slot] = offset % LOW;
  }

  get length(): number {
    return this.low.length;
  }

  ensure(size: number): void {
    this.low = withRoom(this.low, size, NULL_LOW);
    this.high = withRoom(this.high, size, NULL_HIGH);
  }

  trim(size: number): void {
    this.low = trimmed(this.low, size);
    this.high = trimmed(this.high, size);
  }
}

/**
 * A growable numeric column (NaN for NULL) in the narrowest form its values allow: 2 bytes a value
 * while every value is a whole number within an Int16 (rates in cents, monthly counts), 4 while
 * within an Int32 (counts, cents of most metrics), 5 (Offsets40 from -2^31) while whole numbers
 * below about 10^12, 8 otherwise; it widens, once, at the first value its form does not hold. A
 * column of instants (epoch milliseconds) starts in 5 bytes (from 2000-01-01, or 17 years before
 * its first value if that is earlier) and widens to 8 at the first value outside that span or not
 * whole. Exact in every form; at 10M rows a column in 2 bytes is 20 MB less than in 4.
 */
export class NumberColumn {
  /** The values as stored (the form's lowest whole number, or NaN, for NULL); unused while #offsets is set. */
  #data: Stored;
  #null: number;
  /** The values as 40-bit offsets (instants, or whole numbers past an Int32) until one does not fit; else null. */
  #offsets: Offsets40 | null = null;
  /** An instant column before its first value: its base is not chosen yet. */
  #awaitingBase: boolean;

  /** @param instants epoch milliseconds (5 bytes a value while they fit, else doubles) */
  constructor(instants = false) {
    this.#data = instants ? new Float64Array(1024) : new Int16Array(1024);
    this.#null = nullOf(this.#data);
    this.#data.fill(this.#null);
    this.#awaitingBase = instants;
  }

  /** Whether it holds whole numbers in 2 or 4 bytes (tests). */
  get narrow(): boolean {
    return this.#offsets === null && !(this.#data instanceof Float64Array);
  }

  /** Bytes a value (tests). */
  get bytesPerValue(): number {
    return this.#offsets !== null ? 5 : this.#data.BYTES_PER_ELEMENT;
  }

  /** The slot's value, NaN for NULL; the slot must be below the capacity `ensure` gave. */
  get(slot: number): number {
    if (this.#offsets !== null) return this.#offsets.get(slot);
    const value = this.#data[slot];
    // NaN never equals itself, so the wide form returns its NaN as it is.
    return value === this.#null ? NaN : value;
  }

  set(slot: number, value: number): void {
    this.ensure(slot + 1);
    if (this.#awaitingBase && !Number.isNaN(value)) {
      this.#awaitingBase = false;
      // From 2000, not centred on the first instant: a catalogue loaded newest first still holds
      // the platforms' first videos (2005) in 5 bytes. A first instant before 2000: 17 years before it.
      if (Number.isInteger(value)) this.#toOffsets(Math.min(value - 2 ** 39, INSTANTS_FROM));
    }
    if (this.#offsets !== null) {
      if (Number.isNaN(value) || Offsets40.fits(this.#offsets.base, value)) return this.#offsets.set(slot, value);
      this.#fromOffsets();
    }
    if (Number.isNaN(value)) value = this.#null;
    else if (this.#data instanceof Int16Array ? !fits16(value) : this.#data instanceof Int32Array && !fits32(value)) {
      this.#widen(value);
      if (this.#offsets !== null) return this.#offsets.set(slot, value);
    }
    this.#data[slot] = value;
  }

  ensure(size: number): void {
    if (this.#offsets !== null) this.#offsets.ensure(size);
    else this.#data = withRoom(this.#data, size, this.#null);
  }

  /** Slots with room for a value (get() reads below it). */
  get capacity(): number {
    return this.#offsets !== null ? this.#offsets.low.length : this.#data.length;
  }

  /** Drops the room past `size` slots (after a bulk load). */
  trim(size: number): void {
    if (this.#offsets !== null) this.#offsets.trim(size);
    else this.#data = trimmed(this.#data, size);
  }

  save(out: SnapshotWriter): void {
    const offsets = this.#offsets;
    out.value(offsets === null ? { awaitingBase: this.#awaitingBase } : { base: offsets.base });
    if (offsets === null) out.array(this.#data);
    else {
      out.array(offsets.low);
      out.array(offsets.high);
    }
  }

  /** In the form it was written. */
  load(input: SnapshotReader): void {
    const { base, awaitingBase } = input.value<{ base?: number; awaitingBase?: boolean }>();
    if (base !== undefined) {
      if (!Number.isSafeInteger(base)) throw new SnapshotRejected('a number column has no base');
      const low = input.array(Uint32Array);
      const high = input.array(Uint8Array);
      if (low.length !== high.length) throw new SnapshotRejected('a number column does not add up');
      this.#offsets = Object.assign(new Offsets40(base, 0), { low, high });
      this.#awaitingBase = false;
      return;
    }
    const data = input.anyArray();
    if (!(data instanceof Int16Array || data instanceof Int32Array || data instanceof Float64Array)) throw new SnapshotRejected('a number column is not Int16, Int32 or Float64');
    this.#data = data;
    this.#null = nullOf(data);
    this.#offsets = null;
    this.#awaitingBase = awaitingBase === true;
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

  /** Moves to the narrowest wider form that holds `value`. */
  #widen(value: number): void {
    // Whole numbers past an Int32 (cents of a large average): 5 bytes up to about 10^12.
    if (!fits32(value) && Offsets40.fits(WHOLE_BASE, value)) return this.#toOffsets(WHOLE_BASE);
    const wider = fits32(value) ? new Int32Array(this.#data.length) : new Float64Array(this.#data.length);
    const nullValue = nullOf(wider);
    for (let slot = 0; slot < wider.length; slot++) {
      const old = this.get(slot);
      wider[slot] = Number.isNaN(old) ? nullValue : old;
    }
    this.#data = wider;
    this.#null = nullValue;
  }

  /** Every value (all NULL or instants so far) as 40-bit offsets from `base`. */
  #toOffsets(base: number): void {
    const offsets = new Offsets40(base, this.#data.length);
    for (let slot = 0; slot < offsets.length; slot++) offsets.set(slot, this.get(slot));
    this.#offsets = offsets;
  }

  /** Every value back as a double: one did not fit the offsets. */
  #fromOffsets(): void {
    const offsets = this.#offsets!;
    const wide = new Float64Array(offsets.length);
    for (let slot = 0; slot < wide.length; slot++) wide[slot] = offsets.get(slot);
    this.#offsets = null;
    this.#data = wide;
    this.#null = NaN;
  }
}

/** A growable Int32Array (-1 for "none"). */
export class Int32Column {
  data = new Int32Array(1024).fill(-1);

  /** Drops the room past `size` slots (after a bulk load). */
  trim(size: number): void {
    this.data = trimmed(this.data, size);
  }

  save(out: SnapshotWriter): void {
    out.array(this.data);
  }

  load(input: SnapshotReader): void {
    this.data = input.array(Int32Array);
  }

  ensure(size: number): void {
    this.data = withRoom(this.data, size, -1);
  }
}

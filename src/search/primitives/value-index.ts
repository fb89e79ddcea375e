import { Bitset, grownLength, popcountAnd } from './bitset.js';
import { SnapshotRejected, type SnapshotReader, type SnapshotWriter } from './snapshot-io.js';

// A bitmap per distinct value of a low-cardinality column (platform, country, language, gender,
// a yes/no flag, a category): `country IN (…)` is the OR of a few bitmaps. A single-valued column
// also remembers each slot's value, as a small code per slot, to move the slot on update.

const NONE = 0;

export class ValueIndex<V extends string | number | boolean> {
  readonly #bitmaps: Bitset[] = [new Bitset()];
  readonly #codes = new Map<V, number>();
  readonly #values: V[] = [undefined as unknown as V];
  /** Single-valued columns: the code of each slot's value (0: none). */
  #codeOf: Uint8Array | Uint16Array | Uint32Array = new Uint8Array(1024);

  constructor(private readonly multi = false) {}

  /** The slot's value(s) become `values` (null or [] for none: the slot is in no bitmap). */
  set(slot: number, values: V | readonly V[] | null): void {
    const next = values === null ? [] : Array.isArray(values) ? (values as readonly V[]) : [values as V];
    if (this.multi) {
      // Few distinct values (categories): clearing the slot everywhere costs less than remembering.
      for (const bitmap of this.#bitmaps) bitmap.clear(slot);
    } else {
      this.#ensure(slot + 1);
      const previous = this.#codeOf[slot];
      if (previous !== NONE) this.#bitmaps[previous].clear(slot);
      this.#codeOf[slot] = next.length > 0 ? this.#codeFor(next[0]) : NONE;
    }
    for (const value of next) {
      const bitmap = this.#bitmaps[this.#codeFor(value)];
      bitmap.grow(slot + 1);
      bitmap.set(slot);
    }
  }

  /** The bitmaps of `values` (each once; none for a value no slot ever held). */
  bitmapsOf(values: readonly V[]): Uint32Array[] {
    const codes = new Set<number>();
    for (const value of values) {
      const code = this.#codes.get(value);
      if (code !== undefined) codes.add(code);
    }
    return [...codes].map((code) => this.#bitmaps[code].words);
  }

  /** The bitmap of one value, or null when no slot ever held it. */
  bitmap(value: V): Uint32Array | null {
    const code = this.#codes.get(value);
    return code === undefined ? null : this.#bitmaps[code].words;
  }

  /** Every value any slot ever held, with its bitmap (facets: one popcount each). */
  *entries(): Generator<[V, Uint32Array]> {
    for (let code = 1; code < this.#values.length; code++) yield [this.#values[code], this.#bitmaps[code].words];
  }

  /**
   * Each value's count among `matches` (`count` rows, in words [from, to)): by each match's code
   * when matches are few, else one AND-and-popcount per value. Multi-valued columns keep no code
   * per slot, so they always take the bitmaps.
   */
  countAmong(matches: Uint32Array, count: number, from: number, to: number): [V, number][] {
    const values = this.#values.length - 1;
    // A match costs a few nanoseconds read by code; a word a nanosecond or so per value.
    if (this.multi || count * 4 > values * (to - from)) {
      return [...this.entries()].map(([value, bitmap]): [V, number] => [value, popcountAnd(matches, bitmap, to, from)]);
    }
    const counts = new Float64Array(this.#values.length);
    const codeOf = this.#codeOf;
    for (let i = from; i < to; i++) {
      let word = matches[i];
      while (word !== 0) {
        const lowest = word & -word;
        // A slot never given a value may lie past the codes: it has none.
        counts[codeOf[(i << 5) + 31 - Math.clz32(lowest)] ?? NONE]++;
        word ^= lowest;
      }
    }
    return this.#values.slice(1).map((value, i): [V, number] => [value, counts[i + 1]]);
  }

  /** Drops the room past `size` slots (after a bulk load). */
  trim(size: number): void {
    for (const bitmap of this.#bitmaps) bitmap.trim(size);
    if (this.#codeOf.length > size) this.#codeOf = this.#codeOf.slice(0, Math.max(size, 1));
  }

  save(out: SnapshotWriter): void {
    out.value(this.#values.slice(1));
    for (const bitmap of this.#bitmaps) bitmap.save(out);
    out.array(this.#codeOf);
  }

  load(input: SnapshotReader): void {
    const values = input.value<V[]>();
    if (!Array.isArray(values)) throw new SnapshotRejected('a value index has no values');
    this.#values.length = 1;
    this.#bitmaps.length = 0;
    this.#codes.clear();
    for (const value of values) {
      this.#codes.set(value, this.#values.length);
      this.#values.push(value);
    }
    for (let code = 0; code < this.#values.length; code++) {
      const bitmap = new Bitset();
      bitmap.load(input);
      this.#bitmaps.push(bitmap);
    }
    const codeOf = input.anyArray();
    if (codeOf instanceof Int32Array || codeOf instanceof Float64Array) throw new SnapshotRejected('a value index has codes of a signed type');
    this.#codeOf = codeOf;
  }

  get distinctValues(): number {
    return this.#codes.size;
  }

  #codeFor(value: V): number {
    let code = this.#codes.get(value);
    if (code === undefined) {
      code = this.#values.length;
      this.#codes.set(value, code);
      this.#values.push(value);
      this.#bitmaps.push(new Bitset());
      // A byte per slot while the values are few (flags, genders, countries), wider past that.
      if (code > 0xff && this.#codeOf instanceof Uint8Array) this.#codeOf = Uint16Array.from(this.#codeOf);
      if (code > 0xffff && this.#codeOf instanceof Uint16Array) this.#codeOf = Uint32Array.from(this.#codeOf);
    }
    return code;
  }

  #ensure(size: number): void {
    if (size <= this.#codeOf.length) return;
    const length = grownLength(this.#codeOf.length, size);
    const grown =
      this.#codeOf instanceof Uint8Array ? new Uint8Array(length) : this.#codeOf instanceof Uint16Array ? new Uint16Array(length) : new Uint32Array(length);
    grown.set(this.#codeOf);
    this.#codeOf = grown;
  }
}

import { andAnyInto, Bitset, grownLength, popcount, popcountAndEach } from './bitset.js';
import { lowerBound } from './lower-bound.js';
import { SnapshotRejected, type SnapshotReader, type SnapshotWriter } from './snapshot-io.js';
import type { SlotCodes } from './sort-order.js';

// The rows of each distinct value of a low-cardinality column (platform, country, language,
// gender, a yes/no flag, a category): `country IN (…)` is the OR of a few values' rows. A value
// held by many rows keeps them as a bitmap (a bit per slot of the table); a value held by few, as
// a sorted list of slots (4 bytes a row): a category held by 1 % of 10M creators is 400 KB of
// list, not 1.25 MB of bitmap, and most categories, countries and languages are such. A single-
// valued column also remembers each slot's value, as a small code per slot, to move it on update;
// a multi-valued one its first MULTI_WIDTH codes per slot (a creator has about two categories),
// so a facet over few matches reads their codes instead of every value's rows.

const NONE = 0;
/** A list is as small as a bitmap at one row in 32: lists stay below that density, with room to move. */
const LIST_DENSITY = 32;
/** A list is never turned into a bitmap below this length (a small table's values stay lists). */
const LIST_MIN = 256;
/** Codes kept per slot of a multi-valued column; a slot's codes past these live in a map. */
const MULTI_WIDTH = 4;
/**
 * A match's codes read (~13 ns: a cache miss a match at random slots) against a row of a value's
 * list looked up (~1.5 ns, read in order): 2026-11-27, EPYC, 1M creators' 2M category rows, 3.0 ms
 * through the lists whatever the filter; by codes 0.7 ms for 20k matches, 1.3 for 70k, 5.5 for 400k.
 */
const MULTI_MATCH_COST = 9;
/**
 * A single-valued column's facet, in nanoseconds (2026-11-30, Xeon, 10M creators, countries and
 * genders over 80k-3M matches): a match's code read 3.5, and a cache miss of 15 for each line of
 * codes its matches touch (10 MB of codes outgrow the CPU's cache: gender over 169k matches took
 * 3.4 ms by codes, 0.9 through its three bitmaps); a bitmap word AND-ed and counted 1.3, copies
 * included; a list row looked up 2.5.
 */
const MATCH_NS = 3.5;
const LINE_MISS_NS = 15;
const BITMAP_WORD_NS = 1.3;
const LIST_ROW_NS = 2.5;

/** A value's rows while they are few: slots ascending in `slots[0 … length)`. */
class SlotList {
  constructor(
    public slots: Int32Array = new Int32Array(8),
    public length = 0,
  ) {}

  /** Where `slot` is, or would go. */
  #find(slot: number): number {
    return lowerBound(this.slots, slot, this.length);
  }

  add(slot: number): void {
    // A load gives slots in increasing order: an append.
    const at = this.length > 0 && this.slots[this.length - 1] < slot ? this.length : this.#find(slot);
    if (at < this.length && this.slots[at] === slot) return;
    if (this.length === this.slots.length) {
      const grown = new Int32Array(grownLength(this.slots.length, this.length + 1));
      grown.set(this.slots);
      this.slots = grown;
    }
    this.slots.copyWithin(at + 1, at, this.length);
    this.slots[at] = slot;
    this.length++;
  }

  remove(slot: number): void {
    const at = this.#find(slot);
    if (at >= this.length || this.slots[at] !== slot) return;
    this.slots.copyWithin(at, at + 1, this.length);
    this.length--;
  }

  /** out |= these slots, within words [from, to). */
  orInto(out: Uint32Array, from: number, to: number): void {
    const slots = this.slots;
    const last = to * 32;
    for (let i = from === 0 ? 0 : this.#find(from * 32); i < this.length; i++) {
      const slot = slots[i];
      if (slot >= last) break;
      out[slot >>> 5] |= 1 << (slot & 31);
    }
  }

  /** How many of these slots are set in `bits`, within words [from, to). */
  countIn(bits: Uint32Array, from: number, to: number): number {
    const slots = this.slots;
    const last = to * 32;
    let count = 0;
    for (let i = from === 0 ? 0 : this.#find(from * 32); i < this.length; i++) {
      const slot = slots[i];
      if (slot >= last) break;
      count += (bits[slot >>> 5] >>> (slot & 31)) & 1;
    }
    return count;
  }

  toBitset(): Bitset {
    const bitset = new Bitset(this.length > 0 ? this.slots[this.length - 1] + 1 : 0);
    for (let i = 0; i < this.length; i++) bitset.set(this.slots[i]);
    return bitset;
  }

  static of(bitset: Bitset, count: number): SlotList {
    const slots = new Int32Array(Math.max(count, 1));
    let n = 0;
    const words = bitset.words;
    for (let i = 0; i < words.length; i++) {
      let word = words[i];
      while (word !== 0) {
        const lowest = word & -word;
        slots[n++] = (i << 5) + 31 - Math.clz32(lowest);
        word ^= lowest;
      }
    }
    return new SlotList(slots, n);
  }
}

type Members = Bitset | SlotList;

export class ValueIndex<V extends string | number | boolean> {
  readonly #members: Members[] = [new SlotList()];
  readonly #codes = new Map<V, number>();
  readonly #values: V[] = [undefined as unknown as V];
  /**
   * Single-valued columns: the code of each slot's value (0: none). Multi-valued: MULTI_WIDTH codes
   * a slot, at slot * MULTI_WIDTH, ascending, 0 after the last; the rest in #moreCodes.
   */
  #codeOf: SlotCodes = new Uint8Array(1024);
  /** A multi-valued slot's codes past its first MULTI_WIDTH. */
  readonly #moreCodes = new Map<number, number[]>();
  /** One past the highest slot ever given a value: what a list's density is measured against. */
  #slots = 0;

  constructor(private readonly multi = false) {}

  /** The slot's value(s) become `values` (null or [] for none: the slot is in no value's rows). */
  set(slot: number, values: V | readonly V[] | null): void {
    const next = values === null ? [] : Array.isArray(values) ? (values as readonly V[]) : [values as V];
    // A slot past every slot given a value so far (each row of a load) is in no value's rows yet.
    const fresh = slot >= this.#slots;
    if (fresh) this.#slots = slot + 1;
    if (this.multi) {
      if (!fresh) for (const code of this.#codesAt(slot)) this.#remove(code, slot);
      const codes: number[] = [];
      for (const value of next) {
        const code = this.#codeFor(value);
        if (!codes.includes(code)) codes.push(code);
      }
      if (codes.length > 1) codes.sort((a, b) => a - b);
      this.#setCodesAt(slot, codes);
      for (const code of codes) this.#add(code, slot);
      return;
    }
    this.#ensure(slot + 1);
    const previous = this.#codeOf[slot];
    if (previous !== NONE) this.#remove(previous, slot);
    this.#codeOf[slot] = next.length > 0 ? this.#codeFor(next[0]) : NONE;
    for (const value of next) this.#add(this.#codeFor(value), slot);
  }

  /** A multi-valued slot's codes. */
  #codesAt(slot: number): number[] {
    const codes: number[] = [];
    const base = slot * MULTI_WIDTH;
    for (let j = 0; j < MULTI_WIDTH && base + j < this.#codeOf.length; j++) {
      const code = this.#codeOf[base + j];
      if (code === NONE) break;
      codes.push(code);
    }
    const more = this.#moreCodes.get(slot);
    return more ? codes.concat(more) : codes;
  }

  #setCodesAt(slot: number, codes: readonly number[]): void {
    const base = slot * MULTI_WIDTH;
    this.#ensure(base + MULTI_WIDTH);
    for (let j = 0; j < MULTI_WIDTH; j++) this.#codeOf[base + j] = j < codes.length ? codes[j] : NONE;
    if (codes.length > MULTI_WIDTH) this.#moreCodes.set(slot, codes.slice(MULTI_WIDTH));
    else if (this.#moreCodes.size > 0) this.#moreCodes.delete(slot);
  }

  /** A multi-valued column's codes per slot, from the values' rows (after a snapshot's load). */
  #codesFromMembers(): void {
    this.#codeOf = this.#values.length - 1 > 0xffff ? new Uint32Array(0) : this.#values.length - 1 > 0xff ? new Uint16Array(0) : new Uint8Array(0);
    this.#ensure(this.#slots * MULTI_WIDTH);
    this.#moreCodes.clear();
    const codeOf = this.#codeOf;
    // Codes held so far per slot (past MULTI_WIDTH: in #moreCodes); codes ascending, as set() keeps them.
    const held = new Uint8Array(this.#slots);
    const place = (code: number, slot: number) => {
      const n = held[slot];
      if (n < MULTI_WIDTH) {
        codeOf[slot * MULTI_WIDTH + n] = code;
        held[slot] = n + 1;
      } else {
        const more = this.#moreCodes.get(slot);
        if (more) more.push(code);
        else this.#moreCodes.set(slot, [code]);
      }
    };
    for (let code = 1; code < this.#members.length; code++) {
      const members = this.#members[code];
      if (members instanceof SlotList) {
        const slots = members.slots;
        for (let i = 0; i < members.length; i++) place(code, slots[i]);
        continue;
      }
      const words = members.words;
      for (let w = 0; w < words.length; w++) {
        let word = words[w];
        while (word !== 0) {
          const lowest = word & -word;
          place(code, (w << 5) + 31 - Math.clz32(lowest));
          word ^= lowest;
        }
      }
    }
  }

  /** A single-valued column's value at the slot, null for none. */
  valueOf(slot: number): V | null {
    if (this.multi) throw new Error('a multi-valued column has no one value per slot');
    const code = slot < this.#codeOf.length ? this.#codeOf[slot] : NONE;
    return code === NONE ? null : this.#values[code];
  }

  #add(code: number, slot: number): void {
    const members = this.#members[code];
    if (members instanceof Bitset) {
      members.grow(slot + 1);
      members.set(slot);
      return;
    }
    members.add(slot);
    // Past the density where a bitmap is smaller: a bitmap from now on.
    if (members.length > LIST_MIN && members.length * LIST_DENSITY > this.#slots) this.#members[code] = members.toBitset();
  }

  #remove(code: number, slot: number): void {
    const members = this.#members[code];
    if (members instanceof Bitset) members.clear(slot);
    else members.remove(slot);
  }

  /**
   * rows = rows AND (the rows of any of `values`), over words [from, to); `scratch` (as long as
   * `rows`) is written. A value no slot ever held matches no row.
   */
  selectInto(rows: Uint32Array, values: readonly V[], scratch: Uint32Array, from: number, to: number): void {
    const codes = new Set<number>();
    for (const value of values) {
      const code = this.#codes.get(value);
      if (code !== undefined) codes.add(code);
    }
    // The values' bitmaps, and their lists' rows gathered into `scratch`, AND-ed in one pass.
    const sources: Uint32Array[] = [];
    const lists: SlotList[] = [];
    for (const code of codes) {
      const members = this.#members[code];
      if (members instanceof Bitset) sources.push(members.words);
      else lists.push(members);
    }
    if (lists.length > 0) {
      scratch.fill(0, from, to);
      for (const list of lists) list.orInto(scratch, from, to);
      sources.push(scratch);
    }
    andAnyInto(rows, sources, to, from);
  }

  /** Whether a slot holds any of `values`, by its code (single-valued columns only). */
  holdsAny(values: readonly V[]): (slot: number) => boolean {
    const wanted = this.wantedCodes(values);
    const codeOf = this.#codeOf;
    // A slot past the codes was never given a value: it has none.
    return (slot) => wanted[codeOf[slot] ?? NONE] === 1;
  }

  /** 1 at the code of each of `values`, 0 elsewhere, over every code (single-valued columns only). */
  wantedCodes(values: readonly V[]): Uint8Array {
    if (this.multi) throw new Error('a multi-valued column keeps no code per slot');
    const wanted = new Uint8Array(this.#values.length);
    for (const value of values) {
      const code = this.#codes.get(value);
      if (code !== undefined) wanted[code] = 1;
    }
    return wanted;
  }

  /** A single-valued column's code per slot (0: none) and how many codes there are, as of now: a set may replace them. */
  get slotCodes(): { codeOf: SlotCodes; codes: number } {
    if (this.multi) throw new Error('a multi-valued column keeps no code per slot');
    return { codeOf: this.#codeOf, codes: this.#values.length };
  }

  /** The rows of one value as a bitmap of `words` words (a new one for a value kept as a list), or null when no slot ever held it. */
  bitmap(value: V, words: number): Uint32Array | null {
    const code = this.#codes.get(value);
    if (code === undefined) return null;
    const members = this.#members[code];
    if (members instanceof Bitset) return members.words;
    const bits = new Uint32Array(words);
    members.orInto(bits, 0, words);
    return bits;
  }

  /**
   * Each value's count among `matches` (`count` rows, in words [from, to)): by each match's code
   * when matches are few, else one AND-and-popcount per value held as a bitmap and a look-up per
   * row of a value held as a list. A multi-valued column weighs its matches' codes against every
   * row of its lists (its values' rows add up to more than the table's). `among`: the only values
   * a match can hold (a single-valued column the filter restricts to them); the rest count 0.
   */
  countAmong(matches: Uint32Array, count: number, from: number, to: number, among?: readonly V[]): [V, number][] {
    // Each code once: a filter may name a value twice (`[15, 15]`, `["us", "US"]`).
    const codes = among === undefined || this.multi ? null : [...new Set(among.flatMap((value) => this.#codes.get(value) ?? []))];
    // A match costs a few nanoseconds read by code, and a cache miss where it is the first of its
    // line of codes (64 bytes: two words' slots of byte codes).
    const byMembers = this.multi
      ? count * MULTI_MATCH_COST > this.#membersWork(to - from)
      : count * MATCH_NS + Math.min(count, ((to - from) * 2) / this.#codeOf.BYTES_PER_ELEMENT) * LINE_MISS_NS > this.#membersNs(to - from, codes);
    if (byMembers) {
      const counted = codes ?? this.#values.map((_, code) => code).slice(1);
      const bitmaps = counted.flatMap((code) => {
        const members = this.#members[code];
        return members instanceof Bitset ? [members.words] : [];
      });
      const bitmapCounts = popcountAndEach(matches, bitmaps, to, from);
      let next = 0;
      return counted.map((code): [V, number] => {
        const members = this.#members[code];
        return [this.#values[code], members instanceof Bitset ? bitmapCounts[next++] : members.countIn(matches, from, to)];
      });
    }
    const counts = new Float64Array(this.#values.length);
    const codeOf = this.#codeOf;
    if (this.multi) {
      const more = this.#moreCodes.size > 0 ? this.#moreCodes : null;
      for (let i = from; i < to; i++) {
        let word = matches[i];
        while (word !== 0) {
          const lowest = word & -word;
          const slot = (i << 5) + 31 - Math.clz32(lowest);
          word ^= lowest;
          // Codes ascending, 0 after the last; a slot past the codes has none.
          for (let at = slot * MULTI_WIDTH, end = at + MULTI_WIDTH; at < end; at++) {
            const code = codeOf[at] ?? NONE;
            if (code === NONE) break;
            counts[code]++;
          }
          const rest = more?.get(slot);
          if (rest) for (const code of rest) counts[code]++;
        }
      }
      return this.#values.slice(1).map((value, i): [V, number] => [value, counts[i + 1]]);
    }
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

  /** What counting a single-valued column's values (`codes`, else every one) through their rows costs, in nanoseconds. */
  #membersNs(words: number, codes: readonly number[] | null): number {
    let ns = 0;
    for (const code of codes ?? this.#members.keys()) {
      const members = this.#members[code];
      if (code !== NONE && members) ns += members instanceof Bitset ? Math.min(words, members.words.length) * BITMAP_WORD_NS : members.length * LIST_ROW_NS;
    }
    return ns;
  }

  /** What counting through the values' rows reads, in list rows (a bitmap word costs about one). */
  #membersWork(words: number): number {
    let work = 0;
    for (let code = 1; code < this.#members.length; code++) {
      const members = this.#members[code];
      work += members instanceof Bitset ? Math.min(words, members.words.length) : members.length;
    }
    return work;
  }

  /** Drops the room past `size` slots (after a bulk load), and keeps each value in its smaller form. */
  trim(size: number): void {
    this.#slots = Math.max(this.#slots, size);
    for (let code = 1; code < this.#members.length; code++) {
      const members = this.#members[code];
      if (members instanceof Bitset) {
        const rows = popcount(members.words);
        if (rows * LIST_DENSITY * 2 < size || rows <= LIST_MIN) this.#members[code] = SlotList.of(members, rows);
        else members.trim(size);
      } else if (members.slots.length > members.length) {
        members.slots = members.slots.slice(0, Math.max(members.length, 1));
      }
    }
    const codes = this.multi ? size * MULTI_WIDTH : size;
    if (this.#codeOf.length > codes) this.#codeOf = this.#codeOf.slice(0, Math.max(codes, 1));
  }

  save(out: SnapshotWriter): void {
    out.value({ values: this.#values.slice(1), slots: this.#slots, lists: this.#members.map((members) => members instanceof SlotList) });
    for (const members of this.#members) {
      if (members instanceof Bitset) members.save(out);
      else out.array(members.slots, members.length);
    }
    // A multi-valued column's codes are the lists read the other way: made again on load.
    out.array(this.multi ? new Uint8Array(0) : this.#codeOf);
  }

  load(input: SnapshotReader): void {
    const { values, slots, lists } = input.value<{ values: V[]; slots: number; lists: boolean[] }>();
    if (!Array.isArray(values) || !Array.isArray(lists) || lists.length !== values.length + 1 || !Number.isSafeInteger(slots)) {
      throw new SnapshotRejected('a value index does not add up');
    }
    this.#values.length = 1;
    this.#members.length = 0;
    this.#codes.clear();
    this.#slots = slots;
    for (const value of values) {
      this.#codes.set(value, this.#values.length);
      this.#values.push(value);
    }
    for (const list of lists) {
      if (list) {
        const slotList = input.array(Int32Array);
        this.#members.push(new SlotList(slotList, slotList.length));
      } else {
        const bitmap = new Bitset();
        bitmap.load(input);
        this.#members.push(bitmap);
      }
    }
    const codeOf = input.anyArray();
    if (codeOf instanceof Int32Array || codeOf instanceof Float64Array || codeOf instanceof Int16Array) throw new SnapshotRejected('a value index has codes of a signed type');
    this.#codeOf = codeOf;
    if (this.multi) this.#codesFromMembers();
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
      this.#members.push(new SlotList());
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

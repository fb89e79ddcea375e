import { combineBits, countBits, countBitsOfBoth, countBitsOfEach, listBits } from './word-kernel.js';
import type { SnapshotReader, SnapshotWriter } from './snapshot-io.js';

// Dense bitsets over row slots: one bit per row, 32 rows a word. At a million rows a bitset is
// 125 KB and AND, OR and popcount take about a tenth of a millisecond, which is what makes exact
// totals cheap: a filter is a few word-wise operations, its total one popcount.

/**
 * The length to grow a per-row array of `length` to, for at least `needed`: doubling while small,
 * an eighth more once past a million (a 20M-row column doubled for one new row would hold 20M
 * rows' worth of nothing). Amortised, still a constant number of copies per row.
 */
export function grownLength(length: number, needed: number): number {
  return Math.max(needed, length < 1 << 20 ? length * 2 : length + (length >>> 3));
}

type PerSlot = Uint8Array | Uint16Array | Int16Array | Uint32Array | Int32Array | Float64Array;

/** `array` itself when it holds `size` elements, else a copy grown by grownLength whose new elements are `fill`. */
export function withRoom<T extends PerSlot>(array: T, size: number, fill = 0): T {
  if (size <= array.length) return array;
  const next = new (array.constructor as new (length: number) => T)(grownLength(array.length, size));
  if (fill !== 0) next.fill(fill, array.length);
  next.set(array);
  return next;
}

/** `array` cut to `size` elements (at least one): the growth room dropped after a bulk load. */
export function trimmed<T extends PerSlot>(array: T, size: number): T {
  return array.length > size ? (array.slice(0, Math.max(size, 1)) as T) : array;
}

export class Bitset {
  words: Uint32Array;

  constructor(capacity = 0) {
    this.words = new Uint32Array(Math.max(1, Math.ceil(capacity / 32)));
  }

  /** Room for `capacity` bits (never shrinks); new bits are 0. */
  grow(capacity: number): void {
    const needed = Math.ceil(capacity / 32);
    if (needed <= this.words.length) return;
    const next = new Uint32Array(grownLength(this.words.length, needed));
    next.set(this.words);
    this.words = next;
  }

  has(bit: number): boolean {
    return (this.words[bit >>> 5] & (1 << (bit & 31))) !== 0;
  }

  set(bit: number): void {
    this.words[bit >>> 5] |= 1 << (bit & 31);
  }

  clear(bit: number): void {
    this.words[bit >>> 5] &= ~(1 << (bit & 31));
  }

  assign(bit: number, on: boolean): void {
    if (on) this.set(bit);
    else this.clear(bit);
  }

  /** Drops the room past `capacity` bits (after a bulk load). */
  trim(capacity: number): void {
    const words = Math.max(1, Math.ceil(capacity / 32));
    if (this.words.length > words) this.words = this.words.slice(0, words);
  }

  save(out: SnapshotWriter): void {
    out.array(this.words);
  }

  load(input: SnapshotReader): void {
    this.words = input.array(Uint32Array);
  }
}

/**
 * Free bitsets a pool keeps, in bytes: all 16 of a million rows (125 KB each), 6 of 20 million
 * videos (2.5 MB each). A search holds two to five at once; sixteen bitsets of 20M rows were 40 MB.
 */
const POOL_BYTES = 16 << 20;

/** A free bitset and the words outside which it is known to hold no bit. */
interface FreeBitset {
  bits: Uint32Array;
  dirty: WordWindow;
}

/**
 * A scratch bitset of `words` words, all 0 (from a small pool: queries allocate nothing per call).
 * A bitset given back with its window (a date range's match) is cleared only within that window
 * when taken again: at 20M videos, clearing a whole bitset is 2.5 MB of writes for a few per cent.
 */
export class BitsetPool {
  readonly #free: FreeBitset[] = [];
  #freeBytes = 0;

  /**
   * @param kept free bitsets kept for reuse at most
   * @param keptBytes and their bytes at most
   */
  constructor(
    private readonly kept = 16,
    private readonly keptBytes = POOL_BYTES,
  ) {}

  take(words: number): Uint32Array {
    const free = this.#reuse(words);
    return free ? free.bits.fill(0, free.dirty.from, free.dirty.to) : new Uint32Array(words);
  }

  /**
   * A bitset of `words` words holding whatever its last user left: for a caller that writes every
   * word before it reads one (a copy, a condition's first pass). At 20M videos a bitset is 2.5 MB,
   * and clearing one took a filtered video search about a fifth of a millisecond.
   */
  takeUncleared(words: number): Uint32Array {
    return this.takeDirty(words).bits;
  }

  /** As takeUncleared, with the words [from, to) outside which the bitset holds no bit (clear those alone). */
  takeDirty(words: number): FreeBitset {
    return this.#reuse(words) ?? { bits: new Uint32Array(words), dirty: { from: 0, to: 0 } };
  }

  #reuse(words: number): FreeBitset | null {
    const index = this.#free.findIndex((candidate) => candidate.bits.length === words);
    if (index === -1) return null;
    const taken = this.#free.splice(index, 1)[0];
    this.#freeBytes -= taken.bits.byteLength;
    return taken;
  }

  /** Bitsets back, any of their words possibly set. */
  give(...bitsets: Uint32Array[]): void {
    for (const bits of bitsets) this.giveWithin(bits, { from: 0, to: bits.length });
  }

  /** A bitset back that holds no bit outside words `dirty` (a match and its window). */
  giveWithin(bits: Uint32Array, dirty: WordWindow): void {
    if (this.#free.length >= this.kept || this.#freeBytes + bits.byteLength > this.keptBytes) return;
    this.#free.push({ bits, dirty });
    this.#freeBytes += bits.byteLength;
  }

  /** Bytes of the free bitsets kept (tests). */
  get bytesKept(): number {
    return this.#freeBytes;
  }
}

/** Words [from, to) of a bitset: outside them it holds no row. */
export interface WordWindow {
  from: number;
  to: number;
}

// The word-wise operations take an optional window [from, to) of words: a search narrowed to the
// slots of a date range (src/search/tables/matcher.ts) leaves every word outside it alone.

/** The bits set in one word. */
export function bitCount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * Below this many words a count or an operation runs in JavaScript: the kernel's call and copies
 * cost about as much as a few hundred words done here. Over more, the kernel (word-kernel.ts).
 */
const KERNEL_WORDS = 256;

export function popcount(words: Uint32Array, to = words.length, from = 0): number {
  if (to - from >= KERNEL_WORDS) return countBits(words, from, to);
  let total = 0;
  for (let i = from; i < to; i++) {
    let v = words[i];
    v = v - ((v >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    total += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return total;
}

/** The number of bits set in both `a` and `b` over words [from, to) (a facet value's count). */
// No test for an empty AND, as popcount has none: over a broad filter a facet value's AND is
// empty about half the time, a branch mispredicted; without it country counts took half as long.
export function popcountAnd(a: Uint32Array, b: Uint32Array, to = a.length, from = 0): number {
  const n = Math.min(to, b.length);
  if (n - from >= KERNEL_WORDS) return countBitsOfBoth(a, b, from, n);
  let total = 0;
  for (let i = from; i < n; i++) {
    let v = a[i] & b[i];
    v = v - ((v >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    total += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return total;
}

/** popcountAnd of `a` with each of `others` (a facet's values): over many words `a` is read once for all. */
export function popcountAndEach(a: Uint32Array, others: readonly Uint32Array[], to = a.length, from = 0): number[] {
  if (to - from >= KERNEL_WORDS) return countBitsOfEach(a, others, from, to);
  return others.map((b) => popcountAnd(a, b, to, from));
}

/** The words [from, to) outside which `words` is all 0 (from = to: none set). */
export function setWords(words: Uint32Array, length = words.length): WordWindow {
  let from = 0;
  while (from < length && words[from] === 0) from++;
  let to = length;
  while (to > from && words[to - 1] === 0) to--;
  return { from, to };
}

/** Sets bits [from, to) of `words`. */
export function setRange(words: Uint32Array, from: number, to: number): void {
  if (from >= to) return;
  const first = from >>> 5;
  const last = (to - 1) >>> 5;
  const head = -1 << (from & 31);
  const tail = -1 >>> (31 - ((to - 1) & 31));
  if (first === last) {
    words[first] |= head & tail;
    return;
  }
  words[first] |= head;
  words.fill(0xffffffff, first + 1, last);
  words[last] |= tail;
}

/** out = out AND other, over words [from, to). */
export function andInto(out: Uint32Array, other: Uint32Array, to = out.length, from = 0): void {
  if (to - from >= KERNEL_WORDS) return combineBits('and', out, [other], from, to);
  const n = Math.min(to, other.length);
  for (let i = from; i < n; i++) out[i] &= other[i];
  for (let i = Math.max(from, n); i < to; i++) out[i] = 0;
}

/** out = out AND (any of `sources`), in one pass over words [from, to); words with no row left are skipped. */
export function andAnyInto(out: Uint32Array, sources: readonly Uint32Array[], to = out.length, from = 0): void {
  if (sources.length === 0) {
    out.fill(0, from, to);
    return;
  }
  if (sources.length === 1) return andInto(out, sources[0], to, from);
  if (to - from >= KERNEL_WORDS) return combineBits('and', out, sources, from, to);
  if (sources.length === 2 && sources[0].length >= to && sources[1].length >= to) {
    const [a, b] = sources;
    for (let i = from; i < to; i++) out[i] &= a[i] | b[i];
    return;
  }
  for (let i = from; i < to; i++) {
    const word = out[i];
    if (word === 0) continue;
    let any = 0;
    for (let k = 0; k < sources.length; k++) {
      const source = sources[k];
      if (i < source.length) any |= source[i];
    }
    out[i] = word & any;
  }
}

/** out = out AND NOT other. */
export function andNotInto(out: Uint32Array, other: Uint32Array, length = out.length): void {
  if (length >= KERNEL_WORDS) return combineBits('andNot', out, [other], 0, length);
  const n = Math.min(length, other.length);
  for (let i = 0; i < n; i++) out[i] &= ~other[i];
}

/** out = out OR other, over words [from, to). */
export function orInto(out: Uint32Array, other: Uint32Array, to = out.length, from = 0): void {
  if (to - from >= KERNEL_WORDS) return combineBits('or', out, [other], from, to);
  const n = Math.min(to, other.length);
  for (let i = from; i < n; i++) out[i] |= other[i];
}

export function copyInto(out: Uint32Array, source: Uint32Array, length = out.length): void {
  const n = Math.min(length, source.length);
  out.set(source.subarray(0, n));
  out.fill(0, n, length);
}

/** Calls `visit` with every set bit of words [from, length) in increasing order; stops early when it returns false. */
export function forEachBit(words: Uint32Array, visit: (bit: number) => boolean | void, length = words.length, from = 0): void {
  for (let i = from; i < length; i++) {
    let word = words[i];
    while (word !== 0) {
      const lowest = word & -word;
      if (visit((i << 5) + 31 - Math.clz32(lowest)) === false) return;
      word ^= lowest;
    }
  }
}

/**
 * The set bits, ascending, given how many there are: over a wide bitset the kernel lists the
 * blocks holding any, so a sparse one's empty words cost a fraction of a JavaScript pass.
 */
export function setBitList(words: Uint32Array, count: number, { from, to }: WordWindow = { from: 0, to: words.length }): Uint32Array {
  const slots = new Uint32Array(count);
  if (to - from >= KERNEL_WORDS) listBits(words, slots, from, to);
  else {
    let n = 0;
    forEachBit(words, (bit) => void (slots[n++] = bit), to, from);
  }
  return slots;
}

/** The set bits as an array (for small sets). */
export function bitsOf(words: Uint32Array, length = words.length): number[] {
  const bits: number[] = [];
  forEachBit(words, (bit) => void bits.push(bit), length);
  return bits;
}

import { WORD_KERNEL_WASM } from './word-kernel-wasm.js';

// The search index's word-wise passes run in WebAssembly SIMD (word-kernel.wat), four words at a
// time. The range index's passes: 2.7-4.3 ns a word, copies included, where the same loop in
// JavaScript took 12-16 (10M rows, 6 bits a code, 2026-11-29; docs/performance.md). bitset.ts's
// counts and AND / OR / AND NOT over long spans: 0.7-2.1 ns a word against 2-12 (a Xeon, twice the
// EPYC's time a word); a sparse bitset's rows, listed from the blocks the kernel finds set. The
// kernel reads only its own memory, so a pass copies its operands in (and its result out) a chunk
// at a time, small enough to stay in the CPU's cache; a range index's slices, the largest operand,
// live in a kernel's memory of their own (SlicedCodes) and are read in place. Counts and bitset
// operations share one kernel per thread.

/** Blocks of four words per chunk: 8,192 words, whose rows, edges and marks stay in the CPU's cache. */
export const CHUNK_BLOCKS = 2048;
const CHUNK_WORDS = CHUNK_BLOCKS * 4;
/** Bits of a code at most: 255 buckets (RangeIndex keeps to it; a snapshot with more is refused). */
export const MAX_BITS = 8;

interface Exports {
  listed: WebAssembly.Global;
  equal: WebAssembly.Global;
  select(
    bits: number, from: number, to: number, lowCode: number, highCode: number, testLow: number, testHigh: number,
    slices: number, rows: number, lows: number, highs: number, marks: number, list: number,
  ): void;
  atLeast(bits: number, from: number, to: number, code: number, includeEqual: number, slices: number, matches: number, equals: number, list: number): number;
  atLeastEach(bits: number, from: number, to: number, codes: number, k: number, slices: number, matches: number, counts: number): void;
  within(bits: number, from: number, to: number, code: number, atMost: number, slices: number, matches: number, out: number, list: number): number;
  popcountAnd(a: number, b: number, blocks: number): number;
  and(a: number, b: number, blocks: number): void;
  or(a: number, b: number, blocks: number): void;
  andNot(a: number, b: number, blocks: number): void;
  setBlocks(a: number, blocks: number, list: number): number;
}

/** How a bitset operation combines a word of its target with its sources' (OR-ed, for `and`). */
export type Combination = 'and' | 'or' | 'andNot';

const PAGE = 65536;
// The kernel's memory (byte offsets): a chunk's rows, edges, marks and listed blocks; the counts'
// and bitset operations' own chunks, so a pass's edge callback may use them without losing its
// chunk; then, in a range index's kernel, its slices, grown as it grows.
const ROWS = 0;
const LOWS = ROWS + CHUNK_WORDS * 4;
const HIGHS = LOWS + CHUNK_WORDS * 4;
const MARKS = HIGHS + CHUNK_WORDS * 4;
const LIST = MARKS + CHUNK_WORDS * 4;
const WORK_A = LIST + CHUNK_BLOCKS * 4;
const WORK_B = WORK_A + CHUNK_WORDS * 4;
const WORK_C = WORK_B + CHUNK_WORDS * 4;
/** Codes atLeastEach compares at once, at most: a histogram's edges (src/inputs/facets.ts: 50). */
export const MAX_EACH = 64;
// atLeastEach's codes, and its counts: per code two vectors of four lanes (above, equal).
const EACH_CODES = WORK_C + CHUNK_WORDS * 4;
const EACH_COUNTS = EACH_CODES + MAX_EACH * 4;
const SLICES = Math.ceil((EACH_COUNTS + MAX_EACH * 32) / PAGE) * PAGE;

let compiled: WebAssembly.Module | null = null;

/** What a chunk's pass leaves for the caller to finish: its edge words, in blocks listed by the kernel. */
export interface Chunk {
  /** The chunk's first word (a multiple of 4): word `start + i` is at `i` in lows and highs. */
  start: number;
  /** Blocks (of four words, from `start`) holding an edge row: `list[0 … listed)`. */
  list: Uint32Array;
  listed: number;
  /** select: the rows equal to the low and high edge codes; atLeast: `lows`, those equal to its code. */
  lows: Uint32Array;
  highs: Uint32Array;
}

class Kernel {
  readonly #memory = new WebAssembly.Memory({ initial: SLICES / PAGE });
  readonly #exports: Exports;
  #words!: Uint32Array;
  #chunk!: Chunk;

  constructor() {
    compiled ??= new WebAssembly.Module(Buffer.from(WORD_KERNEL_WASM, 'base64'));
    this.#exports = new WebAssembly.Instance(compiled, { env: { memory: this.#memory } }).exports as unknown as Exports;
    this.#views();
  }

  /** The views of the memory: made again whenever it grows, which detaches the old ones. */
  #views(): void {
    const buffer = this.#memory.buffer;
    this.#words = new Uint32Array(buffer);
    const view = (bytes: number, words: number) => new Uint32Array(buffer, bytes, words);
    this.#chunk = { start: 0, listed: 0, list: view(LIST, CHUNK_BLOCKS), lows: view(LOWS, CHUNK_WORDS), highs: view(HIGHS, CHUNK_WORDS) };
  }

  /** Room for `words` words of slices; a growth adds an eighth at least, and keeps every word in place. */
  reserve(words: number): void {
    const bytes = this.#memory.buffer.byteLength;
    const needed = SLICES + words * 4;
    if (needed <= bytes) return;
    this.#memory.grow(Math.max(Math.ceil((needed - bytes) / PAGE), Math.ceil(bytes / 8 / PAGE)));
    this.#views();
  }

  /** Words [0, words) of the slices (valid until the memory grows). */
  slices(words: number): Uint32Array {
    return new Uint32Array(this.#memory.buffer, SLICES, words);
  }

  /**
   * Words [from, to) of `source` (none past its end) into a region that holds words [start,
   * start + blocks * 4), every other word of it 0.
   */
  #load(region: number, source: Uint32Array, start: number, from: number, to: number, blocks: number): void {
    const at = region >>> 2;
    const end = Math.max(from, Math.min(to, source.length));
    this.#words.fill(0, at, at + (from - start));
    this.#words.set(source.subarray(from, end), at + (from - start));
    this.#words.fill(0, at + (end - start), at + blocks * 4);
  }

  /** Calls `pass` for each chunk of words [from, to), with `rows` (and `marks`) copied in and where its slices are. */
  #chunks(bits: number, rows: Uint32Array, from: number, to: number, marks: Uint32Array | null, pass: (start: number, first: number, last: number, blocks: number, slices: number) => void): void {
    for (let start = from & ~3; start < to; start += CHUNK_WORDS) {
      const first = Math.max(from, start);
      const last = Math.min(to, start + CHUNK_WORDS);
      const blocks = (last - start + 3) >>> 2;
      this.#load(ROWS, rows, start, first, last, blocks);
      if (marks !== null) this.#load(MARKS, marks, start, first, last, blocks);
      pass(start, first, last, blocks, SLICES + (start >>> 2) * bits * 16);
    }
  }

  select(
    bits: number, rows: Uint32Array, from: number, to: number, lowCode: number, highCode: number,
    testLow: boolean, testHigh: boolean, marks: Uint32Array | null, edges: (chunk: Chunk) => void,
  ): void {
    this.#chunks(bits, rows, from, to, marks, (start, first, last, blocks, slices) => {
      this.#exports.select(bits, 0, blocks, lowCode, highCode, testLow ? -1 : 0, testHigh ? -1 : 0, slices, ROWS, LOWS, HIGHS, marks === null ? 0 : MARKS, LIST);
      rows.set(this.#words.subarray((ROWS >>> 2) + (first - start), (ROWS >>> 2) + (last - start)), first);
      this.#finish(start, edges);
    });
  }

  atLeast(bits: number, matches: Uint32Array, from: number, to: number, code: number, includeEqual: boolean, equals?: (chunk: Chunk) => void): { above: number; equal: number } {
    let above = 0;
    let equal = 0;
    this.#chunks(bits, matches, from, to, null, (start, _first, _last, blocks, slices) => {
      above += this.#exports.atLeast(bits, 0, blocks, code, includeEqual ? 1 : 0, slices, ROWS, LOWS, LIST);
      equal += this.#exports.equal.value as number;
      if (equals) this.#finish(start, equals);
    });
    return { above, equal };
  }

  /** atLeast (without includeEqual, nothing listed) for each of `codes` in one pass: per code, the rows above it and those equal to it. */
  atLeastEach(bits: number, matches: Uint32Array, from: number, to: number, codes: readonly number[]): { above: number[]; equal: number[] } {
    const k = codes.length;
    if (k === 0) return { above: [], equal: [] };
    if (k > MAX_EACH) throw new RangeError(`at most ${MAX_EACH} codes a pass`);
    this.#words.set(codes, EACH_CODES >>> 2);
    const counts = EACH_COUNTS >>> 2;
    this.#words.fill(0, counts, counts + k * 8);
    this.#chunks(bits, matches, from, to, null, (_start, _first, _last, blocks, slices) => {
      this.#exports.atLeastEach(bits, 0, blocks, EACH_CODES, k, slices, ROWS, EACH_COUNTS);
    });
    const lanes = (at: number) => this.#words[at] + this.#words[at + 1] + this.#words[at + 2] + this.#words[at + 3];
    return { above: codes.map((_, q) => lanes(counts + q * 8)), equal: codes.map((_, q) => lanes(counts + q * 8 + 4)) };
  }

  /**
   * `visit` gets the matches of words [from, to) whose code is at least `code()` (`atMost`: at
   * most it), span after span, in its chunk's lows at the listed blocks. The code is asked again
   * for every span, and spans start at 16 words and double to 2,048: a heap's last kept key rises
   * fastest over its first matches.
   */
  within(bits: number, matches: Uint32Array, from: number, to: number, code: () => number, atMost: boolean, visit: (chunk: Chunk) => void): void {
    let span = 4;
    this.#chunks(bits, matches, from, to, null, (start, _first, _last, blocks, slices) => {
      for (let b = 0; b < blocks; b += span, span = Math.min(span * 2, 512)) {
        const listed = this.#exports.within(bits, b, Math.min(blocks, b + span), code(), atMost ? 1 : 0, slices, ROWS, LOWS, LIST);
        if (listed === 0) continue;
        this.#chunk.start = start;
        this.#chunk.listed = listed;
        visit(this.#chunk);
      }
    });
  }

  /**
   * The bits set in `a` and in each of `others` over words [from, to) (past an array's end:
   * none): `a` is copied in once a chunk for all of them (a facet's values over one set of
   * matches). `a` itself among them counts `a` alone (A AND A), copied once.
   */
  popcountEach(a: Uint32Array, others: readonly Uint32Array[], from: number, to: number): number[] {
    const counts = others.map(() => 0);
    for (let start = from; start < to; start += CHUNK_WORDS) {
      const last = Math.min(to, start + CHUNK_WORDS);
      const blocks = (last - start + 3) >>> 2;
      this.#load(WORK_A, a, start, start, last, blocks);
      for (let i = 0; i < others.length; i++) {
        if (others[i] === a) {
          counts[i] += this.#exports.popcountAnd(WORK_A, WORK_A, blocks);
          continue;
        }
        if (others[i].length <= start) continue;
        this.#load(WORK_B, others[i], start, start, last, blocks);
        counts[i] += this.#exports.popcountAnd(WORK_A, WORK_B, blocks);
      }
    }
    return counts;
  }

  /**
   * target[from, to) := target AND (any of sources), OR sources[0], or AND NOT sources[0]; a
   * source shorter than `to` has no bits past its end. `target` holds words [from, to).
   */
  combine(how: Combination, target: Uint32Array, sources: readonly Uint32Array[], from: number, to: number): void {
    const exports = this.#exports;
    for (let start = from; start < to; start += CHUNK_WORDS) {
      const last = Math.min(to, start + CHUNK_WORDS);
      const blocks = (last - start + 3) >>> 2;
      this.#load(WORK_A, target, start, start, last, blocks);
      this.#load(WORK_B, sources[0], start, start, last, blocks);
      for (let k = 1; k < sources.length; k++) {
        this.#load(WORK_C, sources[k], start, start, last, blocks);
        exports.or(WORK_B, WORK_C, blocks);
      }
      exports[how](WORK_A, WORK_B, blocks);
      target.set(this.#words.subarray(WORK_A >>> 2, (WORK_A >>> 2) + (last - start)), start);
    }
  }

  /** The bits set in words [from, to) of `bits`, ascending, into `out` (room for all of them). */
  listBits(bits: Uint32Array, out: Uint32Array, from: number, to: number): void {
    const words = this.#words;
    const list = this.#chunk.list;
    let n = 0;
    for (let start = from; start < to; start += CHUNK_WORDS) {
      const last = Math.min(to, start + CHUNK_WORDS);
      const blocks = (last - start + 3) >>> 2;
      this.#load(WORK_A, bits, start, start, last, blocks);
      const listed = this.#exports.setBlocks(WORK_A, blocks, LIST);
      for (let i = 0; i < listed; i++) {
        const first = list[i] << 2;
        for (let w = first; w < first + 4; w++) {
          let word = words[(WORK_A >>> 2) + w];
          while (word !== 0) {
            const lowest = word & -word;
            out[n++] = ((start + w) << 5) + 31 - Math.clz32(lowest);
            word ^= lowest;
          }
        }
      }
    }
  }

  #finish(start: number, edges: (chunk: Chunk) => void): void {
    const listed = this.#exports.listed.value as number;
    if (listed === 0) return;
    this.#chunk.start = start;
    this.#chunk.listed = listed;
    edges(this.#chunk);
  }
}

let kernel: Kernel | null = null;
/** The thread's kernel for counts and bitset operations. */
const theKernel = () => (kernel ??= new Kernel());

/**
 * A range index's codes, bit-sliced in blocks of four words (see sliceAt), in a kernel's memory of
 * their own: a pass reads them in place, where copying a chunk's slices in was a tenth of a heavy
 * search's time (docs/performance.md).
 */
export class SlicedCodes {
  readonly #kernel = new Kernel();
  #words: Uint32Array = new Uint32Array(0);

  /** The slices: valid until the next resize or clear. */
  get words(): Uint32Array {
    return this.#words;
  }

  get length(): number {
    return this.#words.length;
  }

  /** `words` words: the first ones keep their bits, the others are 0. */
  resize(words: number): void {
    // Dropped words are zeroed: they would be read again as new ones.
    if (words < this.#words.length) this.#words.fill(0, words);
    this.#kernel.reserve(words);
    this.#words = this.#kernel.slices(words);
  }

  /** `words` words, all 0. */
  clear(words: number): void {
    this.#words.fill(0);
    this.resize(words);
  }

  /**
   * rows[from, to) := the rows whose code is within [lowCode, highCode], less the rows equal to a
   * tested edge code. With `marks`, the edge rows among them are kept instead; without, `edges`
   * gets each chunk that has any, its rows already written back, to test and add them. The
   * slices hold words [from, to).
   */
  select(
    bits: number, rows: Uint32Array, from: number, to: number, lowCode: number, highCode: number,
    testLow: boolean, testHigh: boolean, marks: Uint32Array | null, edges: (chunk: Chunk) => void,
  ): void {
    this.#kernel.select(bits, rows, from, to, lowCode, highCode, testLow, testHigh, marks, edges);
  }

  /**
   * How many of `matches`[from, to) have a code above `code` (with includeEqual, at least it), and
   * (without includeEqual) how many equal it; those are handed to `equals` by chunk, in its lows.
   */
  countAtLeast(bits: number, matches: Uint32Array, from: number, to: number, code: number, includeEqual: boolean, equals?: (chunk: Chunk) => void): { above: number; equal: number } {
    return this.#kernel.atLeast(bits, matches, from, to, code, includeEqual, equals);
  }

  /** The matches of words [from, to) whose code is at least `code()` (`atMost`: at most it), by span (see Kernel.within). */
  within(bits: number, matches: Uint32Array, from: number, to: number, code: () => number, atMost: boolean, visit: (chunk: Chunk) => void): void {
    this.#kernel.within(bits, matches, from, to, code, atMost, visit);
  }

  /** countAtLeast without includeEqual for each of `codes` (at most MAX_EACH) in one pass, no row listed. */
  countAtLeastEach(bits: number, matches: Uint32Array, from: number, to: number, codes: readonly number[]): { above: number[]; equal: number[] } {
    return this.#kernel.atLeastEach(bits, matches, from, to, codes);
  }
}

/** The bits set in `a` over words [from, to) (past its end: none). */
export function countBits(a: Uint32Array, from: number, to: number): number {
  return theKernel().popcountEach(a, [a], from, to)[0];
}

/** The bits set in both `a` and `b` over words [from, to) (past either's end: none). */
export function countBitsOfBoth(a: Uint32Array, b: Uint32Array, from: number, to: number): number {
  return theKernel().popcountEach(a, [b], from, to)[0];
}

/** The bits set in both `a` and each of `others` over words [from, to) (past an array's end: none). */
export function countBitsOfEach(a: Uint32Array, others: readonly Uint32Array[], from: number, to: number): number[] {
  return theKernel().popcountEach(a, others, from, to);
}

/** target[from, to) := target AND (any of sources), OR sources[0], or AND NOT sources[0] (see Kernel.combine). */
export function combineBits(how: Combination, target: Uint32Array, sources: readonly Uint32Array[], from: number, to: number): void {
  theKernel().combine(how, target, sources, from, Math.min(to, target.length));
}

/** The bits set in words [from, to) of `bits`, ascending, into `out`, which has room for all of them. */
export function listBits(bits: Uint32Array, out: Uint32Array, from = 0, to = bits.length): void {
  theKernel().listBits(bits, out, from, Math.min(to, bits.length));
}

/** The index in a block-layout slices array of bit `j` of word `word`'s codes. */
export const sliceAt = (word: number, bits: number, j: number) => ((((word >>> 2) * bits + j) << 2) | (word & 3)) >>> 0;

/** Words of slices for `words` words of slots (whole blocks). */
export const sliceWords = (words: number, bits: number) => ((words + 3) >>> 2) * bits * 4;

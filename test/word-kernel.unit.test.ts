import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { andAnyInto, andInto, andNotInto, bitCount, bitsOf, orInto, popcount, popcountAnd, popcountAndEach, setBitList } from '../src/search/primitives/bitset.js';
import { CHUNK_BLOCKS } from '../src/search/primitives/word-kernel.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
// @ts-expect-error: a plain script, without types
import { assemble } from '../scripts/word-kernel.mjs';

// The range index's SIMD passes run from bytes committed beside their source: they must be that
// source assembled (`npm run wasm`), or a change to the .wat would be tested and shipped unseen.
// What the passes compute is held by test/range-index.unit.test.ts.
describe('the word kernel', () => {
  it('is word-kernel.wat assembled', async () => {
    const committed = readFileSync(new URL('../src/search/primitives/word-kernel-wasm.ts', import.meta.url), 'utf8');
    expect(committed).toBe(await assemble());
  });
});

// popcount, popcountAnd and the bitset operations hand spans of KERNEL_WORDS words and more to the kernel, in chunks of
// CHUNK_BLOCKS * 4 words: any window, unaligned ends, a second array shorter than the first.
describe('counts and bitset operations through the kernel', () => {
  const words = CHUNK_BLOCKS * 4 * 2 + 37;
  const random = seededRandom('kernel-counts');
  const draw = (density: number) => Uint32Array.from({ length: words }, () => (random.next() < density ? random.int(0, 2 ** 32 - 1) >>> 0 : 0));
  const a = draw(0.9);
  const b = draw(0.5);
  const byWord = (x: Uint32Array, y: Uint32Array | null, from: number, to: number) => {
    let total = 0;
    for (let i = from; i < Math.min(to, x.length, y?.length ?? Infinity); i++) total += bitCount(y ? x[i] & y[i] : x[i]);
    return total;
  };

  it('count what a word at a time counts', () => {
    const windows = [
      [0, words],
      [1, words - 1],
      [3, CHUNK_BLOCKS * 4 + 5],
      [CHUNK_BLOCKS * 4 - 2, CHUNK_BLOCKS * 4 + 300],
      [words - 300, words + 40],
      ...Array.from({ length: 40 }, () => {
        const from = random.int(0, words - 1);
        return [from, random.int(from, words + 10)];
      }),
    ];
    for (const [from, to] of windows) {
      expect(popcount(a, to, from), `popcount [${from}, ${to})`).toBe(byWord(a, null, from, to));
      expect(popcountAnd(a, b, to, from), `popcountAnd [${from}, ${to})`).toBe(byWord(a, b, from, to));
      const short = b.subarray(0, Math.max(0, to - 100));
      expect(popcountAnd(a, short, to, from), `popcountAnd, a shorter b, [${from}, ${to})`).toBe(byWord(a, short, from, to));
      // A facet's values at once: the matches read once a chunk, one value's words ending early.
      const values = [b, short, a, draw(0.01)];
      expect(popcountAndEach(a, values, to, from), `popcountAndEach [${from}, ${to})`).toEqual(values.map((value) => byWord(a, value, from, to)));
    }
  });

  it('count every bit of a full chunk', () => {
    const full = new Uint32Array(CHUNK_BLOCKS * 4 * 3).fill(0xffffffff);
    expect(popcount(full)).toBe(full.length * 32);
    expect(popcountAnd(full, full)).toBe(full.length * 32);
  });

  it('combine what a word at a time combines', () => {
    const c = draw(0.3);
    // Each operation on a copy, against the same words combined here one at a time.
    const check = (name: string, from: number, to: number, apply: (out: Uint32Array) => void, word: (out: number, i: number) => number) => {
      const out = a.slice();
      apply(out);
      const expected = a.slice();
      for (let i = from; i < Math.min(to, words); i++) expected[i] = word(a[i], i) >>> 0;
      // The first word that differs (a deep equality of 16k-word arrays takes seconds).
      expect(out.findIndex((value, i) => value !== expected[i]), `${name} [${from}, ${to})`).toBe(-1);
    };
    const at = (x: Uint32Array, i: number) => (i < x.length ? x[i] : 0);
    for (let k = 0; k < 30; k++) {
      const from = k === 0 ? 0 : random.int(0, words - 1);
      const to = k === 0 ? words : random.int(from, words);
      const short = b.subarray(0, random.int(from, words));
      check('andInto', from, to, (out) => andInto(out, short, to, from), (word, i) => word & at(short, i));
      check('orInto', from, to, (out) => orInto(out, short, to, from), (word, i) => word | at(short, i));
      check('andAnyInto', from, to, (out) => andAnyInto(out, [short, c, b.subarray(0, from + 10)], to, from), (word, i) => word & (at(short, i) | c[i] | at(b.subarray(0, from + 10), i)));
      check('andAnyInto of none', from, to, (out) => andAnyInto(out, [], to, from), () => 0);
      check('andNotInto', 0, to, (out) => andNotInto(out, short, to), (word, i) => word & ~at(short, i));
    }
  });

  it('list the set bits in order, from any block of any chunk', () => {
    // Bits in the first and last word, in a partial last block, and densities from empty to full.
    for (const [length, density] of [[words, 0], [words, 0.001], [words, 0.3], [words - 1, 1], [300, 0.05], [CHUNK_BLOCKS * 4, 0.01], [17, 0.5]] as const) {
      const bits = Uint32Array.from({ length }, () => (random.next() < density ? random.int(1, 2 ** 32 - 1) >>> 0 : 0));
      if (density > 0) {
        bits[0] |= 1;
        bits[length - 1] |= 0x80000000;
      }
      const expected = bitsOf(bits);
      expect([...setBitList(bits, expected.length)], `${length} words at ${density}`).toEqual(expected);
    }
  });
});

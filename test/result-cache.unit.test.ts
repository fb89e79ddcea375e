import { describe, expect, it } from 'vitest';
import { BitsetPool, bitsOf, popcount } from '../src/search/primitives/bitset.js';
import { ResultCache } from '../src/search/primitives/result-cache.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';

// The filters' result cache keeps few matches as lists of slots and gives them back as bitsets:
// every hit must hold exactly the bits that were kept, whichever form they were kept in.

const WORDS = 1_000; // 32,000 rows

function randomMatch(pool: BitsetPool, rng: ReturnType<typeof seededRandom>, share: number) {
  const bits = pool.take(WORDS);
  for (let slot = 0; slot < WORDS * 32; slot++) if (rng.next() < share) bits[slot >>> 5] |= 1 << (slot & 31);
  return { bits, count: popcount(bits) };
}

describe('the result cache', () => {
  it('gives back exactly the rows it kept, sparse or dense, across interleaved hits', () => {
    const rng = seededRandom('result-cache');
    const pool = new BitsetPool();
    const cache = new ResultCache(pool);
    const kept = new Map<string, number[]>();
    // Shares from one row in 3,000 to one in two: both sides of the list/bitset line (1 in 256).
    for (let i = 0; i < 20; i++) {
      const share = [0.0003, 0.003, 0.01, 0.05, 0.5][i % 5];
      const match = cache.keep(`f${i}`, 1, randomMatch(pool, rng, share));
      kept.set(`f${i}`, bitsOf(match.bits));
      expect(popcount(match.bits)).toBe(match.count);
    }
    for (let round = 0; round < 200; round++) {
      const key = `f${rng.int(0, 19)}`;
      const hit = cache.get(key, 1, WORDS)!;
      expect(bitsOf(hit.bits), key).toEqual(kept.get(key));
      expect(hit.count).toBe(kept.get(key)!.length);
      // The same entry asked again at once is the same bitset, not set again.
      expect(cache.get(key, 1, WORDS)!.bits).toBe(hit.bits);
    }
  });

  it('holds few matches in list form: far less than a bitset each', () => {
    const rng = seededRandom('result-cache-bytes');
    const pool = new BitsetPool();
    const cache = new ResultCache(pool);
    for (let i = 0; i < 32; i++) cache.keep(`sparse${i}`, 1, randomMatch(pool, rng, 0.002));
    // 64 rows of 32,000 each: 256 bytes as a list against 4,000 as a bitset.
    expect(cache.bytesHeld).toBeLessThan(32 * WORDS * 4 * 0.1);
    for (let i = 0; i < 32; i++) cache.keep(`dense${i}`, 1, randomMatch(pool, rng, 0.3));
    expect(cache.bytesHeld).toBe(32 * WORDS * 4);
  });

  it('keeps a sparse match that knows its window as a copy of those words when that is small enough, else as a list', () => {
    const rng = seededRandom('result-cache-window');
    const pool = new BitsetPool();
    const cache = new ResultCache(pool);
    // Rows only within words [200, 300): a date range's window.
    const windowed = (share: number, window = { from: 200, to: 300 }) => {
      const bits = pool.take(WORDS);
      for (let slot = 200 * 32; slot < 300 * 32; slot++) if (rng.next() < share) bits[slot >>> 5] |= 1 << (slot & 31);
      return { bits, count: popcount(bits), window };
    };
    // About 96 rows in 100 words (at most 4 words a row; sparse: a row per 8 of all 1,000 words or
    // fewer): the 100 words are kept, 400 bytes.
    const copied = windowed(0.03);
    const copiedRows = bitsOf(copied.bits);
    cache.keep('copied', 1, copied);
    expect(cache.bytesHeld).toBe(100 * 4);
    // About 10 rows in the same words: a list of their slots, 4 bytes a row.
    const listed = windowed(0.003);
    const listedRows = bitsOf(listed.bits);
    cache.keep('listed', 1, listed);
    expect(cache.bytesHeld).toBe(100 * 4 + listedRows.length * 4);
    // Each given back exactly, in a bitset the other used before, with the window it was kept with.
    for (let round = 0; round < 3; round++) {
      const hit = cache.get('copied', 1, WORDS)!;
      expect(bitsOf(hit.bits)).toEqual(copiedRows);
      expect([hit.count, hit.window]).toEqual([copiedRows.length, { from: 200, to: 300 }]);
      const other = cache.get('listed', 1, WORDS)!;
      expect(bitsOf(other.bits)).toEqual(listedRows);
      expect(other.count).toBe(listedRows.length);
    }
  });

  it('forgets an entry of another table version', () => {
    const rng = seededRandom('result-cache-version');
    const pool = new BitsetPool();
    const cache = new ResultCache(pool);
    cache.keep('sparse', 1, randomMatch(pool, rng, 0.001));
    cache.keep('dense', 1, randomMatch(pool, rng, 0.5));
    expect(cache.get('sparse', 2, WORDS)).toBeUndefined();
    expect(cache.get('dense', 2, WORDS)).toBeUndefined();
    expect(cache.get('sparse', 1, WORDS)).toBeUndefined();
    expect(cache.bytesHeld).toBe(0);
    cache.keep('again', 1, randomMatch(pool, rng, 0.5));
    cache.clear();
    expect(cache.get('again', 1, WORDS)).toBeUndefined();
    expect(cache.bytesHeld).toBe(0);
  });

  it('keeps dense matches within its byte budget, the newest first, and the pool within its own', () => {
    const rng = seededRandom('result-cache-budget');
    const pool = new BitsetPool(16, 3 * WORDS * 4);
    // Room for five bitsets of 4,000 bytes, under a capacity of 32 entries.
    const cache = new ResultCache(pool, 32, 5 * WORDS * 4);
    const kept = new Map<string, number[]>();
    for (let i = 0; i < 12; i++) kept.set(`dense${i}`, bitsOf(cache.keep(`dense${i}`, 1, randomMatch(pool, rng, 0.3)).bits));
    expect(cache.bytesHeld).toBe(5 * WORDS * 4);
    for (let i = 0; i < 12; i++) {
      const hit = cache.get(`dense${i}`, 1, WORDS);
      if (i < 7) expect(hit, `dense${i}`).toBeUndefined();
      else expect(bitsOf(hit!.bits)).toEqual(kept.get(`dense${i}`));
    }
    // Sparse lists beside them still fit: the budget counts what an entry holds.
    for (let i = 0; i < 10; i++) cache.keep(`sparse${i}`, 1, randomMatch(pool, rng, 0.001));
    expect(cache.bytesHeld).toBeLessThanOrEqual(5 * WORDS * 4);
    expect(cache.get('sparse9', 1, WORDS)).toBeDefined();
    // A single match larger than the budget is still kept: the search that made it uses it.
    const small = new ResultCache(pool, 32, 100);
    small.keep('wide', 1, randomMatch(pool, rng, 0.5));
    expect(small.get('wide', 1, WORDS)).toBeDefined();
    // Their bitsets go back to the pool, which keeps three.
    cache.clear();
    expect(pool.bytesKept).toBe(3 * WORDS * 4);
  });
});

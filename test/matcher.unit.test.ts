import { describe, expect, it } from 'vitest';
import { BitsetPool, bitsOf } from '../src/search/primitives/bitset.js';
import { type Bounds, RangeIndex } from '../src/search/primitives/range-index.js';
import { ValueIndex } from '../src/search/primitives/value-index.js';
import { ResultCache } from '../src/search/primitives/result-cache.js';
import { Matcher } from '../src/search/tables/matcher.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';

// The Matcher takes its bitsets from the pool uncleared and writes its starting rows only when
// the first condition runs, within that condition's window: whatever a bitset held before (a
// previous search's matches) must never show through. Here the pool's bitsets come back full of
// ones, and every answer is held to a plain comparison of the rows' values.

const rng = seededRandom('matcher');
const slots = 20_000;
const words = Math.ceil(slots / 32);

/** Dates rising with the slot, as videos' are: a date range keeps a window of the words. */
const dateOf = Array.from({ length: slots }, (_, slot) => slot * 1_000 + rng.int(0, 5_000));
const countryOf = Array.from({ length: slots }, () => rng.pick(['US', 'FR', 'JP', 'BR', null]));
const followersOf = Array.from({ length: slots }, () => Math.floor(10 ** (rng.next() * 7)));
const alive = Array.from({ length: slots }, () => rng.chance(0.9));

const dates = new RangeIndex(false);
const followers = new RangeIndex(true);
const countries = new ValueIndex<string>();
for (let slot = 0; slot < slots; slot++) {
  dates.set(slot, dateOf[slot]);
  followers.set(slot, followersOf[slot]);
  countries.set(slot, countryOf[slot]);
}
dates.rebalance(slots);
followers.rebalance(slots);
const start = new Uint32Array(words);
for (let slot = 0; slot < slots; slot++) if (alive[slot]) start[slot >>> 5] |= 1 << (slot & 31);

/** A pool whose every free bitset is all ones, as a dense earlier match would leave it. */
function dirtyPool(): BitsetPool {
  const pool = new BitsetPool();
  pool.give(...Array.from({ length: 4 }, () => new Uint32Array(words).fill(0xffffffff)));
  return pool;
}

const within = (value: number, { min, max, maxExclusive }: Bounds) =>
  (min === undefined || value >= min) && (max === undefined || (maxExclusive ? value < max : value <= max));

describe('the matcher', () => {
  it('starts from its rows alone, whatever its pooled bitsets held, with or without a narrowing range first', () => {
    for (let n = 0; n < 60; n++) {
      const dateBounds: Bounds = rng.chance(0.7) ? { min: rng.int(0, slots * 1_000), max: rng.int(0, slots * 1_000), maxExclusive: true } : {};
      const followerBounds: Bounds = rng.chance(0.5) ? { min: rng.int(0, 100_000) } : {};
      const asked = rng.chance(0.6) ? [...new Set([rng.pick(['US', 'FR', 'JP', 'BR']), rng.pick(['US', 'FR', 'JP', 'BR'])])] : null;
      const match = new Matcher(words, dirtyPool(), start).range(dates, dateBounds);
      if (asked) match.values(countries, asked);
      match.range(followers, followerBounds);
      const keep = rng.chance(0.3);
      if (keep) match.keep((slot) => slot % 3 !== 0);
      const { bits, count, window } = match.finish();
      const expected = Array.from({ length: slots }, (_, slot) => slot).filter(
        (slot) =>
          alive[slot] &&
          within(dateOf[slot], dateBounds) &&
          (asked === null || asked.includes(countryOf[slot]!)) &&
          within(followersOf[slot], followerBounds) &&
          (!keep || slot % 3 !== 0),
      );
      const label = JSON.stringify({ dateBounds, followerBounds, asked, keep });
      expect(bitsOf(bits), label).toEqual(expected);
      expect(count, label).toBe(expected.length);

      // The result cache lists a sparse match (a row per 8 words at most) within the match's
      // window only, and gives back its rows whole once its bitset has gone back to the pool
      // (another match kept after it): the match thinned to that, inside the same window.
      const sparse = expected.filter((_, i) => i % Math.ceil(expected.length / 70) === 0);
      const thin = new Uint32Array(words);
      for (const slot of sparse) thin[slot >>> 5] |= 1 << (slot & 31);
      const cache = new ResultCache(dirtyPool());
      cache.keep('match', 1, { bits: thin, count: sparse.length, window });
      cache.keep('another', 1, { bits: new Uint32Array(words), count: 0 });
      expect(bitsOf(cache.get('match', 1, words)!.bits), `${label}, from the cache`).toEqual(sparse);
    }
  });

  it('clears only what a pooled bitset may hold, and the cache gives its matches back with true windows', () => {
    // One pool and one small cache for a run of searches, as the index thread keeps them: each
    // match's bitset goes back (evicted, or its loan returned) saying which words may hold its
    // rows, and the next search clears only those. A window said too narrow shows as stale rows.
    const pool = new BitsetPool();
    pool.giveWithin(new Uint32Array(words).fill(0xffffffff, 100, 300), { from: 100, to: 300 });
    const cache = new ResultCache(pool, 3);
    let previous: number[] = [];
    for (let n = 0; n < 80; n++) {
      const low = rng.int(0, slots * 1_000);
      const dateBounds: Bounds = { min: low, max: low + rng.int(0, slots * 300), maxExclusive: true };
      const asked = [rng.pick(['US', 'FR', 'JP', 'BR'])];
      const sparse = rng.chance(0.5);
      const match = new Matcher(words, pool, start).range(dates, dateBounds).values(countries, asked);
      if (sparse) match.keep((slot) => slot % 16 === 0);
      const expected = Array.from({ length: slots }, (_, slot) => slot).filter(
        (slot) => alive[slot] && within(dateOf[slot], dateBounds) && countryOf[slot] === asked[0] && (!sparse || slot % 16 === 0),
      );
      const label = JSON.stringify({ dateBounds, asked, sparse });
      const kept = cache.keep(`search ${n}`, 1, match.finish());
      expect(bitsOf(kept.bits), label).toEqual(expected);
      // The search before from the cache (a sparse one set into a bitset of the same pool).
      if (n > 0) expect(bitsOf(cache.get(`search ${n - 1}`, 1, words)!.bits), `${label}: the search before`).toEqual(previous);
      previous = expected;
      // Bitsets taken cleared hold nothing, whoever used them last.
      const taken = pool.take(words);
      expect(bitsOf(taken), `${label}: a cleared bitset`).toEqual([]);
      pool.give(taken);
    }
  });

  it('matches nothing from no starting rows, and everything alive when no condition runs', () => {
    expect(bitsOf(new Matcher(words, dirtyPool(), null).values(countries, ['US']).finish().bits)).toEqual([]);
    expect(new Matcher(words, dirtyPool(), null).finish().count).toBe(0);
    const all = new Matcher(words, dirtyPool(), start).range(followers, {}).finish();
    expect(all.count).toBe(alive.filter(Boolean).length);
    // A starting bitset shorter than the table (a platform's bitmap not yet grown): the rest is 0.
    const short = start.slice(0, 10);
    expect(bitsOf(new Matcher(words, dirtyPool(), short).finish().bits)).toEqual(bitsOf(short));
  });
});

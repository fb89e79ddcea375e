import { describe, expect, it } from 'vitest';
import { popcount } from '../src/search/primitives/bitset.js';
import { RangeIndex } from '../src/search/primitives/range-index.js';
import { RowTable } from '../src/search/primitives/row-table.js';
import { SortOrder } from '../src/search/primitives/sort-order.js';
import { ValueIndex } from '../src/search/primitives/value-index.js';
import { countRanges, countValues } from '../src/search/tables/facet-counts.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';

// Each facet count picks its way by how many rows match: few are read one by one, many are counted
// on bitmaps (a value's bitmap, or the range index's `value >= edge`). Both ways must give the
// tally of the rows themselves, at every density from a handful of rows to nearly all of them.

const SLOTS = 20_000;
const WORDS = Math.ceil(SLOTS / 32);

describe('facet counts over matches of every density', () => {
  const rng = seededRandom('facet-counts');
  const followers: number[] = [];
  const country: (string | null)[] = [];
  const range = new RangeIndex(true);
  /** The same values without NULLs (0 instead), as a NOT NULL column holds them. */
  const notNull = new RangeIndex(true);
  const countries = new ValueIndex<string>();
  for (let slot = 0; slot < SLOTS; slot++) {
    // Heavy ties at 0 and at the edges themselves, some NULLs: the bounds' own cases.
    const value = rng.chance(0.05) ? NaN : rng.chance(0.1) ? 0 : rng.chance(0.05) ? 1_000 : Math.floor(Math.exp(rng.next() * 14));
    followers.push(value);
    range.set(slot, value);
    notNull.set(slot, Number.isNaN(value) ? 0 : value);
    const code = rng.chance(0.03) ? null : `C${Math.floor(rng.next() ** 2 * 40)}`;
    country.push(code);
    countries.set(slot, code);
  }
  range.rebalance(SLOTS);
  notNull.rebalance(SLOTS);
  // The same NOT NULL values with a sort order over them, as the follower column has: an edge's
  // bucket is then counted from the order's run, and some slots changed after the order was built
  // (the run's changed slots are counted apart).
  const table = new RowTable();
  const ordered = new RangeIndex(true);
  const orderedValue: number[] = [];
  const order = new SortOrder(table, (slot) => ordered.values.get(slot));
  ordered.useOrder(order);
  for (let slot = 0; slot < SLOTS; slot++) {
    table.slotFor(`id${slot}`, `id${slot}`, () => {});
    table.markAlive(slot, true);
    orderedValue.push(Number.isNaN(followers[slot]) ? 0 : followers[slot]);
    ordered.set(slot, orderedValue[slot]);
  }
  ordered.rebalance(SLOTS);
  order.rebuild();
  for (let n = 0; n < 300; n++) {
    const slot = rng.int(0, SLOTS - 1);
    order.touch(slot);
    orderedValue[slot] = rng.chance(0.5) ? 1_000 : Math.floor(Math.exp(rng.next() * 14));
    ordered.set(slot, orderedValue[slot]);
  }
  const edges = [10, 100, 1_000, 10_000, 100_000, 1_000_000];

  for (const density of [0.0005, 0.005, 0.02, 0.1, 0.5, 0.97]) {
    it(`counts a histogram and values exactly when ${density * 100} % of the rows match`, () => {
      const matches = new Uint32Array(WORDS);
      const matched: number[] = [];
      for (let slot = 0; slot < SLOTS; slot++) {
        if (!rng.chance(density)) continue;
        matches[slot >>> 5] |= 1 << (slot & 31);
        matched.push(slot);
      }
      const count = popcount(matches);
      const histogram = countRanges(matches, count, range, 'count', edges);
      const bounds = [null, ...edges, null];
      const expected = bounds.slice(0, -1).map((min, i) => ({
        min,
        max: bounds[i + 1],
        count: matched.filter((slot) => {
          const value = followers[slot];
          return !Number.isNaN(value) && (min === null || value >= min) && (bounds[i + 1] === null || value < bounds[i + 1]!);
        }).length,
      }));
      expect(histogram).toEqual(expected);
      // A NOT NULL column's histogram skips counting the matches with a value: they all have one.
      const withoutNull = countRanges(matches, count, notNull, 'count', edges, false);
      const valueOf = (slot: number) => (Number.isNaN(followers[slot]) ? 0 : followers[slot]);
      expect(withoutNull.map((bucket) => bucket.count)).toEqual(
        bounds.slice(0, -1).map((min, i) => matched.filter((slot) => (min === null || valueOf(slot) >= min) && (bounds[i + 1] === null || valueOf(slot) < bounds[i + 1]!)).length),
      );
      expect(withoutNull.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(count);
      const fromOrder = countRanges(matches, count, ordered, 'count', edges, false);
      expect(fromOrder.map((bucket) => bucket.count)).toEqual(
        bounds.slice(0, -1).map((min, i) => matched.filter((slot) => (min === null || orderedValue[slot] >= min) && (bounds[i + 1] === null || orderedValue[slot] < bounds[i + 1]!)).length),
      );
      // The matches themselves are left as they were.
      expect(popcount(matches)).toBe(count);

      const tally = new Map<string, number>();
      for (const slot of matched) if (country[slot] !== null) tally.set(country[slot]!, (tally.get(country[slot]!) ?? 0) + 1);
      const values = countValues(matches, count, countries, String);
      expect(Object.fromEntries(values.map((v) => [v.value, v.count]))).toEqual(Object.fromEntries(tally));

      // A filter on the column itself (country IN (C0, C3)): only its values are counted, by their
      // rows or by the matches' codes; a value no row holds is no value, and one named twice is one.
      const asked = ['C0', 'C3', 'nowhere', 'C3'];
      const restricted = new Uint32Array(WORDS);
      const restrictedTally = new Map<string, number>();
      for (const slot of matched) {
        if (!asked.includes(country[slot] ?? '')) continue;
        restricted[slot >>> 5] |= 1 << (slot & 31);
        restrictedTally.set(country[slot]!, (restrictedTally.get(country[slot]!) ?? 0) + 1);
      }
      const among = countValues(restricted, popcount(restricted), countries, String, asked);
      expect(Object.fromEntries(among.map((v) => [v.value, v.count]))).toEqual(Object.fromEntries(restrictedTally));
    });
  }
});

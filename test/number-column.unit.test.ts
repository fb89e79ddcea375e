import { describe, expect, it } from 'vitest';
import { bitsOf } from '../src/search/primitives/bitset.js';
import { type Bounds, RangeIndex } from '../src/search/primitives/range-index.js';
import { NumberColumn } from '../src/search/primitives/row-table.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { roundTrip } from './support/snapshot-round-trip.js';

// Numeric columns hold whole numbers in 2 bytes while they fit an Int16, in 4 while they fit an
// Int32, in 5 below about 10^12, and widen to doubles at the first value that fits none: values,
// NULLs and range answers must not change across a widening.

describe('the numeric columns', () => {
  it('keeps whole numbers within an Int16 in 2 bytes, and widens to the narrowest form that holds a value (4, 5 or 8 bytes)', () => {
    const forms: [number, number][] = [[2 ** 15 - 1, 2], [-(2 ** 15) + 1, 2], [-(2 ** 15), 4], [2 ** 15, 4], [2 ** 31 - 1, 4], [2 ** 31, 5], [-(2 ** 31), 5], [2 ** 40 - 2 ** 31 - 2, 5], [2 ** 40 - 2 ** 31 - 1, 8], [0.5, 8]];
    for (const [value, bytes] of forms) {
      const column = new NumberColumn();
      column.set(0, 7);
      column.set(1, NaN);
      column.set(3000, -7);
      expect(column.bytesPerValue).toBe(2);
      column.set(2, value);
      expect(column.bytesPerValue, String(value)).toBe(bytes);
      expect([0, 1, 2, 3, 2999, 3000].map((slot) => column.get(slot)), String(value)).toEqual([7, NaN, value, NaN, NaN, -7]);
      // A slot past the old capacity is NULL in the new form too.
      column.set(5000, 1);
      expect(column.get(4999)).toBeNaN();
      // A snapshot keeps the form and every value, NULLs included.
      const back = roundTrip(column, new NumberColumn());
      expect(back.bytesPerValue).toBe(bytes);
      expect([0, 1, 2, 3, 4999, 5000].map((slot) => back.get(slot))).toEqual([7, NaN, value, NaN, NaN, 1]);
    }
  });

  it('keeps instants from 2000 to late 2034 in 5 bytes whatever comes first, and every value through a widening and a snapshot', () => {
    const rng = seededRandom('number-column-instants');
    const from = Date.UTC(2000, 0, 1);
    const last = from + 2 ** 40 - 2;
    const year = 365.25 * 86_400_000;
    // Newest first, as a catalogue is often loaded: the platforms' first videos (2005) still fit.
    const first = Date.parse('2026-11-26T11:15:00.123Z');
    for (const outsider of [last + 1, from - 1, first + 0.5, 1e300, -first]) {
      const column = new NumberColumn(true);
      const values = new Map<number, number>([[0, NaN]]);
      column.set(0, NaN);
      expect(column.bytesPerValue).toBe(8);
      for (let n = 0; n < 3_000; n++) {
        const slot = n === 0 ? 1 : rng.int(0, 6_000);
        // The first instant sets the base; then any millisecond from 2000 to late 2034, and NULLs.
        const value = n === 0 ? first : n === 1 ? Date.parse('2005-04-23T20:31:52Z') : rng.chance(0.1) ? NaN : from + Math.floor(rng.next() * (last - from));
        column.set(slot, value);
        values.set(slot, value);
      }
      for (const edge of [from, last]) {
        column.set(7_000, edge);
        values.set(7_000, edge);
        expect(column.get(7_000)).toBe(edge);
      }
      expect(column.bytesPerValue).toBe(5);
      const back = roundTrip(column, new NumberColumn(true));
      expect(back.bytesPerValue).toBe(5);
      for (const [slot, value] of values) expect(back.get(slot), String(slot)).toBe(value);
      expect(back.get(6_999)).toBeNaN();
      column.set(7_001, outsider);
      values.set(7_001, outsider);
      expect(column.bytesPerValue, String(outsider)).toBe(8);
      for (const [slot, value] of values) expect(column.get(slot), `${outsider} ${slot}`).toBe(value);
      const wide = roundTrip(column, new NumberColumn(true));
      for (const [slot, value] of values) expect(wide.get(slot)).toBe(value);
      const byValue = (a: number, b: number) => a - b;
      expect([...column.present(7_002)].sort(byValue)).toEqual([...values.values()].filter((value) => !Number.isNaN(value)).sort(byValue));
    }
    // A first instant before 2000: from 17 years before it.
    const early = new NumberColumn(true);
    const earlyFirst = Date.UTC(1990, 5, 1);
    for (const [slot, value] of [earlyFirst, earlyFirst - 17 * year, earlyFirst + 17 * year].entries()) early.set(slot, value);
    expect([early.bytesPerValue, early.get(1)]).toEqual([5, earlyFirst - 17 * year]);
    early.set(3, earlyFirst + 18 * year);
    expect([early.bytesPerValue, early.get(0), early.get(3)]).toEqual([8, earlyFirst, earlyFirst + 18 * year]);
    // A fractional first instant: doubles from the start.
    const fractional = new NumberColumn(true);
    fractional.set(0, 1.5);
    expect([fractional.bytesPerValue, fractional.get(0), fractional.get(1)]).toEqual([8, 1.5, NaN]);
  });

  it('answers date ranges exactly in 5 bytes, after a date of 1970 widens the column, and rebalanced', () => {
    const rng = seededRandom('number-column-instant-ranges');
    const slots = 5_000;
    const words = Math.ceil(slots / 32);
    const index = new RangeIndex(false);
    const from = Date.UTC(2005, 0, 1);
    const span = Date.UTC(2026, 11, 31) - from;
    const valueOf: number[] = new Array(slots).fill(NaN);
    const put = (slot: number, value: number) => {
      index.set(slot, value);
      valueOf[slot] = value;
    };
    for (let slot = 0; slot < slots; slot++) put(slot, rng.chance(0.05) ? NaN : from + Math.floor(rng.next() * span));
    index.rebalance(slots);
    const check = (label: string) => {
      for (let n = 0; n < 40; n++) {
        const bounds: Bounds = {};
        if (rng.chance(0.7)) bounds.min = from + Math.floor(rng.next() * span);
        if (rng.chance(0.7)) bounds.max = from + Math.floor(rng.next() * span);
        if (rng.chance(0.5)) bounds.maxExclusive = true;
        const rows = new Uint32Array(words).fill(0xffffffff);
        index.selectInto(rows, words, bounds);
        const max = bounds.max ?? Infinity;
        const expected = valueOf.flatMap((value, slot) => (value >= (bounds.min ?? -Infinity) && (bounds.maxExclusive ? value < max : value <= max) ? [slot] : []));
        expect(bitsOf(rows).filter((slot) => slot < slots), `${label} ${JSON.stringify(bounds)}`).toEqual(expected);
      }
    };
    check('5 bytes');
    expect(index.values.bytesPerValue).toBe(5);
    for (let n = 0; n < 200; n++) put(rng.int(0, slots - 1), from + Math.floor(rng.next() * span));
    put(rng.int(0, slots - 1), Date.UTC(1970, 0, 1, 0, 0, 0, 1));
    expect(index.values.bytesPerValue).toBe(8);
    check('widened, before a rebalance');
    index.rebalance(slots);
    check('widened, rebalanced');
  });

  it('keeps every value, NULL and the Int32 edges exactly, and widens at the first value that does not fit', () => {
    for (const outsider of [2 ** 31, -(2 ** 31), 1.5, 1e15]) {
      const column = new NumberColumn();
      column.set(0, 2 ** 31 - 1);
      column.set(1, -(2 ** 31) + 1);
      column.set(2, NaN);
      column.set(5000, 7);
      expect(column.narrow).toBe(true);
      expect([0, 1, 2, 3, 5000, 4999].map((slot) => column.get(slot))).toEqual([2 ** 31 - 1, -(2 ** 31) + 1, NaN, NaN, 7, NaN]);
      column.set(3, outsider);
      expect(column.narrow, String(outsider)).toBe(false);
      expect([0, 1, 2, 3, 5000, 4999].map((slot) => column.get(slot))).toEqual([2 ** 31 - 1, -(2 ** 31) + 1, NaN, outsider, 7, NaN]);
      expect([...column.present(4)]).toEqual([2 ** 31 - 1, -(2 ** 31) + 1, outsider]);
    }
  });

  it('answers range filters exactly before and after a column widens', () => {
    const rng = seededRandom('number-column');
    const slots = 5_000;
    const words = Math.ceil(slots / 32);
    const index = new RangeIndex(true);
    const valueOf: number[] = new Array(slots).fill(NaN);
    const put = (slot: number, value: number) => {
      index.set(slot, value);
      valueOf[slot] = value;
    };
    for (let slot = 0; slot < slots; slot++) put(slot, rng.chance(0.05) ? NaN : rng.int(0, 1_000_000));
    index.rebalance(slots);
    const check = (label: string, scale: number) => {
      for (let n = 0; n < 40; n++) {
        const bounds: Bounds = {};
        if (rng.chance(0.7)) bounds.min = rng.int(0, 1_000_000) * scale;
        if (rng.chance(0.7)) bounds.max = rng.int(0, 1_000_000) * scale;
        const rows = new Uint32Array(words).fill(0xffffffff);
        index.selectInto(rows, words, bounds);
        const expected = valueOf.flatMap((value, slot) => (value >= (bounds.min ?? -Infinity) && value <= (bounds.max ?? Infinity) ? [slot] : []));
        expect(bitsOf(rows).filter((slot) => slot < slots), `${label} ${JSON.stringify(bounds)}`).toEqual(expected);
      }
    };
    check('narrow', 1);
    expect(index.values.narrow).toBe(true);
    // Cents of a metric past 21 million: no longer an Int32. Then more rows move, across the widening.
    for (let n = 0; n < 500; n++) put(rng.int(0, slots - 1), rng.int(0, 1_000_000) * 10_000);
    expect(index.values.narrow).toBe(false);
    check('widened, before a rebalance', 10_000);
    index.rebalance(slots);
    check('widened, rebalanced', 10_000);
    check('widened, small bounds', 1);
  });
});

import { describe, expect, it } from 'vitest';
import { bitsOf, popcount } from '../src/search/primitives/bitset.js';
import { ValueIndex } from '../src/search/primitives/value-index.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { randomRowSet } from './support/random-searches.js';
import { roundTrip } from './support/snapshot-round-trip.js';

// A value's rows are a bitmap while many, a sorted list of slots while few, and move between the
// two as rows come and go (and at a trim). A slot's value code is a byte while the column has few
// values and widens as values appear. Selections and counts must stay exact through all of it.

describe('the value index', () => {
  it('keeps every slot in exactly its value’s rows as the codes widen past 255 and 65,535 values', () => {
    const rng = seededRandom('value-index');
    const index = new ValueIndex<number>();
    const slots = 2_000;
    const words = Math.ceil((slots + 7) / 32);
    const valueOf: (number | null)[] = new Array(slots).fill(null);
    for (const distinct of [10, 300, 70_000]) {
      for (let n = 0; n < 6_000; n++) {
        const slot = rng.int(0, slots - 1);
        // New values keep arriving (up to `distinct`), old ones keep being reassigned.
        const value = rng.chance(0.05) ? null : rng.int(0, distinct - 1);
        index.set(slot, value);
        valueOf[slot] = value;
      }
      if (distinct === 70_000) for (let v = 0; v < distinct; v++) index.set(slots + (v % 7), v);
      for (let v = 0; v < 12; v++) {
        const value = valueOf[rng.int(0, slots - 1)] ?? 0;
        const expected = valueOf.flatMap((held, slot) => (held === value ? [slot] : []));
        const bitmap = index.bitmap(value, words);
        const found = bitmap ? bitsOf(bitmap).filter((slot) => slot < slots) : [];
        expect(found, `value ${value} after ${distinct} distinct`).toEqual(expected);
      }
    }
  });

  it('counts a multi-valued column by its matches’ codes exactly as by its rows, past 255 values and 4 a slot', () => {
    const rng = seededRandom('value-index-multi-codes');
    const slots = 5_000;
    const words = Math.ceil(slots / 32);
    let index = new ValueIndex<number>(true);
    const held: number[][] = Array.from({ length: slots }, () => []);
    const put = (slot: number, distinct: number) => {
      const values = Array.from({ length: rng.chance(0.2) ? rng.int(5, 9) : rng.int(0, 3) }, () => rng.int(0, distinct - 1));
      held[slot] = [...new Set(values)];
      index.set(slot, values);
    };
    const check = (label: string) => {
      for (const density of [0.002, 0.02, 1]) {
        const { given } = randomRowSet(rng, slots, density);
        const matches = new Uint32Array(words);
        for (const slot of given) matches[slot >>> 5] |= 1 << (slot & 31);
        const expected = new Map<number, number>();
        for (const slot of given) for (const value of held[slot]) expected.set(value, (expected.get(value) ?? 0) + 1);
        const counts = new Map(index.countAmong(matches, popcount(matches), 0, words).filter(([, count]) => count > 0));
        expect(counts, `${label} at density ${density}`).toEqual(expected);
      }
    };
    for (let slot = 0; slot < slots; slot++) put(slot, 40);
    check('40 values');
    // New values past a byte's codes while rows move.
    for (let n = 0; n < 8_000; n++) put(rng.int(0, slots - 1), 700);
    check('700 values');
    index = roundTrip(index, new ValueIndex<number>(true));
    check('from a snapshot');
    for (let n = 0; n < 3_000; n++) put(rng.int(0, slots - 1), 700);
    check('from a snapshot, then moved');
  });

  for (const multi of [false, true]) {
    it(`selects and counts exactly, values dense and sparse, through moves, trims and a snapshot (${multi ? 'multi' : 'single'}-valued)`, () => {
      const rng = seededRandom(`value-index-${multi}`);
      const slots = 40_000;
      const words = Math.ceil(slots / 32);
      // Value v is held by about 2^-v of the rows: a few dense values, a long sparse tail.
      const draw = (): number[] => {
        // Multi: now and then more values than a slot keeps codes for inline (4).
        const count = multi ? (rng.chance(0.1) ? rng.int(5, 8) : rng.int(0, 3)) : rng.chance(0.05) ? 0 : 1;
        return Array.from({ length: count }, () => Math.min(14, Math.floor(-Math.log2(rng.next() + 1e-9))));
      };
      const held: number[][] = [];
      let index = new ValueIndex<number>(multi);
      const put = (slot: number, values: number[]) => {
        held[slot] = [...new Set(values)];
        index.set(slot, multi ? values : (values[0] ?? null));
        if (!multi) held[slot] = held[slot].slice(0, 1);
      };
      for (let slot = 0; slot < slots; slot++) put(slot, draw());

      const check = (label: string) => {
        const scratch = new Uint32Array(words);
        for (let n = 0; n < 40; n++) {
          const values = Array.from({ length: rng.int(1, 3) }, () => rng.int(0, 16));
          const density = rng.pick([1, 0.3, 0.001]);
          const { rows, given } = randomRowSet(rng, slots, density);
          const from = rng.chance(0.3) ? rng.int(0, words - 1) : 0;
          const to = rng.chance(0.3) ? rng.int(from, words) : words;
          const expected = given.filter((slot) => slot >= from * 32 && slot < to * 32 && held[slot].some((v) => values.includes(v)));
          index.selectInto(rows, values, scratch, from, to);
          expect(bitsOf(rows, to).filter((slot) => slot >= from * 32), `${label}: ${values} in words ${from}..${to}`).toEqual(expected);

          const matches = new Uint32Array(words);
          for (const slot of given) matches[slot >>> 5] |= 1 << (slot & 31);
          const counts = new Map(index.countAmong(matches, popcount(matches), 0, words));
          for (let v = 0; v <= 14; v++) {
            const count = given.filter((slot) => held[slot].includes(v)).length;
            expect(counts.get(v) ?? 0, `${label}: count of ${v} at density ${density}`).toBe(count);
          }
        }
      };
      check('as loaded');
      index.trim(slots);
      check('trimmed');
      // Rare values become common and back: their rows change form while serving.
      for (let n = 0; n < 20_000; n++) put(rng.int(0, slots - 1), rng.chance(0.5) ? [12, 13] : draw());
      check('after moves');
      for (let n = 0; n < 30_000; n++) put(rng.int(0, slots - 1), draw());
      check('after moves back');
      index = roundTrip(index, new ValueIndex<number>(multi));
      check('from a snapshot');
      for (let n = 0; n < 5_000; n++) put(rng.int(0, slots - 1), draw());
      check('from a snapshot, then moved');
    });
  }
});

import { describe, expect, it } from 'vitest';
import { bitsOf } from '../src/search/primitives/bitset.js';
import { ValueIndex } from '../src/search/primitives/value-index.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';

// A slot's value code is a byte while the column has few values and widens as values appear:
// moving slots between values must stay exact across each widening.

describe('the value bitmaps', () => {
  it('keeps every slot in exactly its value’s bitmap as the codes widen past 255 and 65,535 values', () => {
    const rng = seededRandom('value-index');
    const index = new ValueIndex<number>();
    const slots = 2_000;
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
        const bitmap = index.bitmap(value);
        const found = bitmap ? bitsOf(bitmap).filter((slot) => slot < slots) : [];
        expect(found, `value ${value} after ${distinct} distinct`).toEqual(expected);
      }
    }
  });
});

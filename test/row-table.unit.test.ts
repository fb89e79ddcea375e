import { describe, expect, it } from 'vitest';
import { RowTable } from '../src/search/primitives/row-table.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { roundTrip } from './support/snapshot-round-trip.js';

// A row table finds a slot by key with no hash kept per slot: a probe compares the key itself,
// and growing the table hashes every slot's key again. Keys made of more than the id (a creator's
// platform and id) are told by the owner's functions.

describe('the row table', () => {
  it('finds every key through many growths, and no key it was never given', () => {
    const rng = seededRandom('row-table');
    const table = new RowTable();
    const slotOf = new Map<string, number>();
    const keys: string[] = [];
    for (let n = 0; n < 60_000; n++) {
      // Shared prefixes and equal lengths, as generated ids have; some keys come again.
      const key = rng.chance(0.1) && keys.length > 0 ? keys[rng.int(0, keys.length - 1)] : `sv${String(rng.int(0, 1e9)).padStart(9, '0')}`;
      const slot = table.slotFor(key, key, () => {});
      if (slotOf.has(key)) expect(slot).toBe(slotOf.get(key));
      else {
        slotOf.set(key, slot);
        keys.push(key);
      }
    }
    expect(table.size).toBe(slotOf.size);
    const check = (t: RowTable, label: string) => {
      for (const [key, slot] of slotOf) if (t.slotOf(key) !== slot) throw new Error(`${label}: ${key} not at ${slot}`);
      for (let n = 0; n < 2_000; n++) expect(t.slotOf(`sx${String(n).padStart(9, '0')}`), label).toBe(-1);
      expect(t.slotOf(''), label).toBe(-1);
    };
    check(table, 'built');
    check(roundTrip(table, new RowTable()), 'from a snapshot');
    // Trimmed after a load: 70 % full, a capacity that is no power of two; rows still arrive after.
    table.trim();
    const trimmed = Math.ceil(table.size / 0.7);
    expect(table.places).toBe(trimmed);
    check(table, 'trimmed');
    const loaded = roundTrip(table, new RowTable());
    check(loaded, 'trimmed, from a snapshot');
    for (const t of [table, loaded]) {
      for (let n = 0; n < 20_000; n++) {
        const key = `sy${String(n).padStart(9, '0')}`;
        expect(t.slotFor(key, key, () => {})).toBe(slotOf.size + n);
      }
    }
    for (let n = 0; n < 20_000; n++) slotOf.set(`sy${String(n).padStart(9, '0')}`, slotOf.size);
    check(table, 'grown after the trim');
    check(loaded, 'grown after the trim, from a snapshot');
    expect([table.places, loaded.places]).toEqual([2 * trimmed, 2 * trimmed]);
  });

  it('tells apart keys that share an id (a creator on two platforms), across growth and a snapshot', () => {
    const platformOf: string[] = [];
    const make = () => {
      const table: RowTable = new RowTable(
        (slot) => `${platformOf[slot]}\u0000${table.ids.get(slot)}`,
        (slot, key) => key === `${platformOf[slot]}\u0000${table.ids.get(slot)}`,
      );
      return table;
    };
    const table = make();
    for (let n = 0; n < 5_000; n++) {
      for (const platform of ['twitter', 'instagram']) {
        table.slotFor(`${platform}\u0000${n}`, String(n), (slot) => (platformOf[slot] = platform));
      }
    }
    const expectAll = (t: RowTable) => {
      for (let n = 0; n < 5_000; n += 7) {
        const twitter = t.slotOf(`twitter\u0000${n}`);
        const instagram = t.slotOf(`instagram\u0000${n}`);
        expect(twitter).not.toBe(instagram);
        expect([platformOf[twitter], t.ids.get(twitter), platformOf[instagram], t.ids.get(instagram)]).toEqual(['twitter', String(n), 'instagram', String(n)]);
      }
      expect(t.slotOf('youtube\u00001')).toBe(-1);
    };
    expectAll(table);
    expectAll(roundTrip(table, make()));
  });
});

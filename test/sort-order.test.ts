import { describe, expect, it } from 'vitest';
import { RowTable } from '../src/search/primitives/row-table.js';
import { SortOrder } from '../src/search/primitives/sort-order.js';
import { compareUtf8 } from '../src/search/primitives/string-store.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { randomRowSet } from './support/random-searches.js';

// A sort order is a sorted snapshot plus the slots changed since; compacting merges the two into
// arrays of the exact size with keys in their final type. Before and after, with rows changed,
// removed and added, and keys that stop (or start) fitting in 4 bytes, it must list the alive
// rows as a plain sort by (key DESC, id DESC) does, by both ways of reading it.

describe('a sort order', () => {
  for (const kind of ['whole numbers', 'decimals']) {
    it(`lists the rows in order through changes and compactions (${kind})`, () => {
      const rng = seededRandom(`sort-order-${kind}`);
      const table = new RowTable();
      const keyOf: number[] = [];
      const order = new SortOrder(table, (slot) => keyOf[slot]);
      const draw = () => (kind === 'decimals' || rng.chance(0.01) ? rng.int(0, 1e6) + 0.5 : rng.int(0, 1_000)) * (rng.chance(0.001) ? 1e7 : 1);
      const add = (n: number) => {
        const id = `id${String(n).padStart(6, '0')}`;
        const slot = table.slotFor(id, id, () => {});
        keyOf[slot] = draw();
        table.markAlive(slot, true);
        if (order.built) order.touch(slot);
      };
      for (let n = 0; n < 8_000; n++) add(n);
      order.rebuild();
      const check = (label: string) => {
        const expected = [...Array(table.size).keys()]
          .filter((slot) => table.alive.has(slot))
          .sort((a, b) => (keyOf[a] !== keyOf[b] ? keyOf[b] - keyOf[a] : -compareUtf8(table.ids.get(a), table.ids.get(b))));
        for (const strategy of ['walk', 'ranked'] as const) {
          const { rows } = randomRowSet(rng, table.size, 1);
          const listed = order.select(rows, table.aliveCount, { from: null, until: null, backward: false, skip: 0, take: table.size, strategy });
          expect(listed.length, `${label}, ${strategy}`).toBe(expected.length);
          expect(listed.every((slot, i) => slot === expected[i]), `${label}, ${strategy}`).toBe(true);
        }
      };
      check('built');
      for (let round = 0; round < 3; round++) {
        for (let n = 0; n < 3_000; n++) {
          const slot = rng.int(0, table.size - 1);
          if (rng.chance(0.2)) table.markAlive(slot, !table.alive.has(slot));
          else keyOf[slot] = draw();
          order.touch(slot);
        }
        for (let n = 0; n < 500; n++) add(8_000 + round * 500 + n);
        check(`round ${round}, changes pending`);
        order.compact();
        check(`round ${round}, compacted`);
      }
    });
  }
});

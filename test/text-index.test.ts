import { describe, expect, it } from 'vitest';
import { popcount } from '../src/search/primitives/bitset.js';
import { TextIndex } from '../src/search/primitives/text-index.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';

// The substring index reaches rows three ways (slots grouped by text, the slots changed since the
// grouping, a scan of every slot) and regroups once enough rows changed: whichever it takes, the
// rows must be exactly those whose text contains the query, as `includes` says.

const WORDS = ['tech', 'food', 'travel', 'emma', 'lucas', 'review', 'guide', 'best', 'ab', 'abc', 'xyz'];

describe('the substring index', () => {
  it('finds exactly the rows containing the query through loads, updates, deletes and regroupings', () => {
    const rng = seededRandom('text-index');
    const slots = 5_000;
    const words = Math.ceil(slots / 32);
    const texts: (string | null)[] = new Array(slots).fill(null);
    const randomText = () => (rng.chance(0.05) ? null : `${rng.pick(WORDS)} ${rng.pick(WORDS)}${rng.int(0, 60)}`);
    const index = new TextIndex();
    const write = (slot: number, text: string | null) => {
      texts[slot] = text;
      index.set(slot, text);
    };
    for (let slot = 0; slot < slots; slot++) write(slot, randomText());
    const check = (label: string) => {
      for (const query of ['tech', 'ab', 'abc', 'xyz1', 'view', 'a', 'e', ' ', 'emma lucas', 'zzz', 'best5']) {
        const expected = texts.map((text, slot) => (text !== null && text.includes(query) ? slot : -1)).filter((slot) => slot !== -1);
        const bits = index.rowsMatching(query, words);
        const found: number[] = [];
        for (let slot = 0; slot < slots; slot++) if ((bits[slot >>> 5] & (1 << (slot & 31))) !== 0) found.push(slot);
        expect(found, `${label}: ${query}`).toEqual(expected);
        expect(popcount(bits, words)).toBe(expected.length);
      }
    };
    check('before grouping (every slot is a change)');
    index.trim();
    check('grouped');
    // Rounds of writes: a few (the change list), then many (past the regrouping threshold).
    for (const [round, writes] of [[1, 20], [2, 300], [3, 2_500], [4, 10]] as const) {
      for (let i = 0; i < writes; i++) write(rng.int(0, slots - 1), randomText());
      check(`after round ${round} of writes`);
    }
  });
});

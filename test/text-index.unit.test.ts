import { describe, expect, it } from 'vitest';
import { popcount } from '../src/search/primitives/bitset.js';
import { TextIndex } from '../src/search/primitives/text-index.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { roundTrip } from './support/snapshot-round-trip.js';

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

  it('keeps finding exactly the right rows once its texts pass 65,535 (entries widen from 2 bytes to 4), and through a snapshot', () => {
    const rng = seededRandom('text-index-wide');
    const slots = 90_000;
    const words = Math.ceil(slots / 32);
    const texts: (string | null)[] = new Array(slots).fill(null);
    const index = new TextIndex();
    const write = (slot: number, text: string | null) => {
      texts[slot] = text;
      index.set(slot, text);
    };
    // A few shared texts first (2-byte entries), grouped; then a text per slot, past 65,535 of them.
    for (let slot = 0; slot < 30_000; slot++) write(slot, rng.chance(0.1) ? null : `${rng.pick(WORDS)} ${rng.int(0, 50)}`);
    index.trim();
    for (let slot = 30_000; slot < slots; slot++) write(slot, `user${slot}`);
    for (let slot = 0; slot < 40_000; slot += 7) write(slot, `user${slot + 100_000}`);
    const check = (label: string, target: TextIndex) => {
      for (const query of ['user6999', 'user10', 'tech', 'ab 4', 'u', '99']) {
        const bits = target.rowsMatching(query, words);
        const found: number[] = [];
        for (let slot = 0; slot < slots; slot++) if ((bits[slot >>> 5] & (1 << (slot & 31))) !== 0) found.push(slot);
        expect(found, `${label}: ${query}`).toEqual(texts.flatMap((text, slot) => (text !== null && text.includes(query) ? [slot] : [])));
      }
      let highest = -1;
      for (let slot = 0; slot < slots; slot++) highest = Math.max(highest, target.entryOf(slot));
      expect([target.entryOf(0), highest > 0xffff, target.entryOf(slots + 5)]).toEqual([index.entryOf(0), true, -1]);
    };
    check('past 65,535 texts', index);
    index.trim();
    check('regrouped', index);
    check('from a snapshot', roundTrip(index, new TextIndex()));
  });

  it('reads groups of every distance width (1 to 4 bytes, each at its edges), grouped and through a snapshot', () => {
    // Each text's rows, chosen so its widest distance sits at an edge of a width: 255 and 256, 65,535
    // and 65,536, 16,777,215 and 16,777,216; a group of one row far out; the first slot anywhere;
    // groups whose widest distance is kept apart in 4 bytes after a 0.
    const groups: Record<string, number[]> = {
      'width one': [0, 1, 2, 257],
      'width two low': [3, 259],
      'width two high': [4, 65_539],
      'width three low': [5, 65_541, 65_542],
      'width three high': [6, 16_777_221],
      'width four': [7, 16_777_223, 20_000_000],
      'alone far out': [19_999_999],
      // Cheapest in 1 byte a distance, and in 2, with distances of 256 and 65,536 (and 5 million) kept apart.
      'escaped small': [...Array.from({ length: 20 }, (_, i) => 300 + i), 319 + 256, 5_000_000],
      'escaped wider': [...Array.from({ length: 10 }, (_, i) => 400 + 300 * i), 3_100 + 65_536, 3_100 + 65_536 + 300],
    };
    const size = 20_000_001;
    const words = Math.ceil(size / 32);
    const index = new TextIndex();
    for (const [text, slots] of Object.entries(groups)) for (const slot of slots) index.set(slot, text);
    index.trim();
    const found = (from: TextIndex, query: string) => {
      const bits = from.rowsMatching(query, words);
      const out: number[] = [];
      for (let w = 0; w < words; w++) for (let b = 0; b < 32; b++) if ((bits[w] & (1 << b)) !== 0) out.push(w * 32 + b);
      return out;
    };
    const back = roundTrip(index, new TextIndex());
    for (const from of [index, back]) {
      for (const [text, slots] of Object.entries(groups)) expect(found(from, text), text).toEqual(slots);
      expect(found(from, 'two')).toEqual([3, 4, 259, 65_539]);
      // Every text but one: six groups into one bitset.
      expect(found(from, 'i')).toEqual(Object.entries(groups).filter(([text]) => text.includes('i')).flatMap(([, slots]) => slots).sort((a, b) => a - b));
    }
  });

  it('answers a three-character query from its trigram, and tests a longer one where every trigram is but the query is not', () => {
    const index = new TextIndex();
    // Entries in order; "abcxbcd" holds both trigrams of "abcd" apart, "bcdabc" every one of "bcdab"'s.
    const texts = ['abcxbcd', 'abcd', 'bcdabc', 'xabcdx', 'cdab', 'bcd'];
    // Thousands of texts with one trigram of the queries (a long posting) and a few with the rare one.
    for (let i = 0; i < 3_000; i++) texts.push(`bc${i}`, i % 500 === 0 ? `zab${i}` : `q${i}`);
    texts.forEach((text, slot) => index.set(slot, text));
    const expected = (query: string) => texts.flatMap((text, entry) => (text.includes(query) ? [entry] : []));
    for (const query of ['abcd', 'bcd', 'bcda', 'bcdab', 'dab', 'cdab', 'zab1', 'zab', 'bc1000', 'bc29', 'abc', 'xbcd', 'q', 'bc'])
      expect(Array.from(index.matchingEntries(query)), query).toEqual(expected(query));
  });

  it('holds at most its budget of matching entries over all queries, and extends a kept result as texts arrive', () => {
    const slots = 3_000;
    const words = Math.ceil(slots / 32);
    const texts: string[] = [];
    const index = new TextIndex(1_000);
    for (let slot = 0; slot < 2_000; slot++) index.set(slot, (texts[slot] = `user${slot}`));
    const expectMatches = (query: string) => {
      const bits = index.rowsMatching(query, words);
      const found: number[] = [];
      for (let slot = 0; slot < slots; slot++) if ((bits[slot >>> 5] & (1 << (slot & 31))) !== 0) found.push(slot);
      expect(found, query).toEqual(texts.flatMap((text, slot) => (text.includes(query) ? [slot] : [])));
    };
    // 'user' matches all 2,000 texts: over the budget, kept alone as the newest.
    expectMatches('user');
    expect(index.matchedEntriesHeld).toBe(2_000);
    // Each 'userN' matches 111 texts: the older queries leave as the newer ones come.
    for (let digit = 1; digit <= 9; digit++) expectMatches(`user${digit}`);
    expect(index.matchedEntriesHeld).toBeLessThanOrEqual(1_000);
    expect(index.matchedEntriesHeld).toBeGreaterThan(800);
    // New texts extend a kept result (and one evicted is found afresh).
    for (let slot = 2_000; slot < slots; slot++) index.set(slot, (texts[slot] = `user${slot}`));
    for (const query of ['user9', 'user1', 'user', '2999']) expectMatches(query);
  });

  it('tests a slot against a query only while its matches are marked, and leaves no mark behind', () => {
    const rng = seededRandom('text-index-marks');
    const slots = 2_000;
    const words = Math.ceil(slots / 32);
    const texts = Array.from({ length: slots }, () => (rng.chance(0.1) ? null : `${rng.pick(WORDS)} ${rng.pick(WORDS)}`));
    const index = new TextIndex();
    texts.forEach((text, slot) => index.set(slot, text));
    index.trim();
    const contains = (query: string) => texts.flatMap((text, slot) => (text !== null && text.includes(query) ? [slot] : []));
    for (const query of ['tech', 'ab', 'view g', 'zzz']) {
      const tested = index.whileMatching(query, (holds, marked) => {
        // A slot past every slot, and the code of no text, are never marked.
        expect([holds(slots + 10), marked[0]], query).toEqual([false, 0]);
        // Searching the index meanwhile would clear the marks under the test.
        expect(() => index.rowsMatching('best', words)).toThrow();
        return Array.from({ length: slots }, (_, slot) => slot).filter(holds);
      });
      expect(tested, query).toEqual(contains(query));
      // No mark left: the scratch serves the next search (a scan and the groups) unchanged.
      for (const next of ['e', 'lucas']) {
        const bits = index.rowsMatching(next, words);
        expect(contains(next).every((slot) => (bits[slot >>> 5] & (1 << (slot & 31))) !== 0) && popcount(bits, words) === contains(next).length, `${query}, then ${next}`).toBe(true);
      }
    }
  });

  it('keeps at most 1,000 queries, however many distinct queries match nothing', () => {
    const index = new TextIndex();
    for (let slot = 0; slot < 100; slot++) index.set(slot, `user${slot}`);
    for (let query = 0; query < 5_000; query++) expect(index.matchingEntries(`zz${query}`)).toHaveLength(0);
    expect(index.matchedEntriesHeld).toBe(0);
    expect(index.matchedQueriesHeld).toBe(1_000);
    expect(Array.from(index.matchingEntries('user9'))).toHaveLength(11);
    expect(index.matchedQueriesHeld).toBe(1_000);
  });
});

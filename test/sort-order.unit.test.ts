import { describe, expect, it } from 'vitest';
import { bucketOf } from '../src/domain/facets.js';
import { popcount } from '../src/search/primitives/bitset.js';
import { RangeIndex } from '../src/search/primitives/range-index.js';
import { RowTable } from '../src/search/primitives/row-table.js';
import { type CodeRanks, type RunRanks, SortOrder } from '../src/search/primitives/sort-order.js';
import { compareUtf8 } from '../src/search/primitives/string-store.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { randomRowSet } from './support/random-searches.js';

// A sort order is a sorted snapshot of slots plus the slots changed since (told before each
// change); compacting merges the two into an array of the exact size. It reads keys from the column, so a changed slot's key is
// no longer where the snapshot put it: searches that land on one must step past it. Before and
// after, with rows changed, removed and added, it must list the alive rows as a plain sort by
// (key DESC, id DESC) does, by both ways of reading it.

/** An order over `rows` alive rows, row n keyed `keyFor(n)` and given slot n, built. */
function builtOrder(rows: number, keyFor: (n: number) => number) {
  const table = new RowTable();
  const keyOf: number[] = [];
  const order = new SortOrder(table, (slot) => keyOf[slot]);
  for (let n = 0; n < rows; n++) {
    const id = `id${String(n).padStart(6, '0')}`;
    const slot = table.slotFor(id, id, () => {});
    keyOf[slot] = keyFor(n);
    table.markAlive(slot, true);
  }
  order.rebuild();
  return { table, keyOf, order };
}

/** An order over `rows` alive rows with whole-number keys up to `maxKey`, built. */
function randomOrder(seed: string, rows: number, maxKey: number) {
  const rng = seededRandom(seed);
  return { rng, ...builtOrder(rows, () => rng.int(0, maxKey)) };
}

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
        // Told before the change, as the indexes tell it.
        if (order.built) order.touch(slot);
        keyOf[slot] = draw();
        table.markAlive(slot, true);
      };
      for (let n = 0; n < 8_000; n++) add(n);
      order.rebuild();
      const check = (label: string) => {
        const expected = [...Array(table.size).keys()]
          .filter((slot) => table.alive.has(slot))
          .sort((a, b) => (keyOf[a] !== keyOf[b] ? keyOf[b] - keyOf[a] : -compareUtf8(table.ids.get(a), table.ids.get(b))));
        for (const strategy of ['walk', 'heap'] as const) {
          const { rows } = randomRowSet(rng, table.size, 1);
          const listed = order.select(rows, table.aliveCount, { from: null, until: null, backward: false, skip: 0, take: table.size, strategy });
          expect(listed.length, `${label}, ${strategy}`).toBe(expected.length);
          expect(listed.every((slot, i) => slot === expected[i]), `${label}, ${strategy}`).toBe(true);
        }
        for (let trial = 0; trial < 40; trial++) {
          const low = rng.chance(0.1) ? -1 : draw();
          const high = low + rng.pick([0, 1, 100, 10_000, 1e9]);
          const toExclusive = rng.chance(0.5);
          const inRange = expected.filter((slot) => keyOf[slot] >= low && (toExclusive ? keyOf[slot] < high : keyOf[slot] <= high)).length;
          expect(order.countKeyRange(low, high, toExclusive), `${label}: count in [${low}, ${high}${toExclusive ? ')' : ']'}`).toBe(inRange);
        }
        // A histogram read from the order: each match (alive, as a search's are) in the bucket of its current key.
        for (let trial = 0; trial < 10; trial++) {
          const share = rng.pick([0.01, 0.3, 1]);
          const bits = new Uint32Array(Math.ceil(table.size / 32));
          for (const slot of expected) if (rng.chance(share)) bits[slot >>> 5] |= 1 << (slot & 31);
          const thresholds = Float64Array.from(new Set(Array.from({ length: rng.int(1, 50) }, draw))).sort();
          const counts = new Float64Array(thresholds.length + 1);
          order.addHistogramIn(bits, thresholds, counts, popcount(bits));
          const wanted = new Float64Array(thresholds.length + 1);
          for (const slot of expected) if (bits[slot >>> 5] & (1 << (slot & 31))) wanted[bucketOf(thresholds, keyOf[slot])]++;
          expect([...counts], `${label}: histogram over ${thresholds.length} edges`).toEqual([...wanted]);
        }
      };
      /** Counts within random key ranges, from ranks and without, against the alive rows `held` keeps. */
      const expectRangeCounts = (context: string, alive: number[], held: (slot: number) => boolean, count: (low: number, high: number, toExclusive: boolean, ranked: boolean) => number) => {
        for (let trial = 0; trial < 20; trial++) {
          const low = rng.chance(0.1) ? -Infinity : draw();
          const high = rng.chance(0.1) ? Infinity : low + rng.pick([0, 1, 100, 10_000, 1e9]);
          const toExclusive = rng.chance(0.5);
          const wanted = alive.filter((slot) => held(slot) && keyOf[slot] >= low && (toExclusive ? keyOf[slot] < high : keyOf[slot] <= high)).length;
          const at = `${context}: count in [${low}, ${high}${toExclusive ? ')' : ']'}`;
          expect(count(low, high, toExclusive, true), at).toBe(wanted);
          expect(count(low, high, toExclusive, false), at).toBe(wanted);
        }
      };
      // Counts of a bitset's rows within key ranges, from the bits' ranks along the snapshot, and
      // of a single-valued column's codes (0: none; every value ranked at once, any set of values
      // counted from them; a slot past the codes, added since, has none): as read row by row,
      // whatever changed since the sort; ranks of a merged snapshot are ignored.
      let staleRanks: { bits: Uint32Array; ranks: RunRanks } | null = null;
      let staleCodeRanks: { codeOf: Uint8Array; ranks: CodeRanks } | null = null;
      const checkRanks = (label: string) => {
        const alive = [...Array(table.size).keys()].filter((slot) => table.alive.has(slot));
        const share = rng.pick([0.01, 0.3, 1]);
        const bits = new Uint32Array(Math.ceil(table.size / 32));
        for (const slot of alive) if (rng.chance(share)) bits[slot >>> 5] |= 1 << (slot & 31);
        const codeOf = new Uint8Array(table.size);
        for (const slot of alive) codeOf[slot] = rng.int(0, 4);
        const fresh = { bits, ranks: order.rank(bits) };
        const freshCodes = { codeOf, ranks: order.rankCodes(codeOf, 5) };
        for (const [which, set, codes] of [['fresh', fresh, freshCodes], ['stale', staleRanks, staleCodeRanks]] as const) {
          if (!set || !codes) continue;
          expect([order.ranksCurrent(set.ranks), order.ranksCurrent(codes.ranks)], `${label}, ${which}`).toEqual([which === 'fresh', which === 'fresh']);
          const held = (slot: number) => (set.bits[slot >>> 5] & (1 << (slot & 31))) !== 0;
          expectRangeCounts(`${label}, ${which} ranks`, alive, held, (low, high, toExclusive, ranked) =>
            order.countKeyRangeIn(set.bits, low, high, toExclusive, ranked ? set.ranks : undefined),
          );
          for (let subset = 0; subset < 3; subset++) {
            const wanted = Uint8Array.from({ length: 5 }, (_, code) => (code > 0 && rng.chance(0.4) ? 1 : 0));
            expectRangeCounts(`${label}, ${which} code ranks of [${wanted}]`, alive, (slot) => wanted[codes.codeOf[slot] ?? 0] === 1, (low, high, toExclusive, ranked) =>
              order.countKeyRangeOfCodes(codes.codeOf, wanted, low, high, toExclusive, ranked ? codes.ranks : undefined),
            );
          }
        }
        staleRanks = fresh;
        staleCodeRanks = freshCodes;
      };
      check('built');
      checkRanks('built');
      for (let round = 0; round < 3; round++) {
        // The last round changes more slots than the order holds changed before it merges them.
        for (let n = 0; n < (round === 2 ? 7_000 : 3_000); n++) {
          const slot = rng.int(0, table.size - 1);
          order.touch(slot);
          if (rng.chance(0.2)) table.markAlive(slot, !table.alive.has(slot));
          else keyOf[slot] = draw();
        }
        for (let n = 0; n < 500; n++) add(8_000 + round * 500 + n);
        check(`round ${round}, changes pending`);
        staleRanks = null;
        staleCodeRanks = null;
        checkRanks(`round ${round}, changes pending`);
        order.compact();
        check(`round ${round}, compacted`);
        checkRanks(`round ${round}, compacted`);
      }
    });
  }

  it('starts from a position, stops at another and marks a key range exactly while runs of its snapshot changed keys (binary searches land on them)', () => {
    const { rng, table, keyOf, order } = randomOrder('sort-order-bounds', 6_000, 3_000);
    const sorted = () =>
      [...Array(table.size).keys()]
        .filter((slot) => table.alive.has(slot))
        .sort((a, b) => (keyOf[a] !== keyOf[b] ? keyOf[b] - keyOf[a] : -compareUtf8(table.ids.get(a), table.ids.get(b))));
    // Runs of consecutive rows of the snapshot change keys, to values far off their place (what a
    // search reading their current keys as sorted would trip on), and a few rows go.
    const before = sorted();
    for (const [start, length] of [[0, 40], [1_500, 900], [2_990, 20], [5_900, 100]]) {
      for (const slot of before.slice(start, start + length)) {
        order.touch(slot);
        keyOf[slot] = rng.chance(0.5) ? rng.int(0, 3_000) : rng.pick([-1, 1e9, 1_500]);
      }
    }
    for (let n = 0; n < 30; n++) {
      const slot = rng.pick(before);
      order.touch(slot);
      table.markAlive(slot, false);
    }
    const expected = sorted();
    const all = new Uint32Array(Math.ceil(table.size / 32)).fill(0xffffffff);
    for (let trial = 0; trial < 60; trial++) {
      // A bound at a row's position, or between keys, or past either end.
      const at = rng.int(0, expected.length - 1);
      const from = rng.chance(0.5) ? order.positionOf(expected[at]) : { key: rng.pick([rng.int(-5, 3_005), 1e9, -1]), id: `id${String(rng.int(0, 6_000)).padStart(6, '0')}` };
      for (const backward of [false, true]) {
        const wanted = expected.filter((slot) => order.comparePosition(slot, from) * (backward ? -1 : 1) > 0);
        if (backward) wanted.reverse();
        for (const strategy of ['walk', 'heap'] as const) {
          const listed = order.select(all, table.aliveCount, { from, until: null, backward, skip: 0, take: 25, strategy });
          expect(listed, `trial ${trial}, ${backward ? 'backward' : 'forward'}, ${strategy}`).toEqual(wanted.slice(0, 25));
        }
      }
      // And up to a second position, left out itself (a bound's): every row between the two.
      const until = rng.chance(0.5)
        ? order.positionOf(expected[rng.int(0, expected.length - 1)])
        : { key: rng.pick([rng.int(-5, 3_005), 1e9, -1]), id: `id${String(rng.int(0, 6_000)).padStart(6, '0')}` };
      for (const backward of [false, true]) {
        const step = backward ? -1 : 1;
        const wanted = expected.filter((slot) => order.comparePosition(slot, from) * step > 0 && order.comparePosition(slot, until) * step < 0);
        if (backward) wanted.reverse();
        for (const strategy of ['walk', 'heap'] as const) {
          const listed = order.select(all, table.aliveCount, { from, until, backward, skip: 0, take: table.size, strategy });
          expect(listed, `trial ${trial}, ${backward ? 'backward' : 'forward'} until a position, ${strategy}`).toEqual(wanted);
        }
      }
      const low = rng.int(-2, 3_002);
      const high = low + rng.pick([0, 1, 10, 400, 2e9]);
      for (const toExclusive of [false, true]) {
        const bits = new Uint32Array(all.length);
        order.markKeyRange(bits, low, high, toExclusive);
        const marked = [...Array(table.size).keys()].filter((slot) => (bits[slot >>> 5] & (1 << (slot & 31))) !== 0);
        const inRange = expected.filter((slot) => keyOf[slot] >= low && (toExclusive ? keyOf[slot] < high : keyOf[slot] <= high)).sort((a, b) => a - b);
        expect(marked, `trial ${trial}: [${low}, ${high}${toExclusive ? ')' : ']'}`).toEqual(inRange);
        expect(order.countKeyRange(low, high, toExclusive), `trial ${trial}: count in [${low}, ${high}${toExclusive ? ')' : ']'}`).toBe(inRange.length);
      }
    }
  });

  // Where the slots follow the keys (videos take slots in date order), a key range's rows are set
  // a run of consecutive slots at a time: the changed slots inside a run must keep the bit they had
  // (the range's or another's) and get their own by their current key, through compactions too.
  it('marks a key range by its runs of consecutive slots where the slots follow the keys, exact through changes', () => {
    const rng = seededRandom('sort-order-runs');
    const table = new RowTable();
    const keyOf: number[] = [];
    const order = new SortOrder(table, (slot) => keyOf[slot]);
    const add = (n: number, key: number) => {
      const id = `id${String(n).padStart(6, '0')}`;
      const slot = table.slotFor(id, id, () => {});
      if (order.built) order.touch(slot);
      keyOf[slot] = key;
      table.markAlive(slot, true);
    };
    // Three rows a key, the ids rising with the slots: the order (key, then id, descending) is every slot downwards.
    for (let n = 0; n < 20_000; n++) add(n, Math.floor(n / 3));
    order.rebuild();
    expect(order.runs).toBe(1);
    const check = (label: string) => {
      const alive = [...Array(table.size).keys()].filter((slot) => table.alive.has(slot));
      for (let trial = 0; trial < 40; trial++) {
        const low = rng.int(-10, 7_400);
        const high = low + rng.pick([0, 1, 50, 700, 3_000, 1e9]);
        const toExclusive = rng.chance(0.5);
        // Bits already set, as the other edge's rows are: kept whatever the range says.
        const { rows: before, given } = randomRowSet(rng, table.size, 0.01);
        const bits = before.slice();
        order.markKeyRange(bits, low, high, toExclusive);
        const inRange = alive.filter((slot) => keyOf[slot] >= low && (toExclusive ? keyOf[slot] < high : keyOf[slot] <= high));
        const expected = [...new Set([...given, ...inRange])].sort((a, b) => a - b);
        const marked = [...Array(bits.length * 32).keys()].filter((slot) => (bits[slot >>> 5] & (1 << (slot & 31))) !== 0);
        expect(marked, `${label}, trial ${trial}: [${low}, ${high}${toExclusive ? ')' : ']'}`).toEqual(expected);
      }
    };
    check('one run');
    for (let round = 0; round < 3; round++) {
      // Keys moved near and far, rows removed, rows added past the end with new keys: few enough
      // that the runs stay long (a moved or removed slot splits one or two).
      for (let n = 0; n < 30; n++) {
        const slot = rng.int(0, table.size - 1);
        order.touch(slot);
        if (rng.chance(0.2)) table.markAlive(slot, false);
        else keyOf[slot] = rng.chance(0.5) ? keyOf[slot] + rng.int(-5, 5) : rng.int(0, 7_000);
      }
      // New rows, the newest, as new videos come: a run of their own.
      for (let n = 0; n < 100; n++) add(20_000 + round * 100 + n, 7_000 + round * 100 + n);
      check(`round ${round}, changed`);
      order.compact();
      expect(order.runs).toBeGreaterThan(1);
      check(`round ${round}, compacted`);
    }
    // Keys in no relation to the slots: no runs kept, the rows marked one by one.
    for (let slot = 0; slot < table.size; slot++) {
      order.touch(slot);
      keyOf[slot] = rng.int(0, 7_000);
    }
    order.compact();
    expect(order.runs).toBeNull();
    check('no runs');
  });

  // A video search's matches lie in its date window's words, and the heap is given that window:
  // it must read those words only (a row outside is never returned) and find what a full pass finds.
  it('reads only the words of the window it is given, with the page a full pass finds', () => {
    const { rng, order } = randomOrder('sort-order-window', 20_000, 5_000);
    for (let trial = 0; trial < 20; trial++) {
      const from = rng.int(0, 600);
      const to = from + rng.int(1, 20);
      const bits = new Uint32Array(Math.ceil(20_000 / 32));
      let count = 0;
      for (let w = from; w < to; w++) {
        bits[w] = rng.int(0, 0xffffffff) >>> 0;
        count += popcount(bits, w + 1, w);
      }
      const walk = { from: null, until: null, backward: rng.chance(0.5), skip: rng.int(0, 5), take: 20, strategy: 'heap' as const };
      const whole = order.select(bits, count, walk);
      expect(order.select(bits, count, walk, count, { from, to }), `words [${from}, ${to})`).toEqual(whole);
      // A row outside the window given is not read: the window, not the bits, bounds the pass.
      const keys: number[] = [];
      order.select(bits, count, { ...walk, visit: (key) => void keys.push(key) }, count, { from, to: from + 1 });
      expect(keys.length).toBe(popcount(bits, from + 1, from));
    }
  });

  // The choice between walking and the heap takes the matches as spread evenly along the order.
  // Where they gather at its far end (creators with a high engagement rate have few followers),
  // a walk from the top would read nearly every row; past as many rows as the heap would read
  // matches, it gives way to the heap, with the same answer.
  it('gives way to the heap when the matches gather at the far end of the order, with the same page', () => {
    const rows = 40_000;
    const { keyOf, order } = builtOrder(rows, (n) => n);
    // 1,000 matches, the lowest keys: by the even-spread estimate a page of 21 is ~840 rows away.
    const bits = new Uint32Array(Math.ceil(rows / 32));
    for (let slot = 0; slot < 1_000; slot++) bits[slot >>> 5] |= 1 << (slot & 31);
    // A row changed since the sort sits among them, merged from the changed list.
    order.touch(500);
    keyOf[500] = 500.5;
    for (const backward of [false, true]) {
      const read: number[] = [];
      const walk = { from: null, until: null, backward, skip: 3, take: 21 };
      const listed = order.select(bits, 1_000, { ...walk, visit: (key: number) => read.push(key) });
      expect(listed, backward ? 'backward' : 'forward').toEqual(order.select(bits, 1_000, { ...walk, strategy: 'heap' }));
      expect(listed, backward ? 'backward' : 'forward').toEqual(order.select(bits, 1_000, { ...walk, strategy: 'walk' }));
      // Backward the matches are where the walk starts: it reads its page and no more.
      expect(read.length, `rows read ${backward ? 'backward' : 'forward'}`).toBeLessThanOrEqual(backward ? 25 : 2_001 + 1_000);
    }
  });

  // With many matches the heap's budget is large: a walk that finds none in its first thousand rows
  // reads a share of the order the even spread never predicted, and gives way long before it.
  it('gives way to the heap early when the rows read so far hold far fewer matches than expected', () => {
    const rows = 200_000;
    const { order } = builtOrder(rows, (n) => n);
    // A quarter of the rows match, the lowest keys: by the even spread a page is ~100 rows away.
    const matches = 50_000;
    const bits = new Uint32Array(Math.ceil(rows / 32));
    for (let slot = 0; slot < matches; slot++) bits[slot >>> 5] |= 1 << (slot & 31);
    const read: number[] = [];
    const walk = { from: null, until: null, backward: false, skip: 3, take: 21 };
    const listed = order.select(bits, matches, { ...walk, visit: (key: number) => read.push(key) });
    expect(listed).toEqual(order.select(bits, matches, { ...walk, strategy: 'heap' }));
    expect(listed).toEqual(Array.from({ length: 21 }, (_, i) => matches - 4 - i));
    // The heap reads every match once; the walk before it a few thousand rows, not 50,000.
    expect(read.length).toBeLessThanOrEqual(matches + 4_096);
  });
});

// An order whose keys a range index also holds (followers, engagement, dates) ranks a page's
// matches by their bucket codes first: the heap reads the key of a match only while its code can
// still beat the last row kept. The page must be what a plain sort gives, whichever way it is read.
describe('a sort order over a range index', () => {
  // Ordered columns are NOT NULL (followers, engagement rate in cents, video dates).
  for (const integer of [true, false]) {
    it(`reads few keys for a page of many matches and lists what a plain sort lists (${integer ? 'whole numbers' : 'instants'})`, () => {
      const rng = seededRandom(`sort-order-codes-${integer}`);
      const table = new RowTable();
      const range = new RangeIndex(integer);
      const order = new SortOrder(table, (slot) => range.values.get(slot));
      range.useOrder(order);
      const draw = () => (rng.chance(0.05) ? 1_000 : Math.round(Math.exp(rng.next() * 14))) + (integer ? 0 : 1.7e12);
      const size = 20_000;
      for (let n = 0; n < size; n++) {
        const id = `id${String(n).padStart(6, '0')}`;
        const slot = table.slotFor(id, id, () => {});
        range.set(slot, draw());
        table.markAlive(slot, true);
      }
      range.rebalance(size);
      order.rebuild();
      // Changed since the sort: their codes and keys are current, their places in the snapshot stale.
      for (let n = 0; n < 300; n++) {
        const slot = rng.int(0, size - 1);
        order.touch(slot);
        range.set(slot, draw());
      }
      const sorted = [...Array(size).keys()].sort((a, b) => order.compareSlots(a, b));
      for (let trial = 0; trial < 60; trial++) {
        const share = rng.pick([0.001, 0.05, 0.5, 1]);
        const bits = new Uint32Array(Math.ceil(size / 32));
        for (let slot = 0; slot < size; slot++) if (rng.chance(share)) bits[slot >>> 5] |= 1 << (slot & 31);
        const count = popcount(bits);
        const backward = rng.chance(0.3);
        const cursor = rng.chance(0.3) ? order.positionOf(rng.int(0, size - 1)) : null;
        const walk = { from: cursor, until: null, backward, skip: rng.pick([0, 0, 7, 200]), take: rng.pick([1, 21, 101]) };
        const label = `trial ${trial}: ${count} matches, ${JSON.stringify(walk)}`;
        const direction = backward ? -1 : 1;
        const expected = (backward ? [...sorted].reverse() : sorted)
          .filter((slot) => bits[slot >>> 5] & (1 << (slot & 31)))
          .filter((slot) => cursor === null || order.comparePosition(slot, cursor) * direction > 0)
          .slice(walk.skip, walk.skip + walk.take);
        const keysRead: number[] = [];
        const byHeap = order.select(bits, count, { ...walk, strategy: 'heap', visit: (key) => keysRead.push(key) });
        expect(byHeap, label).toEqual(expected);
        expect(order.select(bits, count, { ...walk, strategy: 'walk' }), label).toEqual(expected);
        // Thousands of matches and a page of a few dozen from the top: a few hundred keys read, not every match's.
        if (count > 5_000 && cursor === null && walk.skip + walk.take <= 21) expect(keysRead.length, label).toBeLessThan(count / 5);
      }
    });
  }
});

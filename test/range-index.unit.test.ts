import { describe, expect, it } from 'vitest';
import { bitsOf } from '../src/search/primitives/bitset.js';
import { type Bounds, RangeIndex, roundedBoundaries } from '../src/search/primitives/range-index.js';
import type { Snapshotted } from '../src/search/primitives/snapshot-io.js';
import { CHUNK_BLOCKS, MAX_BITS, sliceWords } from '../src/search/primitives/word-kernel.js';
import { RowTable } from '../src/search/primitives/row-table.js';
import { type KeyCodes, SortOrder } from '../src/search/primitives/sort-order.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { randomRowSet } from './support/random-searches.js';
import { roundTrip as roundTripSnapshot } from './support/snapshot-round-trip.js';

// The range index keeps each slot's bucket bit-sliced and tests the rows of the buckets a bound
// falls inside one of three ways: by their sub-range byte (no order), read from a sort order over
// the same values (dense matches), or by value. Every way, before and after updates, rebalances,
// new slots and a snapshot round trip, must select exactly the rows a plain comparison selects.

const rng = seededRandom('range-index');
interface Fixture {
  draw(): number;
  /** Slots up to `slot` exist in the table (NULL until put). */
  reach(slot: number): void;
  index: RangeIndex;
  valueOf: number[];
  put(slot: number, value: number): void;
  order: SortOrder | null;
}

function fixture(integer: boolean, withOrder: boolean, buckets?: number): Fixture {
  const index = new RangeIndex(integer, buckets);
  const table = new RowTable();
  const valueOf: number[] = [];
  const order = withOrder ? new SortOrder(table, (slot) => index.values.get(slot)) : null;
  if (order) index.useOrder(order);
  const reach = (slot: number) => {
    while (table.size <= slot) {
      const id = `id${table.size}`;
      table.slotFor(id, id, () => {});
      table.markAlive(table.size - 1, true);
      valueOf.push(NaN);
    }
  };
  return {
    draw: () => draw(integer, !withOrder),
    reach,
    index,
    valueOf,
    order,
    put(slot, value) {
      reach(slot);
      index.set(slot, value);
      valueOf[slot] = value;
      if (order?.built) order.touch(slot);
    },
  };
}

/**
 * Whole numbers with heavy ties (0, 1,000) and NULLs, or epoch milliseconds with repeats. A column
 * with an order has no NULL (followers, engagement, a video's date are never NULL in the index).
 */
const draw = (integer: boolean, nullable = true) =>
  nullable && rng.chance(0.05) ? NaN : integer ? (rng.chance(0.15) ? 0 : rng.chance(0.05) ? 1_000 : Math.floor(Math.exp(rng.next() * 15))) : 1.6e12 + rng.int(0, 5_000) * 86_400_000;

function randomBounds(f: Fixture, integer: boolean): Bounds {
  const present = f.valueOf.filter((value) => !Number.isNaN(value));
  // Bounds at stored values (a bucket's edge or a tie) as often as between them.
  const near = () => {
    const value = present[rng.int(0, present.length - 1)] ?? 0;
    return rng.chance(0.5) ? value : integer ? value + rng.int(-2, 2) : value + rng.int(-1, 1) * 43_200_000;
  };
  const bounds: Bounds = {};
  if (rng.chance(0.7)) bounds.min = near();
  if (rng.chance(0.7)) bounds.max = near();
  if (!integer && bounds.max !== undefined && rng.chance(0.5)) bounds.maxExclusive = true;
  return bounds;
}

const within = (value: number, b: Bounds) =>
  !Number.isNaN(value) && value >= (b.min ?? -Infinity) && (b.maxExclusive ? value < b.max! : value <= (b.max ?? Infinity));

function check(f: Fixture, integer: boolean, label: string, searches = 60, sweep = false): void {
  const slots = f.valueOf.length;
  const words = Math.ceil(slots / 32);
  const scratch = new Uint32Array(words);
  for (let n = 0; n < searches; n++) {
    const bounds = randomBounds(f, integer);
    // Every row, a sparse set (a name search) or a dense one (a category): the order is read only for dense ones.
    const density = rng.pick([1, 0.6, 0.01]);
    const { rows, given } = randomRowSet(rng, slots, density);
    const from = rng.chance(0.3) ? rng.int(0, words - 1) : 0;
    const expected = given.filter((slot) => slot >= from * 32 && within(f.valueOf[slot], bounds));
    f.index.selectInto(rows, words, bounds, scratch, from);
    expect(bitsOf(rows).filter((slot) => slot >= from * 32), `${label}: ${JSON.stringify(bounds)} from word ${from}, density ${density}`).toEqual(expected);

    // The same rows counted without a bitset of the bound (a search bounded on its order's key):
    // an inclusive maximum on dates is above it by the next double, on counts by one.
    const inBounds = new Uint32Array(words);
    for (const slot of given) inBounds[slot >>> 5] |= 1 << (slot & 31);
    const inside = given.filter((slot) => within(f.valueOf[slot], bounds)).length;
    for (const count of [given.length, 0, Number.MAX_SAFE_INTEGER]) {
      expect(f.index.countWithin(inBounds, bounds, 0, words, count), `${label}: within ${JSON.stringify(bounds)} (count ${count})`).toBe(inside);
    }

    if (bounds.min !== undefined) {
      const matches = new Uint32Array(words);
      for (const slot of given) matches[slot >>> 5] |= 1 << (slot & 31);
      const atLeast = given.filter((slot) => !Number.isNaN(f.valueOf[slot]) && f.valueOf[slot] >= bounds.min!).length;
      // The count of matches only chooses the way an edge bucket is counted: by values (a count of
      // 0), or from the order when there is one (a count past every run).
      for (const count of [given.length, 0, Number.MAX_SAFE_INTEGER]) {
        expect(f.index.countAtLeast(matches, bounds.min, 0, words, count), `${label}: at least ${bounds.min} (count ${count})`).toBe(atLeast);
      }
      // A histogram by the codes in the slices, a value read only where a bucket straddles an edge.
      const thresholds = Float64Array.from(new Set([bounds.min, bounds.max ?? bounds.min + 1, f.draw()].filter((t) => !Number.isNaN(t)))).sort();
      const counts = new Float64Array(thresholds.length + 1);
      f.index.addHistogram(matches, thresholds, 0, words, counts);
      const expected = new Float64Array(thresholds.length + 1);
      for (const slot of given) if (!Number.isNaN(f.valueOf[slot])) expected[thresholds.filter((t) => t <= f.valueOf[slot]).length]++;
      expect([...counts], `${label}: histogram over ${[...thresholds]}`).toEqual([...expected]);
      // The same edges (and every non-NULL value's) counted at once: one pass for the edges whose
      // bucket is whole or read from the order, a pass of its own for any other.
      const edges = Float64Array.of(-Infinity, ...thresholds);
      const atLeastEach = [...edges].map((edge) => given.filter((slot) => f.valueOf[slot] >= edge).length);
      for (const count of [given.length, 0, Number.MAX_SAFE_INTEGER]) {
        expect(f.index.countAtLeastEach(matches, edges, 0, words, count), `${label}: at least each of ${[...edges]} (count ${count})`).toEqual(atLeastEach);
      }
    }
    // The window of words holds every slot within the bounds.
    const window = f.index.wordWindow(bounds);
    const outside = f.valueOf.flatMap((value, slot) => (within(value, bounds) && (slot >>> 5 < window.from || slot >>> 5 >= window.to) ? [slot] : []));
    expect(outside, `${label}: window of ${JSON.stringify(bounds)}`).toEqual([]);
  }
  if (!sweep) return;
  // A maximum at every stored value and just below it: among them each bucket's last whole number,
  // where the bucket lies wholly inside the bound and only the buckets above it go (random bounds
  // rarely land there).
  const all = new Uint32Array(words).fill(0xffffffff);
  const values = [...new Set(f.valueOf.filter((value) => !Number.isNaN(value)))].sort((a, b) => a - b);
  for (const value of values.flatMap((value) => [value - 1, value])) {
    const rows = all.slice();
    f.index.selectInto(rows, words, { max: value }, scratch);
    const kept = bitsOf(rows).filter((slot) => slot < slots);
    expect(kept.length, `${label}: at most ${value}`).toBe(f.valueOf.filter((stored) => within(stored, { max: value })).length);
  }
}

function roundTrip(f: Fixture, integer: boolean, buckets?: number): Fixture {
  const copy = fixture(integer, f.order !== null, buckets);
  copy.reach(f.valueOf.length - 1);
  roundTripSnapshot(f.index, copy.index);
  copy.valueOf.splice(0, copy.valueOf.length, ...f.valueOf);
  copy.order?.rebuild();
  return copy;
}

describe('the bit-sliced range index', () => {
  for (const { integer, withOrder, buckets, label } of [
    { integer: true, withOrder: false, buckets: undefined, label: 'counts, sub-range bytes' },
    { integer: true, withOrder: true, buckets: undefined, label: 'counts, with an order' },
    { integer: false, withOrder: false, buckets: 127, label: 'dates, 127 buckets' },
    { integer: false, withOrder: true, buckets: 7, label: 'dates, 7 buckets and an order' },
  ]) {
    it(`selects and counts exactly what a comparison does (${label})`, () => {
      const f = fixture(integer, withOrder, buckets);
      const slots = 6_000;
      for (let slot = 0; slot < slots; slot++) f.put(slot, f.draw());
      f.index.rebalance(slots);
      f.order?.rebuild();
      check(f, integer, 'after the load', 60, integer);

      // Rows move between buckets, become NULL, and new slots arrive past the rebalanced size.
      for (let n = 0; n < 1_500; n++) f.put(rng.int(0, slots - 1), f.draw());
      for (let slot = slots; slot < slots + 700; slot++) f.put(slot, f.draw());
      check(f, integer, 'after updates and new slots');

      f.index.rebalance(f.valueOf.length);
      f.order?.compact();
      check(f, integer, 'rebalanced');

      const loaded = roundTrip(f, integer, buckets);
      check(loaded, integer, 'loaded from a snapshot', 30);
      for (let n = 0; n < 300; n++) loaded.put(rng.int(0, loaded.valueOf.length + 50), loaded.draw());
      check(loaded, integer, 'loaded, then updated', 30);
    });
  }

  // Slots filed in the order of their values (videos by date): a range's middle words hold only
  // buckets it keeps whole and are passed over. Rows later moved to other buckets, NULLs among
  // them, new slots and a snapshot (which forgets where the NULLs are) must not show through.
  for (const withOrder of [false, true]) {
    it(`passes over the words a range keeps whole where slots follow the values (${withOrder ? 'with an order' : 'sub-range bytes, NULLs'})`, () => {
      const f = fixture(false, withOrder, 127);
      const slots = 40_000;
      const dateOf = (slot: number) => 1.6e12 + slot * 60_000 + rng.int(0, 600_000);
      for (let slot = 0; slot < slots; slot++) f.put(slot, dateOf(slot));
      f.index.rebalance(slots);
      f.order?.rebuild();
      check(f, false, 'in order', 40);
      // A few rows dated elsewhere and, without an order, a few NULLs, far from their neighbours.
      for (let n = 0; n < 6; n++) f.put(rng.int(0, slots - 1), dateOf(rng.int(0, slots - 1)));
      if (!withOrder) for (let n = 0; n < 3; n++) f.put(rng.int(0, slots - 1), NaN);
      for (let slot = slots; slot < slots + 500; slot++) f.put(slot, dateOf(slot));
      check(f, false, 'moved, NULLs and new slots', 40);
      const loaded = roundTrip(f, false, 127);
      check(loaded, false, 'loaded from a snapshot', 30);
      if (!withOrder) loaded.put(rng.int(0, slots - 1), NaN);
      loaded.put(rng.int(0, slots - 1), dateOf(rng.int(0, slots - 1)));
      check(loaded, false, 'loaded, then moved', 30);
    }, 60_000);
  }

  // The kernel passes over the words a chunk at a time: bounds, edges and a window that starts
  // inside a block must come out the same across its seams.
  for (const withOrder of [false, true]) {
    it(`selects and counts across the kernel's chunks (${withOrder ? 'with an order' : 'sub-range bytes'})`, () => {
      const f = fixture(true, withOrder);
      const slots = CHUNK_BLOCKS * 4 * 32 * 2 + 5_001;
      for (let slot = 0; slot < slots; slot++) f.put(slot, f.draw());
      f.index.rebalance(slots);
      f.order?.rebuild();
      check(f, true, 'three chunks', 10);
      for (let n = 0; n < 2_000; n++) f.put(rng.int(0, slots + 100), f.draw());
      check(f, true, 'three chunks, updated', 6);
    }, 60_000);
  }

  // A code holds NULL's 0 and a bucket each: 62 buckets fill 6 bits. A whole number holding a
  // large share of the rows gets a bucket of its own on top of the target; so many of them that the
  // codes would need a bit more (a slice more for every pass, a bit more for every row) make the
  // target smaller instead, and the answers stay exact.
  it('keeps its codes as wide as its target buckets take, heavy values and all', () => {
    for (const target of [undefined, 127, 254]) {
      const f = fixture(true, false, target);
      // Values of 100 rows each, more than the codes hold buckets: every one heavy, each quantile a
      // boundary and its successor.
      const values = target === 254 ? 240 : 120;
      const slots = values * 100;
      for (let slot = 0; slot < slots; slot++) f.put(slot, (slot % values) * 10);
      f.index.rebalance(slots);
      const most = target === undefined ? 63 : target === 127 ? 127 : 255;
      expect(f.index.bucketCount, `target ${target ?? 'default'}`).toBeLessThanOrEqual(most);
      expect(f.index.bucketCount, `target ${target ?? 'default'}`).toBeGreaterThan(most / 2);
      check(f, true, `heavy values, target ${target ?? 'default'}`, 30, true);
    }
  });

  // A page's heap asks the codes of its order's keys for the matches that may still beat its last
  // kept row (KeyCodes.eachWithin): the kernel, a span of words at a time, the bound asked again
  // before each span. Over chunks, from any word, with a fixed bound and with one that rises.
  it("lists the matches whose key's code is at or past a bound, across the kernel's chunks", () => {
    const f = fixture(true, true, 254);
    const order = f.order!;
    let codes: KeyCodes | null = null;
    const useCodes = order.useCodes.bind(order);
    order.useCodes = (given) => useCodes((codes = given));
    f.index.useOrder(order);
    const slots = CHUNK_BLOCKS * 4 * 32 + 7_001;
    for (let slot = 0; slot < slots; slot++) f.put(slot, f.draw());
    f.index.rebalance(slots);
    order.rebuild();
    const words = Math.ceil(slots / 32);
    const codeOf = (slot: number) => codes!.codeOf(f.valueOf[slot]);
    for (let trial = 0; trial < 12; trial++) {
      const { rows } = randomRowSet(rng, slots, rng.pick([0.001, 0.1, 0.9]));
      const from = rng.pick([0, rng.int(0, words - 1), CHUNK_BLOCKS * 4 - 3]);
      const to = rng.pick([words, rng.int(from, words)]);
      const atMost = rng.chance(0.5);
      const bound = codeOf(rng.int(0, slots - 1));
      const passes = (slot: number, code: number) => (atMost ? codeOf(slot) <= code : codeOf(slot) >= code);
      const matches = bitsOf(rows).filter((slot) => slot >= from * 32 && slot < to * 32);
      const label = `trial ${trial}: words [${from}, ${to}), ${atMost ? 'at most' : 'at least'} ${bound}`;
      const fixed: number[] = [];
      codes!.eachWithin(rows, from, to, () => bound, atMost, (slot) => fixed.push(slot));
      expect(fixed, label).toEqual(matches.filter((slot) => passes(slot, bound)));
      // A bound that moves on after every 50 matches listed: each listed one passed the bound of
      // its span, so every one passing the last bound and none failing the first is listed.
      const first = atMost ? 255 : 0;
      let moving = first;
      const listed: number[] = [];
      codes!.eachWithin(rows, from, to, () => moving, atMost, (slot) => {
        listed.push(slot);
        if (listed.length % 50 === 0) moving = atMost ? Math.max(bound, moving - 16) : Math.min(bound, moving + 16);
      });
      expect(listed.every((slot, i) => i === 0 || slot > listed[i - 1]), `${label}: ascending`).toBe(true);
      expect(listed.filter((slot) => !passes(slot, first)), `${label}: the first bound`).toEqual([]);
      const kept = new Set(listed);
      expect(matches.filter((slot) => passes(slot, moving) && !kept.has(slot)), `${label}: the last bound`).toEqual([]);
    }
  }, 60_000);

  it('files a slot never written as NULL, and a bound past every value selects nothing', () => {
    const f = fixture(true, false);
    for (let slot = 0; slot < 100; slot++) f.put(slot, slot);
    f.index.rebalance(100);
    f.put(200, 5); // slots 100..199 were never written
    const words = Math.ceil(201 / 32);
    const rows = new Uint32Array(words).fill(0xffffffff);
    f.index.selectInto(rows, words, { min: 0 });
    expect(bitsOf(rows).filter((slot) => slot < 201)).toEqual([...Array.from({ length: 100 }, (_, slot) => slot), 200]);
    const none = new Uint32Array(words).fill(0xffffffff);
    f.index.selectInto(none, words, { min: 1_000 });
    expect(bitsOf(none)).toEqual([]);
  });

  it('refuses a snapshot whose slices do not match its buckets', () => {
    const f = fixture(true, false);
    for (let slot = 0; slot < 500; slot++) f.put(slot, slot);
    f.index.rebalance(500);
    // Loaded into an index expecting a sub-range byte per slot it lacks: refused, not misread.
    const other = new RangeIndex(true);
    other.useOrder(new SortOrder(new RowTable(), () => 0));
    expect(() => roundTripSnapshot(f.index, other)).toThrow(/does not add up/);
  });

  it('refuses a snapshot whose codes are wider than the kernel takes, or whose slices are not whole blocks', () => {
    const f = fixture(true, false);
    for (let slot = 0; slot < 500; slot++) f.put(slot, slot);
    f.index.rebalance(500);
    // The index's parts in the order it saves them, with `boundaries` boundaries and slices as wide as they need.
    const forged = (boundaries: number, extraSliceWords = 0): Snapshotted => ({
      save(out) {
        f.index.values.save(out);
        out.array(Float64Array.from({ length: boundaries }, (_, i) => i + 1));
        const bits = 32 - Math.clz32(boundaries + 1);
        out.value({ bucketRows: 2, bits, codes: true });
        out.array(new Uint32Array(sliceWords(Math.ceil(500 / 32), bits) + extraSliceWords));
        out.array(new Float64Array(boundaries + 1));
        out.array(new Uint8Array(500));
        out.array(new Int32Array(boundaries + 1));
        out.array(new Int32Array(boundaries + 1));
      },
      load() {},
    });
    // As many buckets as codes of MAX_BITS bits hold: loaded; one more bit: refused, not passed to the kernel.
    expect(() => roundTripSnapshot(forged(2 ** MAX_BITS - 2), new RangeIndex(true))).not.toThrow();
    expect(() => roundTripSnapshot(forged(2 ** MAX_BITS - 1), new RangeIndex(true))).toThrow(/does not add up/);
    // Slices read straight into the kernel's memory: a length that is not whole blocks is refused too.
    expect(() => roundTripSnapshot(forged(20), new RangeIndex(true))).not.toThrow();
    expect(() => roundTripSnapshot(forged(20, 3), new RangeIndex(true))).toThrow(/does not add up/);
  });
});

// People bound counts at round numbers (10,000 followers) and histograms have round edges: a
// boundary there leaves no edge bucket to test. The quantiles give way to them within limits.
describe('round bucket boundaries', () => {
  const quantiles = (present: Float64Array, buckets: number) => Array.from({ length: buckets - 1 }, (_, j) => present[Math.floor(((j + 1) * present.length) / buckets)]);
  const rowsBelow = (present: Float64Array, value: number) => present.findIndex((v) => v >= value) === -1 ? present.length : present.findIndex((v) => v >= value);

  it('puts every power of ten of log-spread counts on a boundary, no bucket off its quantile by half a bucket', () => {
    const random = seededRandom('round-boundaries');
    const present = Float64Array.from({ length: 20_000 }, () => Math.round(Math.exp(Math.log(10) + random.next() * Math.log(1e7)))).sort();
    const before = quantiles(present, 62);
    const after = roundedBoundaries(present, before);
    expect(after.length).toBe(before.length);
    for (let i = 1; i < after.length; i++) expect(after[i], `boundary ${i} above the one before`).toBeGreaterThan(after[i - 1]);
    for (const power of [100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]) expect(after, `${power} a boundary`).toContain(power);
    const half = present.length / 62 / 2;
    after.forEach((value, i) => expect(Math.abs(rowsBelow(present, value) - rowsBelow(present, before[i])), `boundary ${i} (${before[i]} -> ${value})`).toBeLessThanOrEqual(half));
  });

  it('leaves a heavy value its own bucket, and boundaries with no round number near them as they were', () => {
    // 0 holds most rows (its bucket is [0, 1)); the rest are spread over 101-199, which holds no round number of 1, 2 or 5 times a power of ten.
    const present = Float64Array.from([...Array<number>(5_000).fill(0), ...Array.from({ length: 5_000 }, (_, i) => 101 + (i % 99))]).sort();
    const before = [0, 1, ...quantiles(present.subarray(5_000), 10)];
    expect(roundedBoundaries(present, before)).toEqual(before);
  });

  it('ends over counts past what a double holds exactly, an infinite one too', () => {
    // A bigint beyond 2^53 or a numeric 'Infinity' read as a number: no round number is sought past 2^53.
    const present = Float64Array.from([...Array.from({ length: 1_000 }, (_, i) => i * 1_000), 2 ** 60, 1e300, Infinity]);
    const before = quantiles(present, 10);
    const after = roundedBoundaries(present, before);
    expect(after).toHaveLength(before.length);
    for (let i = 1; i < after.length; i++) expect(after[i]).toBeGreaterThan(after[i - 1]);
    expect(after).toContain(100_000);
  });
});

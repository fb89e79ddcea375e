import { describe, expect, it } from 'vitest';
import { CombinationCounts } from '../src/search/primitives/combination-counts.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';

// Rows per combination of three codes: every count must be what the rows themselves say, through
// growth of the table, rows taken away again, and the point where there are too many to keep.

describe('the combination counts', () => {
  it('count exactly the rows of the accepted combinations through growth and removals', () => {
    const rng = seededRandom('combination-counts');
    const counts = new CombinationCounts();
    const rows: [number, number, number][] = [];
    for (let i = 0; i < 20_000; i++) {
      const row: [number, number, number] = [rng.int(0, 60), rng.int(0, 30), rng.int(0, 2)];
      rows.push(row);
      counts.add(...row, 1);
    }
    // Grown past its first room of 1,024 (60 × 30 × 3 combinations possible).
    expect(counts.size).toBeGreaterThan(1_024);
    for (const row of rows.splice(0, 7_000)) counts.add(...row, -1);
    const accepts: ((a: number, b: number, c: number) => boolean)[] = [() => true, (a) => a % 7 === 0, (a, b, c) => (a < 10 || b > 25) && c === 1, (_, b) => b === 0, () => false];
    for (const accept of accepts) expect(counts.count(accept)).toBe(rows.filter((row) => accept(...row)).length);
  });

  it("keep each combination's top at or above every key of its rows, through growth and removals", () => {
    const rng = seededRandom('combination-tops');
    const counts = new CombinationCounts();
    const rows: { codes: [number, number, number]; key: number }[] = [];
    for (let i = 0; i < 20_000; i++) {
      const row = { codes: [rng.int(0, 60), rng.int(0, 30), rng.int(0, 2)] as [number, number, number], key: rng.int(0, 1_000_000) };
      rows.push(row);
      counts.add(...row.codes, 1, row.key);
    }
    const highest = new Map<string, number>();
    for (const { codes, key } of rows) highest.set(codes.join(), Math.max(highest.get(codes.join()) ?? -Infinity, key));
    const tops = () => {
      const seen = new Map<string, number>();
      counts.forEach((a, b, c, _, top) => seen.set([a, b, c].join(), top));
      return seen;
    };
    // Exactly the highest key added, through the table's growth.
    expect(tops()).toEqual(highest);
    // A removal leaves the top where it was (a bound from above, not the live rows' maximum);
    // a combination whose rows are all gone is not visited.
    for (const { codes, key } of rows.splice(0, 7_000)) counts.add(...codes, -1, key);
    const live = new Set(rows.map((row) => row.codes.join()));
    expect(tops()).toEqual(new Map([...highest].filter(([codes]) => live.has(codes))));
  });

  it('stops counting past its limit, and starts over when cleared', () => {
    const counts = new CombinationCounts(100);
    for (let a = 0; a < 100; a++) counts.add(a, 1, 1, 2);
    expect(counts.kept).toBe(true);
    expect(counts.count((a) => a >= 50)).toBe(100);
    // An existing combination still fits; the 101st does not.
    counts.add(3, 1, 1, 1);
    expect(counts.kept).toBe(true);
    counts.add(100, 1, 1, 1);
    expect(counts.kept).toBe(false);
    expect(() => counts.count(() => true)).toThrow();
    counts.add(3, 1, 1, 1);
    expect(counts.kept).toBe(false);
    counts.clear();
    expect(counts.kept).toBe(true);
    counts.add(5, 5, 5, 3);
    expect(counts.count(() => true)).toBe(3);
  });
});

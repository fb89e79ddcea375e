import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBenchConfig } from '../bench/config.js';
import { ROOT } from '../bench/systems.js';
import { selectWorkloads } from '../bench/workloads.js';

// bench:compare's variants (docs/performance.md, "How it runs"): a name and settings each, ROOT
// for another checkout; a bad list stops the run naming the setting.
describe('BENCH_VARIANTS', () => {
  it('reads names, settings and another checkout', () => {
    const { variants, rounds } = loadBenchConfig({ BENCH_VARIANTS: 'before: HEAP_GROWTH_PERCENT=25 ROW_CACHE_ROWS=0; after:HEAP_GROWTH_PERCENT=50 ;base: ROOT=../base', BENCH_ROUNDS: '4' });
    expect(rounds).toBe(4);
    expect(variants).toEqual([
      { name: 'before', root: ROOT, env: { HEAP_GROWTH_PERCENT: '25', ROW_CACHE_ROWS: '0' } },
      { name: 'after', root: ROOT, env: { HEAP_GROWTH_PERCENT: '50' } },
      { name: 'base', root: resolve('../base'), env: {} },
    ]);
    expect(loadBenchConfig({}).variants).toBeNull();
  });

  it('refuses one variant, repeated names and settings that are not VAR=value', () => {
    for (const bad of ['only: X=1', 'a: X=1; a: X=2', 'a: X; b:', 'a b: X=1; c:']) {
      expect(() => loadBenchConfig({ BENCH_VARIANTS: bad }), bad).toThrow(/BENCH_VARIANTS/);
    }
    expect(() => loadBenchConfig({ BENCH_VARIANTS: 'a:; b:', BENCH_ROUNDS: '0' })).toThrow(/BENCH_ROUNDS/);
  });
});

describe('BENCH_WORKLOADS', () => {
  it('selects the named workloads and refuses an unknown one, naming the known ones', () => {
    expect(selectWorkloads(['live-pages', 'creators-broad']).map((w) => w.id)).toEqual(['creators-broad', 'live-pages']);
    expect(selectWorkloads(null).length).toBeGreaterThan(10);
    expect(() => selectWorkloads(['creators-broad', 'nope'])).toThrow(/BENCH_WORKLOADS: unknown nope; known: creators-broad/);
  });
});

import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBenchConfig } from '../bench/config.js';
import { indexSource, ROOT } from '../bench/systems.js';
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

describe("the bench's reading of the service's index log", () => {
  const line = (message: string, extra: Record<string, unknown> = {}) => JSON.stringify({ level: 'info', pid: 1, message, ...extra });

  it('tells a snapshot used from one refused, and from none', () => {
    expect(indexSource([line('search index loaded from its snapshot', { readMs: 5 })])).toEqual({ from: 'snapshot' });
    const refused = [line('search index snapshot not used; loading from the database', { reason: 'the change feed was pruned past it' }), 'not json', line('search index loaded')];
    expect(indexSource(refused)).toEqual({ from: 'database', snapshotRejected: 'the change feed was pruned past it' });
    expect(indexSource([line('search index: no snapshot yet; loading from the database'), line('search index loaded')])).toEqual({ from: 'database', snapshotRejected: null });
  });
});

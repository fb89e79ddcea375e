import { z } from 'zod';
import { describeFields, fieldErrorsFromZod } from '../src/domain/errors.js';

// Every BENCH_* setting, read and checked in one place; a bad value stops the run naming it.

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const positive = (fallback: number) => z.coerce.number().positive().default(fallback);

const benchEnv = z.object({
  BENCH_DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/creator_data_bench'),
  BENCH_CREATORS: count(1_000_000),
  BENCH_CHANNELS: count(200_000),
  BENCH_VIDEOS: count(2_000_000),
  BENCH_LIVE: count(20_000),
  BENCH_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  BENCH_SECONDS: positive(10),
  BENCH_WARMUP_SECONDS: z.coerce.number().min(0).default(3),
  /** Sessions per workload whose every page is compared across the three systems before measuring. */
  BENCH_CHECK_SAMPLES: count(20),
  BENCH_ALLOW_MISMATCH: z.enum(['0', '1']).default('0'),
  /** 1: stop after the equivalence check (a quick "do they still agree?"). */
  BENCH_CHECK_ONLY: z.enum(['0', '1']).default('0'),
  /** 1: count each system's statements through a relay (statement-counter.ts) during the check. */
  BENCH_COUNT_STATEMENTS: z.enum(['0', '1']).default('0'),
  BENCH_SEED: z.string().min(1).default('bench'),
  /** Comma-separated workload ids (workloads.ts); all when unset. */
  BENCH_WORKLOADS: z.string().optional(),
  /** Connections of PostGraphile's and the floor's pools: the service's own pool holds 10. */
  BENCH_POOL_SIZE: z.coerce.number().int().min(1).default(10),
  BENCH_RESULTS: z.string().default('bench/RESULTS.md'),
});

export type BenchConfig = ReturnType<typeof loadBenchConfig>;

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env) {
  const present = Object.fromEntries(Object.entries(env).filter(([name, value]) => name.startsWith('BENCH_') && value !== ''));
  const parsed = benchEnv.safeParse(present);
  if (!parsed.success) throw new Error(`bad benchmark setting: ${describeFields(fieldErrorsFromZod(parsed.error))}`);
  const e = parsed.data;
  return {
    databaseUrl: e.BENCH_DATABASE_URL,
    scale: { creators: e.BENCH_CREATORS, channels: e.BENCH_CHANNELS, videos: e.BENCH_VIDEOS, live: e.BENCH_LIVE },
    concurrency: e.BENCH_CONCURRENCY,
    seconds: e.BENCH_SECONDS,
    warmupSeconds: e.BENCH_WARMUP_SECONDS,
    checkSamples: e.BENCH_CHECK_SAMPLES,
    allowMismatch: e.BENCH_ALLOW_MISMATCH === '1',
    checkOnly: e.BENCH_CHECK_ONLY === '1',
    countStatements: e.BENCH_COUNT_STATEMENTS === '1',
    seed: e.BENCH_SEED,
    workloads: e.BENCH_WORKLOADS ? e.BENCH_WORKLOADS.split(',').map((id) => id.trim()).filter(Boolean) : null,
    poolSize: e.BENCH_POOL_SIZE,
    resultsPath: e.BENCH_RESULTS,
  };
}

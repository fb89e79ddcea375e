import { resolve } from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../src/config.js';
import { describeFields, fieldErrorsFromZod } from '../src/domain/errors.js';
import { SYSTEM_NAMES, type SystemName } from './clients.js';
import { ROOT } from './systems.js';

// Every BENCH_* setting, read and checked in one place; a bad value stops the run naming it.

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
/** A table's rows, overriding the scale's. */
const rows = z.coerce.number().int().min(0).optional();
const positive = (fallback: number) => z.coerce.number().positive().default(fallback);

/**
 * BENCH_SCALE: the data set, as a multiple of the 1M-creator one, with a database of its own
 * (`creator_data_bench`, `creator_data_bench_x10`) and a table of its own in the results. ×10 is
 * issue 22's `seed --creators 10000000 --channels 2000000 --videos 20000000 --live 50000`.
 */
const SCALES = {
  '1': { database: 'creator_data_bench', creators: 1_000_000, channels: 200_000, videos: 2_000_000, live: 20_000 },
  '10': { database: 'creator_data_bench_x10', creators: 10_000_000, channels: 2_000_000, videos: 20_000_000, live: 50_000 },
} as const;

const benchEnv = z.object({
  BENCH_SCALE: z.enum(['1', '10']).default('1'),
  BENCH_DATABASE_URL: z.url().optional(),
  BENCH_CREATORS: rows,
  BENCH_CHANNELS: rows,
  BENCH_VIDEOS: rows,
  BENCH_LIVE: rows,
  BENCH_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(16),
  BENCH_SECONDS: positive(10),
  BENCH_WARMUP_SECONDS: z.coerce.number().min(0).default(3),
  /** Sessions per workload whose every page is compared before measuring: across the three systems, or (bench:compare) the variants. */
  BENCH_CHECK_SAMPLES: count(20),
  /** 1: measure even when the check found answers that differ. */
  BENCH_ALLOW_MISMATCH: z.enum(['0', '1']).default('0'),
  /** 1: stop after the equivalence check (a quick "do they still agree?"). */
  BENCH_CHECK_ONLY: z.enum(['0', '1']).default('0'),
  /** 1: count each system's statements through a relay (statement-counter.ts) during the check. */
  BENCH_COUNT_STATEMENTS: z.enum(['0', '1']).default('0'),
  BENCH_SEED: z.string().min(1).default('bench'),
  /** Comma-separated workload ids (workloads.ts); all when unset. */
  BENCH_WORKLOADS: z.string().optional(),
  /** Connections of PostGraphile's and the floor's pools; the service's is its own DB_POOL_SIZE (10 unless set). */
  BENCH_POOL_SIZE: z.coerce.number().int().min(1).default(10),
  BENCH_RESULTS: z.string().default('bench/RESULTS.md'),
  /**
   * A folder kept between runs for the service's index snapshots: when it holds one, the run starts
   * the service from it and skips the build from PostgreSQL (ten minutes at ×10; its ready time
   * and peak are then not measured); when empty, the build writes one there. Unset: a folder of
   * the run's own, removed at the end. The service itself rejects a snapshot of another database.
   */
  BENCH_SNAPSHOT_DIR: z.string().min(1).optional(),
  /**
   * bench/compare.ts and bench/fairness.ts only: the services to compare, `name: VAR=value …` separated by `;`, e.g.
   * `before: HEAP_GROWTH_PERCENT=25; after: HEAP_GROWTH_PERCENT=50`. `ROOT=<dir>` starts the built
   * checkout in that folder (another revision's worktree) instead of this one.
   */
  BENCH_VARIANTS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return null;
      const variants = text
        .split(';')
        .map((part) => part.trim())
        .filter(Boolean)
        .map((part) => {
          const colon = part.indexOf(':');
          const name = (colon < 0 ? part : part.slice(0, colon)).trim();
          const assignments = colon < 0 ? [] : part.slice(colon + 1).trim().split(/\s+/).filter(Boolean);
          const env: Record<string, string> = {};
          for (const assignment of assignments) {
            const equals = assignment.indexOf('=');
            if (equals <= 0) ctx.addIssue({ code: 'custom', message: `"${assignment}" in ${name} is not VAR=value` });
            else env[assignment.slice(0, equals)] = assignment.slice(equals + 1);
          }
          return { name, env };
        });
      const names = new Set(variants.map((variant) => variant.name));
      if (variants.length < 2 || names.size < variants.length || variants.some((variant) => !/^[\w.-]+$/.test(variant.name))) {
        ctx.addIssue({ code: 'custom', message: 'needs two or more variants with distinct names (letters, digits, . _ -)' });
      }
      return variants.map(({ name, env: { ROOT: root, ...env } }) => ({ name, root: root ? resolve(root) : ROOT, env }));
    }),
  /** bench/compare.ts only: rounds, each measuring every variant once, in turn (the order reversed every other round). */
  BENCH_ROUNDS: z.coerce.number().int().min(1).max(50).default(3),
  /**
   * Comma-separated systems to run, the service among them; all three when unset. `service` alone
   * measures the service without the others' hour of counting at ×10: no equivalence check (the
   * floor is the reference), no ratios, and a part of the results of its own.
   */
  BENCH_SYSTEMS: z
    .string()
    .default(SYSTEM_NAMES.join(','))
    .transform((text) => [...new Set(text.split(',').map((name) => name.trim()).filter(Boolean))])
    .pipe(
      z
        .array(z.enum(SYSTEM_NAMES as [SystemName, ...SystemName[]]))
        .refine((names) => names.includes('service'), 'must include service'),
    ),
});

export type BenchConfig = ReturnType<typeof loadBenchConfig>;

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env) {
  const present = Object.fromEntries(Object.entries(env).filter(([name, value]) => name.startsWith('BENCH_') && value !== ''));
  const parsed = benchEnv.safeParse(present);
  if (!parsed.success) throw new Error(`bad benchmark setting: ${describeFields(fieldErrorsFromZod(parsed.error))}`);
  const e = parsed.data;
  const scale = SCALES[e.BENCH_SCALE];
  return {
    scaleFactor: Number(e.BENCH_SCALE),
    databaseUrl: e.BENCH_DATABASE_URL ?? `postgres://postgres@127.0.0.1:5432/${scale.database}`,
    scale: {
      creators: e.BENCH_CREATORS ?? scale.creators,
      channels: e.BENCH_CHANNELS ?? scale.channels,
      videos: e.BENCH_VIDEOS ?? scale.videos,
      live: e.BENCH_LIVE ?? scale.live,
    },
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
    snapshotDir: e.BENCH_SNAPSHOT_DIR ?? null,
    /** The service's SEARCH_PARTITIONS (it passes through to the service), read as the service reads it: one snapshot file each. */
    servicePartitions: loadConfig({ SEARCH_PARTITIONS: env.SEARCH_PARTITIONS }).searchPartitions,
    variants: e.BENCH_VARIANTS,
    rounds: e.BENCH_ROUNDS,
    /** In SYSTEM_NAMES order, whatever order they were given in. */
    systems: SYSTEM_NAMES.filter((name) => e.BENCH_SYSTEMS.includes(name)),
  };
}

// npm run bench: the service's throughput against a raw-SQL floor measured in the same run, on a
// real PostgreSQL (BENCH_DATABASE_URL, default a `creator_data_bench` database on localhost).
// Ratios, not absolute figures, are what to compare between runs and machines.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { sql } from 'kysely';
import { createAccessService } from '../src/access/service.js';
import { createLimiter } from '../src/access/limits.js';
import { seedScale } from '../src/cli/seed.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { createAccount, issueKey } from '../src/store/accounts.js';
import { openStore } from '../src/store/connect.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { createServer } from '../src/yoga.js';

const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/creator_data_bench';
const creators = Number(process.env.BENCH_CREATORS ?? 200_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);

async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
  await client.end();
}

interface Result {
  perSecond: number;
  p50: number;
  p95: number;
}

/** Runs `task` from `concurrency` loops for `seconds`; requests per second and latency percentiles. */
async function measure(task: () => Promise<void>): Promise<Result> {
  for (let i = 0; i < 20; i++) await task();
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await task();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: latencies.length / elapsed,
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p95: latencies[Math.floor(latencies.length * 0.95)],
  };
}

async function main(): Promise<void> {
  await ensureDatabase(databaseUrl);
  const store = await openStore({ databaseUrl });
  await migrateToLatest(store.db);
  const have = Number((await sql<{ n: string }>`SELECT count(*) AS n FROM creators WHERE platform = 'twitter'`.execute(store.db)).rows[0].n);
  if (have < creators) {
    process.stderr.write(`bench: seeding ${creators - have} creators (progress below)\n`);
    await seedScale(store.db, { creators: creators - have, channels: 0, videos: 0, live: 0 }, process.stderr);
    await sql`ANALYZE`.execute(store.db);
  }

  const config = loadConfig({});
  const limiter = createLimiter({});
  const services = { config, store, access: createAccessService(store.db, limiter), log: createLogger(process.stderr, true) };
  const yoga = createServer(services);
  const accountId = await createAccount(store.db, { plan: 'pro', quota: 1e12, ratePerSecond: 1e6 });
  const { key } = await issueKey(store.db, accountId);
  const floor = new pg.Pool({ connectionString: databaseUrl, max: 10 });

  const rest = (body: unknown) => async () => {
    const response = await yoga.fetch('http://bench/api/v1/search/twitter/user', {
      method: 'POST',
      headers: { authorization: key, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (response.status !== 200) throw new Error(`bench request failed: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  };
  const raw = (statements: [string, unknown[]][]) => async () => {
    await Promise.all(statements.map(([text, values]) => floor.query(text, values)));
  };

  const page = `SELECT * FROM creators WHERE platform = 'twitter' {where} ORDER BY follower_count DESC, user_id DESC LIMIT 21`;
  const count = `SELECT count(*) FROM creators WHERE platform = 'twitter' {where}`;
  const filtered = `AND country = ANY($1) AND follower_count >= $2`;
  const workloads: { name: string; service: () => Promise<void>; floor: () => Promise<void>; pageOnly: () => Promise<void> }[] = [
    {
      name: 'creator search, no filter, page 1 with exact total',
      service: rest({ page_size: 20 }),
      floor: raw([[page.replace('{where}', ''), []], [count.replace('{where}', ''), []]]),
      pageOnly: raw([[page.replace('{where}', ''), []]]),
    },
    {
      name: 'creator search, 2 countries + follower bound, with total',
      service: rest({ locations: ['US', 'GB'], follower_count_min: 10_000, page_size: 20 }),
      floor: raw([[page.replace('{where}', filtered), [['US', 'GB'], 10_000]], [count.replace('{where}', filtered), [['US', 'GB'], 10_000]]]),
      pageOnly: raw([[page.replace('{where}', filtered), [['US', 'GB'], 10_000]]]),
    },
  ];

  process.stdout.write(`creators: ${creators.toLocaleString('en-US')}, concurrency ${concurrency}, ${seconds} s per run\n\n`);
  process.stdout.write('| workload | service req/s | raw SQL floor req/s | service / floor | floor without count(*) req/s | service p50 / p95 ms |\n|---|---|---|---|---|---|\n');
  for (const workload of workloads) {
    const service = await measure(workload.service);
    const floorResult = await measure(workload.floor);
    const pageOnly = await measure(workload.pageOnly);
    process.stdout.write(
      `| ${workload.name} | ${service.perSecond.toFixed(0)} | ${floorResult.perSecond.toFixed(0)} | ${(service.perSecond / floorResult.perSecond).toFixed(2)} | ${pageOnly.perSecond.toFixed(0)} | ${service.p50.toFixed(1)} / ${service.p95.toFixed(1)} |\n`,
    );
  }
  await floor.end();
  await limiter.close();
  await store.close();
}

await main();

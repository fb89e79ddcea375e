// npm run bench:fairness: what one account's heavy requests do to another account's light ones.
// The light account (2 connections) searches creators by one country, first alone, then while a
// heavy account keeps BENCH_CONCURRENCY GraphQL requests in flight, of two kinds in turn: creator
// searches asking every facet without its own condition and two histograms of the most edges a
// request may give (the index thread's work), and pages of 20 videos each with its channel's first
// 5 videos (the pipeline's own). Printed: each account's rate and latency per phase. Settings: bench/config.ts (BENCH_SECONDS a phase, the
// database, BENCH_SNAPSHOT_DIR; BENCH_VARIANTS, as bench:compare takes them, measures each variant
// in turn, e.g. another revision's built checkout with `before: ROOT=../old; after:`).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MAX_FACET_EDGES } from '../src/inputs/facets.js';
import { loadBenchConfig } from './config.js';
import { prepareDatabase, readVocabulary } from './database.js';
import { HttpClient, percentile } from './load.js';
import { fixed } from './report.js';
import { createServiceKey, ROOT, type ServiceVariant, startService } from './systems.js';

const log = (line: string) => process.stderr.write(`bench:fairness: ${line}\n`);
const LIGHT_CONNECTIONS = 2;
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'BR', 'JP', 'IN', 'CA'];

const followerEdges = Array.from({ length: MAX_FACET_EDGES }, (_, i) => Math.round(1_000 * 1.25 ** i));
const rateEdges = Array.from({ length: MAX_FACET_EDGES }, (_, i) => i / 500);
const HEAVY = `query Heavy($min: SafeInt, $rate: Float) {
  creators(first: 20, sortBy: FOLLOWER_COUNT, filter: { followerCountMin: $min, avgEngagementRateMin: $rate }) {
    totalCount
    facets {
      country(excludeOwn: true) { value count }
      language(excludeOwn: true) { value count }
      gender(excludeOwn: true) { value count }
      category(excludeOwn: true) { value count }
      verified(excludeOwn: true) { value count }
      hasEmail(excludeOwn: true) { value count }
      followerCount(edges: ${JSON.stringify(followerEdges)}, excludeOwn: true) { count }
      avgEngagementRate(edges: ${JSON.stringify(rateEdges)}, excludeOwn: true) { count }
    }
  }
}`;

const NESTED = `query Nested($end: String) {
  videos(first: 20, sortBy: NEWEST, filter: { createAtEnd: $end }) {
    nodes { videoId channel { videos(first: 5) { totalCount nodes { videoId title } } } }
  }
}`;

interface Caller {
  name: string;
  http: HttpClient;
  connections: number;
  call(): { path: string; body: string };
}

async function drive(callers: Caller[], key: Map<string, string>, seconds: number): Promise<Map<string, number[]>> {
  const until = performance.now() + seconds * 1000;
  const times = new Map<string, number[]>(callers.map((caller) => [caller.name, []]));
  await Promise.all(
    callers.flatMap((caller) =>
      Array.from({ length: caller.connections }, async () => {
        while (performance.now() < until) {
          const { path, body } = caller.call();
          const started = performance.now();
          const answer = await caller.http.post(path, body, { authorization: key.get(caller.name)! });
          if (answer.status !== 200 || answer.body.includes('"errors"')) throw new Error(`${caller.name}: ${answer.status} ${answer.body.slice(0, 300)}`);
          times.get(caller.name)!.push(performance.now() - started);
        }
      }),
    ),
  );
  return times;
}

async function measure(variant: ServiceVariant & { name: string }, dir: string, rows: string[]): Promise<void> {
  const config = loadBenchConfig();
  const { videoDays } = await readVocabulary(config.databaseUrl);
  const first = Date.parse(videoDays.first);
  const days = Math.max(1, (Date.parse(videoDays.last) - first) / 86_400_000);
  const service = await startService(config.databaseUrl, dir, 10 * 60_000 * config.scaleFactor, variant);
  try {
    const key = new Map([
      ['light', await createServiceKey(config.databaseUrl)],
      ['heavy', await createServiceKey(config.databaseUrl)],
    ]);
    const light: Caller = {
      name: 'light',
      http: new HttpClient(service.url, LIGHT_CONNECTIONS),
      connections: LIGHT_CONNECTIONS,
      call: () => ({ path: '/api/v1/search/twitter/user', body: JSON.stringify({ locations: [COUNTRIES[Math.floor(Math.random() * COUNTRIES.length)]] }) }),
    };
    const heavyHttp = new HttpClient(service.url, config.concurrency);
    const facets: Caller = {
      name: 'heavy',
      http: heavyHttp,
      connections: config.concurrency,
      call: () => ({
        path: '/graphql',
        body: JSON.stringify({ query: HEAVY, variables: { min: Math.floor(Math.random() * 5_000), rate: Math.floor(Math.random() * 5) / 1_000 } }),
      }),
    };
    const nested: Caller = {
      ...facets,
      call: () => ({
        path: '/graphql',
        body: JSON.stringify({ query: NESTED, variables: { end: new Date(first + Math.floor(Math.random() * days) * 86_400_000).toISOString().slice(0, 10) } }),
      }),
    };
    const row = (phase: string, name: string, times: number[]) => {
      const sorted = Float64Array.from(times).sort();
      rows.push(`| ${variant.name} | ${phase} | ${name} | ${fixed(times.length / config.seconds, 0)} | ${fixed(percentile(sorted, 0.5), 1)} | ${fixed(percentile(sorted, 0.99), 1)} |`);
    };
    log(`${variant.name}: warm-up 3 s`);
    // One heavy kind at a time: the heavy key may have 16 requests in flight, not 32.
    await drive([light, facets], key, 2);
    await drive([nested], key, 1);
    for (const [phase, callers] of [
      ['light alone', [light]],
      [`facets alone (${config.concurrency} connections)`, [facets]],
      ['light + facets', [light, facets]],
      [`nested pages alone (${config.concurrency} connections)`, [nested]],
      ['light + nested pages', [light, nested]],
    ] as const) {
      log(`${variant.name}: ${phase}, ${config.seconds} s`);
      const times = await drive([...callers], key, config.seconds);
      for (const [name, spent] of times) row(phase, name, spent);
    }
    light.http.close();
    heavyHttp.close();
  } finally {
    await service.stop();
  }
}

async function main(): Promise<void> {
  const config = loadBenchConfig();
  await prepareDatabase(config.databaseUrl, config.scale, false); // the service alone: no PostGraphile indexes
  const keptDir = config.snapshotDir === null ? null : resolve(config.snapshotDir);
  const baseDir = keptDir ?? mkdtempSync(join(tmpdir(), 'cds-bench-fairness-'));
  const variants = config.variants ?? [{ name: 'this', root: ROOT, env: {} }];
  const rows: string[] = [];
  try {
    // Each variant keeps its own snapshots, as in bench:compare: another revision may write another format.
    for (const variant of variants) {
      const dir = join(baseDir, variant.name);
      mkdirSync(dir, { recursive: true });
      await measure(variant, dir, rows);
    }
  } finally {
    if (keptDir === null) rmSync(baseDir, { recursive: true, force: true });
  }
  process.stdout.write(
    [
      `${new Date().toISOString()}, ${config.scale.creators.toLocaleString('en-US')} creators, ${config.seconds} s a phase; the light account ${LIGHT_CONNECTIONS} connections.`,
      '',
      '| variant | phase | account | req/s | p50 ms | p99 ms |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:fairness: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});

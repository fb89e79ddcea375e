// npm run bench:compare: two or more variants of the service (settings, or another revision's
// built checkout) measured in turn on the same database, so a change is judged against its
// neighbour in time and not against a run an hour earlier: on a shared 2-core machine the speed
// drifts by a third within minutes. Every variant runs at once (each from its own index
// snapshot), and each workload is driven on one at a time for BENCH_SECONDS, round after round,
// the order reversed every other round; within a round every variant gets the very same
// requests. Before a workload is timed its first BENCH_CHECK_SAMPLES sessions must get the same
// answers from every variant as from the first (a faster variant that answers otherwise is not
// faster); no PostGraphile and no floor: `npm run bench` compares with those.
// Settings: bench/config.ts (BENCH_VARIANTS, BENCH_ROUNDS and the common ones).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkSessions, reportMismatches } from './check.js';
import { serviceClient } from './clients.js';
import { loadBenchConfig } from './config.js';
import { prepareDatabase, readVocabulary } from './database.js';
import { drive, fetchPage, HttpClient, percentile, type Measurement } from './load.js';
import { fixed } from './report.js';
import type { Session } from './specs.js';
import { createServiceKey, findSnapshot, peakRssMb, snapshotWritten, startService, type RunningSystem } from './systems.js';
import { selectWorkloads, sessionSequence } from './workloads.js';

const log = (line: string) => process.stderr.write(`bench:compare: ${line}\n`);

interface Started {
  name: string;
  service: RunningSystem;
  http: HttpClient;
}

async function main(): Promise<number> {
  const config = loadBenchConfig();
  if (!config.variants) throw new Error('BENCH_VARIANTS is required, e.g. "before: HEAP_GROWTH_PERCENT=25; after: HEAP_GROWTH_PERCENT=50"');
  const workloads = selectWorkloads(config.workloads);
  await prepareDatabase(config.databaseUrl, config.scale, false); // the service alone: no PostGraphile indexes
  const vocab = await readVocabulary(config.databaseUrl);
  const key = await createServiceKey(config.databaseUrl);
  const client = serviceClient(key);

  // Each variant keeps its own snapshots: another revision may write another format.
  const keptDir = config.snapshotDir === null ? null : resolve(config.snapshotDir);
  const baseDir = keptDir ?? mkdtempSync(join(tmpdir(), 'cds-bench-compare-'));
  const readyWithinMs = 10 * 60_000 * config.scaleFactor;
  const started: Started[] = [];
  try {
    // One at a time: two index builds side by side would each take twice as long.
    for (const variant of config.variants) {
      const dir = join(baseDir, variant.name);
      mkdirSync(dir, { recursive: true });
      if (findSnapshot(dir, config.servicePartitions) === null) {
        log(`${variant.name}: building its index snapshot in ${dir}`);
        const builder = await startService(config.databaseUrl, dir, readyWithinMs, variant);
        await snapshotWritten(dir, readyWithinMs, config.servicePartitions).finally(() => builder.stop());
      }
      const service = await startService(config.databaseUrl, dir, readyWithinMs, variant);
      started.push({ name: variant.name, service, http: new HttpClient(service.url, config.concurrency) });
      log(`${variant.name}: ${variant.root}${Object.keys(variant.env).length ? ` with ${Object.entries(variant.env).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}, ready`);
    }

    let mismatches = 0;
    for (const workload of workloads) {
      const targets = Object.fromEntries(started.map((s) => [s.name, { client, http: s.http }]));
      const outcome = await checkSessions(targets, started[0].name, sessionSequence(workload, vocab, config.seed), config.checkSamples);
      log(`checked ${workload.id}: ${outcome.sessions} sessions, ${outcome.pages} pages, ${outcome.mismatches.length} mismatches`);
      reportMismatches(workload.id, outcome);
      mismatches += outcome.mismatches.length;
    }
    if (mismatches > 0 && !config.allowMismatch) {
      log(`the variants disagree with ${started[0].name} (above); not measuring. BENCH_ALLOW_MISMATCH=1 measures anyway.`);
      return 1;
    }

    const sections: string[] = [];
    let errors = 0;
    for (const workload of workloads) {
      const measured = new Map<string, Measurement[]>(started.map((s) => [s.name, []]));
      const drives = (target: Started, seconds: number, seed: string) =>
        drive({
          seconds,
          concurrency: config.concurrency,
          serverPid: target.service.pid,
          sessionAt: sessionSequence(workload, vocab, seed),
          page: (session: Session, step: number, cursor: string | null) => fetchPage(target.http, client, session, step, cursor),
        });
      if (config.warmupSeconds > 0) {
        log(`${workload.id}: warm-up ${config.warmupSeconds} s each`);
        for (const target of started) await drives(target, config.warmupSeconds, `${config.seed}:warm-up`);
      }
      for (let round = 0; round < config.rounds; round++) {
        const order = round % 2 === 0 ? started : [...started].reverse();
        for (const target of order) {
          const m = await drives(target, config.seconds, `${config.seed}:${round}`);
          target.service.assertAlive();
          measured.get(target.name)!.push(m);
          errors += m.errors;
          log(`${workload.id} round ${round + 1}/${config.rounds} ${target.name}: ${(m.requests / m.seconds).toFixed(0)} req/s, ${m.errors} errors`);
        }
      }
      sections.push(comparison(workload.name, started[0].name, measured));
    }
    const peaks = started.map((s) => `${s.name} ${peakRssMb(s.service.pid) ?? '–'} MiB`).join(', ');
    process.stdout.write(
      [
        `${config.concurrency} connections, ${config.rounds} rounds of ${config.seconds} s a variant and workload, the order reversed every other round; ` +
          `per request: server CPU (event loop / search index / V8 helpers and libuv) and the rest of the machine (PostgreSQL mostly). Peak RSS: ${peaks}.`,
        '',
        ...sections,
      ].join('\n') + '\n',
    );
    return errors > 0 ? 1 : 0;
  } finally {
    for (const target of started) target.http.close();
    await Promise.all(started.map((target) => target.service.stop()));
    if (keptDir === null) rmSync(baseDir, { recursive: true, force: true });
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const perRequest = (m: Measurement, seconds: number) => (seconds / Math.max(1, m.requests)) * 1000;

/** One table a workload: each variant's rounds, and its rate against the first variant's in the same round. */
function comparison(title: string, reference: string, measured: Map<string, Measurement[]>): string {
  const base = measured.get(reference)!;
  const lines = [...measured].map(([name, runs]) => {
    const rates = runs.map((m) => m.requests / m.seconds);
    const ratios = runs.map((m, round) => m.requests / m.seconds / (base[round].requests / base[round].seconds));
    const cpu = (pick: (m: Measurement) => number) => fixed(median(runs.map((m) => perRequest(m, pick(m)))), 2);
    // Clock ticks round each reading: never below nothing.
    const rest = (m: Measurement) => Math.max(0, m.cpu.machine - m.cpu.server - m.cpu.loadGenerator);
    const errors = runs.reduce((sum, m) => sum + m.errors, 0);
    return `| ${name} | ${rates.map((r) => fixed(r, 0)).join(', ')} | ${name === reference ? '–' : `${fixed(median(ratios), 3)} (${fixed(Math.min(...ratios), 2)}–${fixed(Math.max(...ratios), 2)})`} | ${fixed(median(runs.map((m) => percentile(m.latencies, 0.99))), 1)} | ${cpu((m) => m.cpu.server)} (${cpu((m) => m.cpu.serverThreads.main)} / ${cpu((m) => m.cpu.serverThreads.search)} / ${cpu((m) => m.cpu.serverThreads.runtime)}) | ${cpu(rest)} | ${errors} |`;
  });
  return [
    `### ${title}`,
    '',
    `| variant | req/s by round | × ${reference} in the same round: median (range) | p99 ms, median | server CPU ms/req, median (event loop / index / helpers) | rest of the machine ms/req | errors |`,
    '|---|---|---|---|---|---|---|',
    ...lines,
    '',
  ].join('\n');
}

process.exitCode = await main().catch((error: unknown) => {
  process.stderr.write(`bench:compare: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});

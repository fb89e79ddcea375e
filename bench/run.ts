// npm run bench: the service against PostGraphile v4 and a raw-SQL floor, over HTTP, on the same
// seeded PostgreSQL database, in one run. Progress on stderr; the results table on stdout and in
// bench/RESULTS.md. Settings: bench/config.ts (BENCH_* variables).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '../src/config.js';
import { checkSessions, reportMismatches, type CheckOutcome, type Target } from './check.js';
import { floorClient, postgraphileClient, serviceClient, type SystemClient, type SystemName } from './clients.js';
import { loadBenchConfig } from './config.js';
import { loadAverage, machineFacts, prepareDatabase, readVocabulary } from './database.js';
import { drive, fetchPage, HttpClient, type Measurement } from './load.js';
import type { Session } from './specs.js';
import { describeRows, resultSections, statementsTable, writeResults, type WorkloadResult } from './report.js';
import { startStatementCounter, type StatementCounter } from './statement-counter.js';
import { childEnv, createServiceKey, findSnapshot, peakRssMb, ROOT, runCommand, snapshotWritten, startFloor, startPostgraphile, startService, type RunningSystem } from './systems.js';
import { selectWorkloads, sessionSequence, type Vocabulary, type Workload } from './workloads.js';

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);

async function ensureBenchDependencies(): Promise<void> {
  if (existsSync(join(ROOT, 'bench', 'node_modules'))) return;
  log('installing the benchmark-only dependencies (npm ci --prefix bench)');
  await runCommand('npm', ['ci', '--prefix', 'bench', '--no-audit', '--no-fund']);
}

async function main(): Promise<number> {
  const config = loadBenchConfig();
  const workloads = selectWorkloads(config.workloads);
  await ensureBenchDependencies();
  const sqlSystems = config.systems.some((name) => name !== 'service');
  const { rows, seedSeconds } = await prepareDatabase(config.databaseUrl, config.scale, sqlSystems);
  log(`data: ${describeRows(rows)}`);
  const vocab: Vocabulary = await readVocabulary(config.databaseUrl);
  const machine = await machineFacts(config.databaseUrl);
  const names = config.systems;
  const serviceAlone = names.length === 1;

  // The service's index snapshots go to a folder of this run's own (or BENCH_SNAPSHOT_DIR): the
  // first start builds the index from the database and writes one, the second starts from it and
  // is the one measured. A kept folder that already holds a snapshot skips the first start.
  const keptDir = config.snapshotDir === null ? null : resolve(config.snapshotDir);
  if (keptDir !== null) mkdirSync(keptDir, { recursive: true });
  const snapshotDir = keptDir ?? mkdtempSync(join(tmpdir(), 'cds-bench-snapshots-'));
  const reuseSnapshot = findSnapshot(snapshotDir, config.servicePartitions) !== null;
  log(
    reuseSnapshot
      ? `starting ${names.join(', ')} (the service from the snapshot in ${snapshotDir}: no build from PostgreSQL measured)`
      : `starting ${names.join(', ')} (the service's index built from PostgreSQL: no snapshot yet)`,
  );
  const readyWithinMs = 10 * 60_000 * config.scaleFactor;
  const running: RunningSystem[] = [];
  const https: HttpClient[] = [];
  const relays: StatementCounter[] = [];
  try {
    // Settled one by one, so whichever started is stopped below even if another failed.
    // With BENCH_COUNT_STATEMENTS=1 each system reaches PostgreSQL through its own counting relay.
    const counters = {} as Record<SystemName, StatementCounter>;
    if (config.countStatements) {
      for (const name of names) {
        counters[name] = await startStatementCounter(config.databaseUrl);
        relays.push(counters[name]);
      }
    }
    const urlOf = (name: SystemName) => counters[name]?.url ?? config.databaseUrl;
    const starters: Record<SystemName, () => Promise<RunningSystem>> = {
      service: () => startService(urlOf('service'), snapshotDir, readyWithinMs),
      postgraphile: () => startPostgraphile(urlOf('postgraphile'), config.poolSize),
      floor: () => startFloor(urlOf('floor'), config.poolSize),
    };
    const started = await Promise.allSettled(names.map((name) => starters[name]()));
    for (const outcome of started) if (outcome.status === 'fulfilled') running.push(outcome.value);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
    let built: RunningSystem | null = null;
    let buildPeakRssMb: number | null = null;
    if (!reuseSnapshot) {
      built = running.find((system) => system.name === 'service')!;
      await snapshotWritten(snapshotDir, readyWithinMs, config.servicePartitions);
      buildPeakRssMb = peakRssMb(built.pid);
      await built.stop();
      running.splice(running.indexOf(built), 1);
      log('restarting the service from its snapshot');
      running.push(await startService(urlOf('service'), snapshotDir, readyWithinMs));
    }
    const snapshot = await snapshotWritten(snapshotDir, readyWithinMs, config.servicePartitions);
    const key = await createServiceKey(config.databaseUrl);
    const clients: Record<SystemName, () => SystemClient> = {
      service: () => serviceClient(key),
      postgraphile: () => postgraphileClient(vocab.taxonomy),
      floor: () => floorClient(),
    };
    const systems = Object.fromEntries(running.map((s) => [s.name, s])) as Record<SystemName, RunningSystem>;
    const targets: Record<string, Target> = {};
    for (const name of names) {
      const http = new HttpClient(systems[name].url, config.concurrency);
      https.push(http);
      targets[name] = { client: clients[name](), http, statements: counters[name]?.count };
    }

    let checkedSessions = 0;
    let checkedPages = 0;
    let mismatches = 0;
    const statements = new Map<Workload, CheckOutcome['statements']>();
    // The systems asked for a workload: those running that can answer it.
    const askedFor = (workload: Workload) => names.filter((name) => workload.systems?.includes(name) ?? true);
    for (const workload of workloads) {
      const asked = askedFor(workload);
      log(`checking ${workload.id}: the first ${config.checkSamples} sessions on ${asked.length === 1 ? `the ${asked[0]} alone (no reference to compare with)` : asked.join(', ')}`);
      const askedTargets = Object.fromEntries(asked.map((name) => [name, targets[name]]));
      const outcome = await checkSessions(askedTargets, 'floor', sessionSequence(workload, vocab, config.seed), config.checkSamples);
      checkedSessions += outcome.sessions;
      checkedPages += outcome.pages;
      mismatches += outcome.mismatches.length;
      reportMismatches(workload.id, outcome);
      if (config.countStatements) statements.set(workload, outcome.statements);
    }
    if (config.countStatements) {
      process.stdout.write(`${statementsTable(workloads.map((workload) => ({ workload, statements: statements.get(workload) })))}\n\n`);
    }
    const checked = `${checkedSessions} sessions, ${checkedPages} pages ${serviceAlone ? 'run on the service alone (not compared)' : 'compared'}, ${mismatches} ${serviceAlone ? 'failures' : 'mismatches'}${mismatches && config.allowMismatch ? ' (allowed by BENCH_ALLOW_MISMATCH=1)' : ''}`;
    log(`check: ${checked}`);
    if (mismatches > 0 && !config.allowMismatch) {
      log('the systems disagree (above); not measuring. BENCH_ALLOW_MISMATCH=1 measures anyway.');
      return 1;
    }
    if (config.checkOnly) return mismatches > 0 ? 1 : 0;

    const results: WorkloadResult[] = [];
    for (const workload of workloads) {
      const measured: Partial<Record<SystemName, Measurement>> = {};
      for (const name of askedFor(workload)) {
        const { client, http } = targets[name]!;
        const page = (session: Session, step: number, cursor: string | null) => fetchPage(http, client, session, step, cursor);
        const common = { concurrency: config.concurrency, page, serverPid: systems[name].pid };
        if (config.warmupSeconds > 0) {
          log(`${workload.id} / ${name}: warm-up ${config.warmupSeconds} s`);
          await drive({ ...common, seconds: config.warmupSeconds, sessionAt: sessionSequence(workload, vocab, `${config.seed}:warm-up`) });
        }
        log(`${workload.id} / ${name}: measuring ${config.seconds} s at ${config.concurrency} connections`);
        measured[name] = await drive({ ...common, seconds: config.seconds, sessionAt: sessionSequence(workload, vocab, config.seed) });
        systems[name].assertAlive();
        const m = measured[name]!;
        log(`${workload.id} / ${name}: ${(m.requests / m.seconds).toFixed(0)} req/s, ${m.errors} errors`);
      }
      results.push({ workload, measured, statements: statements.get(workload) });
    }

    process.stdout.write(
      [`${describeRows(rows)}; ${config.concurrency} connections, ${config.seconds} s per workload and system`, '', ...resultSections(results)].join('\n'),
    );
    writeResults(
      resolve(ROOT, config.resultsPath),
      {
        date: new Date().toISOString(),
        machine,
        rows,
        concurrency: config.concurrency,
        seconds: config.seconds,
        warmupSeconds: config.warmupSeconds,
        poolSize: config.poolSize,
        // The environment passes through to the service (childEnv): its pool is what its config makes of it.
        servicePoolSize: loadConfig(childEnv(config.databaseUrl)).poolSize,
        checked,
        loadAverageAtEnd: loadAverage(),
        scaleFactor: config.scaleFactor,
        systems: names,
        seedSeconds,
        service: {
          readyFromDatabaseSeconds: built?.readySeconds ?? null,
          readyFromSnapshotSeconds: systems.service.readySeconds ?? null,
          snapshotRejected: systems.service.index?.from === 'database' ? (systems.service.index.snapshotRejected ?? 'no snapshot was found') : null,
          snapshotMb: Math.round(snapshot.bytes / 1_048_576),
          partitions: config.servicePartitions,
          buildPeakRssMb,
          peakRssMb: peakRssMb(systems.service.pid),
        },
      },
      results,
    );
    log(`results written to ${config.resultsPath}`);
    return results.some((r) => Object.values(r.measured).some((m) => m.errors > 0)) ? 1 : 0;
  } finally {
    for (const http of https) http.close();
    await Promise.all(running.map((s) => s.stop()));
    await Promise.all(relays.map((relay) => relay.close()));
    if (keptDir === null) rmSync(snapshotDir, { recursive: true, force: true });
  }
}

process.exitCode = await main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});

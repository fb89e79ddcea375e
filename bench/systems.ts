// The three systems under test, each its own child process on a free local port: the service
// (`creator-data serve`), PostGraphile v4 (postgraphile-server.mjs) and the raw-SQL floor
// (floor-server.ts). Each prints "… listening on <url>" when ready; its stderr is kept (last
// lines only) to explain a crash.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { SystemName } from './clients.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const READY_TIMEOUT_MS = 120_000;
const STDERR_KEPT = 4_000;

export interface RunningSystem {
  name: SystemName;
  url: string;
  pid: number;
  /** Seconds from spawn to ready (the service: to `/readyz` 200, its index loaded). */
  readySeconds?: number;
  /** The service: where its index came from, and why a snapshot it was given was not used. */
  index?: { from: 'snapshot' } | { from: 'database'; snapshotRejected: string | null };
  /** The child's stderr lines about its search index, as written (the service logs JSON there). */
  indexLog(): string[];
  /** Throws with the child's last stderr lines if it has died. */
  assertAlive(): void;
  stop(): Promise<void>;
}

/**
 * The child's environment: the bench database on loopback, nothing that would change what is
 * measured (no shared Redis limiter, no live-stream collector, no admin schema).
 */
export function childEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', HOST: '127.0.0.1', ...extra };
  // All three TWITCH_* go: the client id or token without the URL is refused at start (src/config.ts).
  for (const name of ['REDIS_URL', 'TWITCH_API_URL', 'TWITCH_CLIENT_ID', 'TWITCH_TOKEN', 'ADMIN_TOKEN']) delete env[name];
  return env;
}

function start(name: SystemName, args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): Promise<RunningSystem> {
  const child: ChildProcess = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let partial = '';
  const indexLines: string[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEPT);
    // Whole lines only; the few about the index are kept whatever else the child writes.
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!.slice(-STDERR_KEPT);
    for (const line of lines) if (line.includes('"message":"search index') && indexLines.length < 50) indexLines.push(line);
  });
  const died = () => new Error(`${name} exited (code ${child.exitCode ?? child.signalCode}); its last stderr:\n${stderr}`);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not report a listening address within ${READY_TIMEOUT_MS / 1000} s; its last stderr:\n${stderr}`));
    }, READY_TIMEOUT_MS);
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /listening on (http:\/\/[^\s)]+)/.exec(stdout);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.removeAllListeners('data').resume();
      resolve({
        name,
        url: match[1],
        pid: child.pid!,
        indexLog: () => [...indexLines],
        assertAlive: () => {
          if (child.exitCode !== null || child.signalCode !== null) throw died();
        },
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          // The service writes its index snapshot at shutdown when it moved on: give it time.
          const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
          await exited;
          clearTimeout(killer);
        },
      });
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(died());
    });
  });
}

/**
 * The service, once ready: it listens at once and serves searches through SQL until its in-memory
 * index has loaded, and /readyz says 200 only then (a load balancer would wait the same way).
 */
export async function startService(
  databaseUrl: string,
  snapshotDir: string,
  readyWithinMs = READY_TIMEOUT_MS * 4,
  variant: ServiceVariant = { root: ROOT, env: {} },
): Promise<RunningSystem> {
  // BENCH_SERVICE_NODE_ARGS go to the service's node alone (e.g. --cpu-prof to see where its time goes).
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // Run as docs/operations.md runs it, unless GLIBC_TUNABLES is set (here or in a variant; empty:
  // without): glibc's malloc asks for transparent huge pages, so a snapshot's bytes fault in 2 MB at a time.
  const hugePages = { GLIBC_TUNABLES: process.env.GLIBC_TUNABLES ?? 'glibc.malloc.hugetlb=1' };
  const env = childEnv(databaseUrl, { ...hugePages, ...variant.env, SEARCH_SNAPSHOT_DIR: snapshotDir });
  const service = await start('service', [...nodeArgs, 'bin/creator-data.js', 'serve'], env, variant.root);
  const started = performance.now();
  for (;;) {
    service.assertAlive();
    const ready = await fetch(`${service.url}/readyz`).then((response) => response.status === 200, () => false);
    if (ready) break;
    if (performance.now() - started > readyWithinMs) {
      await service.stop();
      throw new Error('the service did not become ready (search index loaded)');
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const readySeconds = (performance.now() - started) / 1000;
  // The log line that says how the index loaded may reach the pipe a moment after /readyz.
  for (let waited = 0; waited < 2_000 && !service.indexLog().some((line) => line.includes('"message":"search index loaded')); waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const index = indexSource(service.indexLog());
  const from = index.from === 'snapshot' ? 'from its snapshot' : index.snapshotRejected ? `from PostgreSQL: its snapshot was not used (${index.snapshotRejected})` : 'from PostgreSQL';
  process.stderr.write(`bench: service ready (search index loaded ${from}) after ${readySeconds.toFixed(1)} s\n`);
  return { ...service, readySeconds, index };
}

/**
 * Where the service's index came from, read from its log (src/search/runtime/search-index.ts): a
 * snapshot the service was given may be refused (the change feed pruned past it, another format,
 * a corrupt file), and the index then built from PostgreSQL as if there were none.
 */
export function indexSource(lines: readonly string[]): NonNullable<RunningSystem['index']> {
  let rejected: string | null = null;
  for (const line of lines) {
    let entry: { message?: unknown; reason?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (entry.message === 'search index loaded from its snapshot') return { from: 'snapshot' };
    if (entry.message === 'search index snapshot not used; loading from the database') rejected = String(entry.reason ?? 'no reason given');
  }
  return { from: 'database', snapshotRejected: rejected };
}

/** Which service to start: a built checkout (this one, or another revision's) and settings of its own (bench/compare.ts). */
export interface ServiceVariant {
  root: string;
  env: Record<string, string>;
}

/** The snapshot files in `dir`, one per partition of the service's index, or null until all are there. */
export function findSnapshot(dir: string, partitions: number): { bytes: number } | null {
  const files = readdirSync(dir).filter((name) => name.endsWith('.snapshot'));
  return files.length < partitions ? null : { bytes: files.reduce((sum, name) => sum + statSync(join(dir, name)).size, 0) };
}

/** The snapshot files the service writes once its index is built (ready may come a moment before). */
export async function snapshotWritten(dir: string, withinMs: number, partitions: number): Promise<{ bytes: number }> {
  const started = performance.now();
  for (;;) {
    const found = findSnapshot(dir, partitions);
    if (found) return found;
    if (performance.now() - started > withinMs) throw new Error(`the service wrote no index snapshot in ${dir}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** A process's peak resident memory so far in MiB (Linux VmHWM), or null where /proc has none. */
export function peakRssMb(pid: number): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

export const startPostgraphile = (databaseUrl: string, poolSize: number) =>
  start('postgraphile', ['bench/postgraphile-server.mjs'], childEnv(databaseUrl, { POOL_SIZE: String(poolSize) }));
export const startFloor = (databaseUrl: string, poolSize: number) =>
  start('floor', ['--import', 'tsx', 'bench/floor-server.ts'], childEnv(databaseUrl, { POOL_SIZE: String(poolSize) }));

/** A fresh account and key on the pro plan through the service's own CLI; the raw key. */
export async function createServiceKey(databaseUrl: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['bin/creator-data.js', 'keys', 'create', '--plan', 'pro', '--quota', '1000000000000', '--rate', '100000', '--json'],
    { cwd: ROOT, env: childEnv(databaseUrl) },
  );
  return (JSON.parse(stdout) as { key: string }).key;
}

/** Runs a command in the repository root; all its output goes to stderr, where progress belongs. */
export function runCommand(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', process.stderr, process.stderr] });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} failed (${code ?? signal})`))));
  });
}


// The results as Markdown: one table for the terminal (stdout) and the same tables, with the
// machine, PostgreSQL settings and data set they were measured on, in bench/RESULTS.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { SYSTEM_NAMES, type SystemName } from './clients.js';
import type { MachineFacts, Scale } from './database.js';
import { percentile, type Measurement, type ServerThreads } from './load.js';
import type { Workload } from './workloads.js';

export interface WorkloadResult {
  workload: Workload;
  /** By system run (BENCH_SYSTEMS); the service always. */
  measured: Partial<Record<SystemName, Measurement>>;
  /** Statements per request in the check (BENCH_COUNT_STATEMENTS=1), by system. */
  statements?: Partial<Record<SystemName, number[]>>;
}

/** Median statements per request and their range, e.g. `2 (2–3)`; `–` where not counted. */
export function statementsSummary(counts: number[] | undefined): string {
  if (!counts?.length) return '–';
  const sorted = [...counts].sort((a, b) => a - b);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  return sorted[0] === sorted.at(-1) ? String(median) : `${median} (${sorted[0]}–${sorted.at(-1)})`;
}

const statementsCell = (statements: WorkloadResult['statements']) =>
  (['service', 'postgraphile', 'floor'] as const).map((s) => statementsSummary(statements?.[s])).join(' / ');

/** Statements per request alone, for a run that only checks (BENCH_CHECK_ONLY=1). */
export function statementsTable(rows: { workload: Workload; statements: WorkloadResult['statements'] }[]): string {
  return [
    row(['workload', 'statements per request, median (range): service / PostGraphile / floor']),
    '|---|---|',
    ...rows.map((r) => row([r.workload.name, statementsCell(r.statements)])),
  ].join('\n');
}

const LABEL: Record<SystemName, string> = { service: 'service', postgraphile: 'PostGraphile', floor: 'floor' };
const rate = (m: Measurement | undefined) => (m ? m.requests / m.seconds : NaN);
/** A figure with `digits` decimals, `–` where there is none. */
export const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
/** Requests per second: a decimal where the rate is low enough for it to matter (count-bound workloads at scale). */
const perSecond = (m: Measurement | undefined) => fixed(rate(m), rate(m) < 100 ? 1 : 0);
const latency = (m: Measurement | undefined) => (m ? `${fixed(percentile(m.latencies, 0.5), 1)} / ${fixed(percentile(m.latencies, 0.99), 1)}` : '–');
const count = (n: number) => n.toLocaleString('en-US');
const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;

function throughputTable(results: WorkloadResult[]): string {
  const counted = results.some((r) => r.statements);
  const header = row([
    'workload',
    ...(['service', 'postgraphile', 'floor'] as const).flatMap((s) => [`${LABEL[s]} req/s`, `${LABEL[s]} p50 / p99 ms`]),
    'service / PostGraphile',
    'service / floor',
    ...(counted ? ['statements per request: service / PostGraphile / floor'] : []),
  ]);
  const lines = results.map(({ workload, measured: m, statements }) =>
    row([
      workload.name,
      perSecond(m.service),
      latency(m.service),
      perSecond(m.postgraphile),
      latency(m.postgraphile),
      perSecond(m.floor),
      latency(m.floor),
      fixed(rate(m.service) / rate(m.postgraphile), 2),
      fixed(rate(m.service) / rate(m.floor), 2),
      ...(counted ? [statementsCell(statements)] : []),
    ]),
  );
  return [header, `|${'---|'.repeat(counted ? 10 : 9)}`, ...lines].join('\n');
}

/** Where the CPU went per request: the generator itself, the server process (and its threads), the whole machine. */
function cpuTable(results: WorkloadResult[]): string {
  const lines = results.flatMap(({ workload, measured }) =>
    (['service', 'postgraphile', 'floor'] as const).flatMap((system) => {
      const m = measured[system];
      if (!m) return [];
      const perRequest = (seconds: number) => fixed((seconds / Math.max(1, m.requests)) * 1000, 2);
      return row([
        workload.name,
        LABEL[system],
        m.requests,
        m.errors,
        perRequest(m.cpu.loadGenerator),
        fixed(m.loadGeneratorBusy * 100),
        perRequest(m.cpu.server),
        threadsCell(m.cpu.serverThreads, perRequest),
        perRequest(Math.max(0, m.cpu.machine - m.cpu.loadGenerator - m.cpu.server)),
        fixed((m.cpu.machine / m.seconds) * 100),
      ]);
    }),
  );
  return [
    row([
      'workload',
      'system',
      'requests',
      'errors',
      'load generator CPU ms/req',
      'load generator event loop busy %',
      'server CPU ms/req',
      'of which: event loop / search index / V8 helpers and libuv',
      'PostgreSQL + rest CPU ms/req',
      'machine busy % (all cores)',
    ]),
    `|${'---|'.repeat(10)}`,
    ...lines,
  ].join('\n');
}

/** The server's CPU by thread; the search index's as – for a server that has none. */
function threadsCell(threads: ServerThreads, perRequest: (seconds: number) => string): string {
  if (threads.main + threads.search + threads.runtime === 0) return '–';
  return `${perRequest(threads.main)} / ${threads.search > 0 ? perRequest(threads.search) : '–'} / ${perRequest(threads.runtime)}`;
}

function notes(results: WorkloadResult[]): string[] {
  const lines = results.filter((r) => r.workload.note).map((r) => `- ${r.workload.name}: ${r.workload.note}`);
  for (const { workload, measured } of results) {
    for (const system of ['service', 'postgraphile', 'floor'] as const) {
      const m = measured[system];
      if (m && m.errors > 0) lines.push(`- ${workload.name}: ${LABEL[system]} had ${m.errors} failed sessions; first: ${m.firstError}`);
    }
  }
  return lines;
}

/** Event-loop busy share above which the generator itself may cap the rate. */
const SATURATED = 0.8;

/** The load generator's own cost over the run, and whether it came near being the limit. */
function loadGeneratorSummary(results: WorkloadResult[]): string {
  const all = results.flatMap((r) => Object.values(r.measured).filter((m): m is Measurement => m !== undefined));
  const costs = all.map((m) => (m.cpu.loadGenerator / Math.max(1, m.requests)) * 1000);
  const busiest = all.reduce((a, b) => (b.loadGeneratorBusy > a.loadGeneratorBusy ? b : a));
  return (
    `Load generator (this process, node:http keep-alive agent, JSON parsed for every answer): ` +
    `${fixed(Math.min(...costs), 2)}–${fixed(Math.max(...costs), 2)} ms CPU per request; its event loop was busy at most ` +
    `${fixed(busiest.loadGeneratorBusy * 100)} % of the time (while driving ${fixed(rate(busiest))} req/s)` +
    (busiest.loadGeneratorBusy < SATURATED
      ? ', so it was not the limit; its CPU is still taken from the systems under test on a machine this small.'
      : ': near saturation, so the fastest figures are partly the generator\'s limit, not the system\'s.')
  );
}

/** The tables and notes of a run, as printed on stdout and written into the results file. */
export function resultSections(results: WorkloadResult[]): string[] {
  const noted = notes(results);
  return [throughputTable(results), '', ...(noted.length ? [...noted, ''] : []), loadGeneratorSummary(results), '', cpuTable(results), ''];
}

export const describeRows = (rows: Scale) =>
  `${count(rows.creators)} creators, ${count(rows.channels)} channels, ${count(rows.videos)} videos, ${count(rows.live)} live streams`;

export interface RunFacts {
  date: string;
  machine: MachineFacts;
  rows: Scale;
  concurrency: number;
  seconds: number;
  warmupSeconds: number;
  poolSize: number;
  /** The service's own pool (its DB_POOL_SIZE, as it read its environment). */
  servicePoolSize: number;
  checked: string;
  loadAverageAtEnd: string;
  /** The data set's multiple of the 1M-creator one (BENCH_SCALE): each has its own part of the results file. */
  scaleFactor: number;
  /** The systems run (BENCH_SYSTEMS): a run of fewer than all three has a part of its own. */
  systems: SystemName[];
  /** Seconds the seed took, when this run seeded. */
  seedSeconds: number | null;
  service: {
    /** Start to ready with no snapshot: the index built from PostgreSQL. */
    readyFromDatabaseSeconds: number | null;
    /** Start to ready from the snapshot that build wrote (the process measured). */
    readyFromSnapshotSeconds: number | null;
    /** Why the measured process built its index from PostgreSQL after all (a snapshot refused), or null. */
    snapshotRejected: string | null;
    snapshotMb: number | null;
    /** The service's SEARCH_PARTITIONS. */
    partitions: number;
    /** Peak RSS of the process that built the index, and of the one measured (over the whole run). */
    buildPeakRssMb: number | null;
    peakRssMb: number | null;
  };
}

const SYSTEM_DESCRIPTION: Record<SystemName, string> = {
  service: 'service: `creator-data serve` (whole pipeline: key, limits, validation, quota, GraphQL, rendering), one `pro` key',
  postgraphile:
    'PostGraphile v4 library mode + connection-filter (relations on) + @graphile/pg-aggregates, query log off, on node:http, with the 9 filter indexes the service\'s schema does without (bench/database.ts)',
  floor: 'floor: node:http + `pg`, the plain page statement and plain `count(*)` a hand-written endpoint would send, on the same indexes',
};
const seconds = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(1)} s`);
const mebibytes = (value: number | null) => (value === null ? 'n/a' : `${value.toLocaleString('en-US')} MiB`);
const FILE_HEAD = [
  '# Benchmark results',
  '',
  'Written by `npm run bench`, one part per data set (`BENCH_SCALE`), each replaced by the next run at',
  'its scale. Ratios matter more than absolute figures: all three systems ran on the same machine in',
  'the same run, one after the other, against the same database.',
].join('\n');
/** A part's key: its scale, and the systems when fewer than all three ran (`10 service`). */
const partKey = (facts: RunFacts) =>
  facts.systems.length === SYSTEM_NAMES.length ? String(facts.scaleFactor) : `${facts.scaleFactor} ${facts.systems.join('+')}`;
const partMark = (key: string) => `<!-- bench scale ${key} -->`;
/** By scale, then the full run before a partial one. */
const partOrder = (a: string, b: string) => parseInt(a, 10) - parseInt(b, 10) || a.length - b.length || a.localeCompare(b);

/** The parts of an existing results file by key (a file from before parts: all of it at ×1). */
function existingParts(path: string): Map<string, string> {
  const parts = new Map<string, string>();
  if (!existsSync(path)) return parts;
  const text = readFileSync(path, 'utf8');
  const marks = [...text.matchAll(/<!-- bench scale (\d+(?: [a-z+]+)?) -->\n/g)];
  if (marks.length === 0) {
    const legacy = text.replace(/^# Benchmark results\n\n/, '').trim();
    if (legacy) parts.set('1', `## Scale ×1\n\n${legacy.replace(/^## /gm, '### ')}`);
    return parts;
  }
  marks.forEach((mark, i) => parts.set(mark[1], text.slice(mark.index! + mark[0].length, marks[i + 1]?.index ?? text.length).trim()));
  return parts;
}

export function writeResults(path: string, facts: RunFacts, results: WorkloadResult[]): void {
  const m = facts.machine;
  const s = facts.service;
  const partial = facts.systems.length < SYSTEM_NAMES.length;
  const part = [
    `## Scale ×${facts.scaleFactor}${partial ? `, ${facts.systems.map((name) => LABEL[name]).join(' and ')} only` : ''}`,
    '',
    `Measured on ${facts.date}.${partial ? ` Only ${facts.systems.map((name) => LABEL[name]).join(' and ')} ran (\`BENCH_SYSTEMS\`): the ratios of the others are blank.` : ''}`,
    '',
    '### Setup',
    '',
    `- Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB memory; load average at start ${m.loadAverage}, at the end ${facts.loadAverageAtEnd} (the machine is shared).`,
    `- Node ${m.node}, PostgreSQL ${m.postgres}.`,
    `- PostgreSQL settings: ${Object.entries(m.settings).map(([k, v]) => `\`${k}\` = ${v}`).join(', ')}.`,
    `- Data: ${describeRows(facts.rows)}.`,
    `- ${facts.concurrency} keep-alive connections, ${facts.warmupSeconds} s warm-up then ${facts.seconds} s per workload and system; ` +
      `pools: service ${facts.servicePoolSize} connections, PostGraphile and floor ${facts.poolSize}.`,
    `- ${facts.systems
      .map((name) => SYSTEM_DESCRIPTION[name] + (name === 'service' && s.partitions > 1 ? `, the search index in ${s.partitions} partitions (\`SEARCH_PARTITIONS\`)` : ''))
      .join(';\n  ')}.`,
    `- Equivalence check before timing: ${facts.checked}.`,
    `- Seed: ${facts.seedSeconds === null ? 'seeded by an earlier run' : `${seconds(facts.seedSeconds)} (this run)`}.`,
    s.readyFromDatabaseSeconds === null && s.buildPeakRssMb === null && s.snapshotRejected !== null
      ? `- The service: the index snapshot an earlier run kept (\`BENCH_SNAPSHOT_DIR\`) was not used (${s.snapshotRejected}), so the measured ` +
        `process built its index from PostgreSQL: ready (\`/readyz\` 200, search index loaded) ${seconds(s.readyFromSnapshotSeconds)} after start. ` +
        `Its peak RSS over the whole run ${mebibytes(s.peakRssMb)} (VmHWM), the build's included.`
      : s.readyFromDatabaseSeconds === null && s.buildPeakRssMb === null
      ? `- The service: started from the ${mebibytes(s.snapshotMb)} index snapshot an earlier run kept (\`BENCH_SNAPSHOT_DIR\`), ready ` +
        `(\`/readyz\` 200, search index loaded) ${seconds(s.readyFromSnapshotSeconds)} after start; no build from PostgreSQL this run. ` +
        `Its peak RSS over the whole run ${mebibytes(s.peakRssMb)} (VmHWM).`
      : `- The service: ready (\`/readyz\` 200, search index loaded) ${seconds(s.readyFromDatabaseSeconds)} after start without a snapshot ` +
        `(built from PostgreSQL; that process's peak RSS ${mebibytes(s.buildPeakRssMb)}), then restarted: ready ${seconds(s.readyFromSnapshotSeconds)} ` +
        `after start from the ${mebibytes(s.snapshotMb)} snapshot the build wrote. The restarted process is the one measured; its peak RSS over ` +
        `the whole run ${mebibytes(s.peakRssMb)} (VmHWM).`,
    '',
    '### Workloads',
    '',
    ...results.map(({ workload }) => `- ${workload.name} (\`${workload.id}\`): ${workload.detail}.`),
    '',
    '### Throughput and latency, and where the CPU went',
    '',
    ...resultSections(results),
  ].join('\n');
  const parts = existingParts(path);
  parts.set(partKey(facts), part);
  const body = [...parts.entries()].sort(([a], [b]) => partOrder(a, b)).map(([key, text]) => `${partMark(key)}\n${text}`);
  writeFileSync(path, `${[FILE_HEAD, ...body].join('\n\n')}\n`);
}

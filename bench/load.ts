// The load generator: `concurrency` keep-alive connections (node:http Agent, maxSockets =
// concurrency), each running sessions back to back for a fixed time, every page one timed request.
// It also measures what it costs itself (its own CPU time per request) and where the machine's CPU
// went, so a reader can tell whether the generator, the server or PostgreSQL was the limit.
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { SEARCH_THREAD_NAME } from '../src/search/runtime/thread.js';
import type { SystemClient } from './clients.js';
import type { PageResult, Session } from './specs.js';

export class HttpClient {
  private readonly agent: Agent;
  private readonly base: URL;

  constructor(baseUrl: string, concurrency: number) {
    this.base = new URL(baseUrl);
    this.agent = new Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  }

  post(path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const outgoing = request(
        {
          host: this.base.hostname,
          port: this.base.port,
          path,
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** One page of a session from one system: the HTTP call, then its answer reduced to a PageResult. */
export async function fetchPage(http: HttpClient, system: SystemClient, session: Session, step: number, cursor: string | null): Promise<PageResult> {
  const call = system.request(session, step, cursor);
  const response = await http.post(call.path, call.body, system.headers);
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${response.body.slice(0, 300)}`);
  return system.parse(session, JSON.parse(response.body));
}

/**
 * Runs `session`'s pages in order, following each page's `next` cursor for cursor sessions and
 * stopping at their last page; `onPage` sees each page (and may stop the session by returning false).
 */
export async function runSession(
  session: Session,
  page: (step: number, cursor: string | null) => Promise<PageResult>,
  onPage: (step: number, result: PageResult) => boolean = () => true,
): Promise<void> {
  const cursorPaged = session.kind === 'live' || (session.kind === 'creators' && session.paging === 'cursor');
  let cursor: string | null = null;
  for (let step = 0; step < session.pages; step++) {
    const result = await page(step, cursor);
    if (!onPage(step, result)) return;
    if (cursorPaged && result.next === null) return;
    cursor = result.next;
  }
}

export interface Measurement {
  requests: number;
  errors: number;
  firstError: string | null;
  seconds: number;
  /** Sorted, milliseconds. */
  latencies: Float64Array;
  cpu: CpuSpent;
  /** Share of the run the load generator's event loop was busy (1 = saturated: it would be the limit). */
  loadGeneratorBusy: number;
}

export interface CpuSpent {
  /** This process: the load generator. */
  loadGenerator: number;
  /** The system's server process. */
  server: number;
  /** The same by thread: the event loop's, the search index's, and the rest (V8's GC helpers, libuv). */
  serverThreads: ServerThreads;
  /** Every core of the machine, busy time (PostgreSQL and anything else included). */
  machine: number;
}

export interface ServerThreads {
  main: number;
  search: number;
  runtime: number;
}

const CLOCK_TICKS = 100;

/** utime + stime of a /proc stat line, in seconds. */
function statSeconds(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Busy CPU seconds of the whole machine, from /proc/stat (0 where there is no /proc). */
export function machineBusySeconds(): number {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields;
    return (user + nice + system + irq + softirq + (steal ?? 0)) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds a process has used so far, from /proc/<pid>/stat (0 where there is no /proc). */
export function processCpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    return statSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of a process's live threads so far, by role: the main thread (its id is the
 * process's), the search index's (named SEARCH_THREAD_NAME), the others. Threads that ended are in
 * processCpuSeconds only. A CPU profile cannot give this split: it counts the time a thread spends
 * preempted (by PostgreSQL's backends, by its own other threads) in whatever call it was in.
 */
export function threadCpuSeconds(pid: number | undefined): ServerThreads {
  const spent: ServerThreads = { main: 0, search: 0, runtime: 0 };
  if (!pid) return spent;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return spent;
  }
  for (const tid of tasks) {
    try {
      const seconds = statSeconds(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
      if (Number(tid) === pid) spent.main += seconds;
      else if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === SEARCH_THREAD_NAME) spent.search += seconds;
      else spent.runtime += seconds;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return spent;
}

function cpuSnapshot(serverPid: number | undefined): CpuSpent {
  const own = process.cpuUsage();
  return { loadGenerator: (own.user + own.system) / 1e6, server: processCpuSeconds(serverPid), serverThreads: threadCpuSeconds(serverPid), machine: machineBusySeconds() };
}

/**
 * Drives `page` from `concurrency` connections for `seconds`: each connection takes the next
 * session of the shared sequence, runs its pages, and so on. A failed page counts as an error and
 * ends its session (its cursor is lost).
 */
export async function drive(options: {
  seconds: number;
  concurrency: number;
  sessionAt: (index: number) => Session;
  page: (session: Session, step: number, cursor: string | null) => Promise<PageResult>;
  serverPid?: number;
}): Promise<Measurement> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  let nextSession = 0;
  const before = cpuSnapshot(options.serverPid);
  const loopBefore = performance.eventLoopUtilization();
  const started = performance.now();
  const deadline = started + options.seconds * 1000;

  const connection = async () => {
    while (performance.now() < deadline) {
      const session = options.sessionAt(nextSession++);
      let sent = performance.now();
      try {
        await runSession(
          session,
          (step, cursor) => {
            sent = performance.now();
            return options.page(session, step, cursor);
          },
          () => {
            latencies.push(performance.now() - sent);
            return performance.now() < deadline;
          },
        );
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, connection));

  const seconds = (performance.now() - started) / 1000;
  const after = cpuSnapshot(options.serverPid);
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests: latencies.length,
    errors,
    firstError,
    seconds,
    latencies: sorted,
    loadGeneratorBusy: performance.eventLoopUtilization(loopBefore).utilization,
    cpu: {
      loadGenerator: after.loadGenerator - before.loadGenerator,
      server: after.server - before.server,
      serverThreads: {
        main: after.serverThreads.main - before.serverThreads.main,
        search: after.serverThreads.search - before.serverThreads.search,
        runtime: after.serverThreads.runtime - before.serverThreads.runtime,
      },
      machine: after.machine - before.machine,
    },
  };
}

/** Nearest-rank percentile of sorted values; NaN when there are none. */
export function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

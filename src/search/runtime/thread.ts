import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PageArgs } from '../../domain/cursors.js';
import type { CreatorFacet, FacetRequest, LiveStreamFacet, VideoFacet } from '../../domain/facets.js';
import type { CreatorSearch } from '../../inputs/creators.js';
import type { LiveStreamFilter } from '../../inputs/live-streams.js';
import type { VideoSearch } from '../../inputs/videos.js';
import type { Logger } from '../../observability/log.js';
import type { ReadConnection, Store } from '../../store/connect.js';
import type { IndexPage, Search, SearchIndexStats, ServerRows } from '../types.js';
import { type RowChanges, SearchRows } from '../row-cache.js';
import { PartitionedSearch } from './partitioned.js';
import { LocalSearch } from './search-index.js';
import { removeStalePartials, type SnapshotSettings } from './snapshots.js';

// The search index in a worker thread of its own (src/search/runtime/worker.ts). One event loop served
// HTTP, GraphQL, the pipeline and the index, and was the limit at 16 connections while the
// machine's other core sat partly idle; the index's share of a search (a third of its CPU on
// filtered creator searches) now runs beside the rest. Searches cross as structured clones of a
// few hundred bytes. If the thread dies, searches run SQL (exact, slower) until a new one has
// loaded; the row caches are forgotten meanwhile, since nothing tells them about changes.

/** The thread's name in `top -H`, `ps -L` and /proc on Linux (15 characters at most): the bench attributes CPU by it. */
export const SEARCH_THREAD_NAME = 'search-index';

export interface WorkerSettings {
  connection: ReadConnection;
  pollMs: number;
  snapshots?: SnapshotSettings;
  /** The thread's share of the rows (./partition.ts): partition `index` of `count`; unset: all. */
  partition?: { index: number; count: number };
}

type Table = 'creators' | 'videos' | 'liveStreams';

/** A search's message; `caller` picks its line in the thread's FairQueue. */
export type SearchMessage =
  | { type: 'search'; id: number; caller?: string; table: Table; search: CreatorSearch | VideoSearch | LiveStreamFilter; page: PageArgs; facets?: readonly FacetRequest[]; needsTotal?: false }
  | { type: 'channelVideos'; id: number; caller?: string; search: VideoSearch; channelIds: readonly string[]; page: PageArgs; facets?: readonly FacetRequest[] };

export type ToWorker =
  | SearchMessage
  | { type: 'start' | 'refresh' | 'stop'; id: number };

export type FromWorker =
  | { type: 'reply'; id: number; result: IndexPage | IndexPage[] | null; error?: undefined }
  | { type: 'reply'; id: number; error: string; result?: undefined }
  | { type: 'rows'; changes: RowChanges }
  | { type: 'state'; ready: boolean; stats: SearchIndexStats; readAt: number | null }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string; details?: Record<string, unknown> };

const NOTHING_LOADED: SearchIndexStats = { creators: null, videos: null, channels: null, liveStreams: null, lagMs: null, loadedFrom: null };
const RESTART_FIRST_MS = 1_000;
const RESTART_MAX_MS = 30_000;
const STOP_WAIT_MS = 5_000;
/** With snapshots on, the last one is written at stop: seconds at ten million rows. */
const STOP_WAIT_SNAPSHOT_MS = 60_000;

const fromSource = import.meta.url.endsWith('.ts');
// A search's garbage is a few small objects: V8's default young generation (tens of MB per
// isolate) only added to the process's peak (1,105 -> 1,048 MB over the bench workloads at 4 MB).
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4 };

function startWorker(settings: WorkerSettings): Worker {
  if (!fromSource) return new Worker(new URL('./worker.js', import.meta.url), { workerData: settings, resourceLimits: WORKER_LIMITS });
  // Run from TypeScript sources (tests): tsx's loader, registered in the new thread, then the
  // .ts entry (a worker's `--import tsx` is not honoured on Node 20).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const entry = new URL('./worker.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { eval: true, workerData: settings, resourceLimits: WORKER_LIMITS });
}

interface Pending {
  resolve(result: IndexPage | IndexPage[] | null): void;
  reject(error: Error): void;
  /** The thread ended before answering. */
  lost(): void;
}

export class SearchThread implements Search {
  readonly rows: ServerRows;
  #worker: Worker | null = null;
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();
  #ready = false;
  #stats: SearchIndexStats = NOTHING_LOADED;
  #readAt: number | null = null;
  #stopped = false;
  #restartMs = RESTART_FIRST_MS;
  #restartTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: WorkerSettings & { log: Logger },
    rows: ServerRows = new SearchRows(),
  ) {
    this.rows = rows;
  }

  get ready(): boolean {
    return this.#ready;
  }

  creators(search: CreatorSearch, page: PageArgs, facets?: readonly FacetRequest<CreatorFacet>[], caller?: string): Promise<IndexPage | null> {
    return this.#search('creators', search, page, facets, true, caller);
  }

  videos(search: VideoSearch, page: PageArgs, facets?: readonly FacetRequest<VideoFacet>[], needsTotal = true, caller?: string): Promise<IndexPage | null> {
    return this.#search('videos', search, page, facets, needsTotal, caller);
  }

  channelVideos(search: VideoSearch, channelIds: readonly string[], page: PageArgs, facets?: readonly FacetRequest<VideoFacet>[], caller?: string): Promise<IndexPage[] | null> {
    return this.#ask((id) => ({ type: 'channelVideos', id, caller, search, channelIds, page, ...(facets?.length ? { facets } : {}) }));
  }

  liveStreams(filter: LiveStreamFilter, page: PageArgs, facets?: readonly FacetRequest<LiveStreamFacet>[], caller?: string): Promise<IndexPage | null> {
    return this.#search('liveStreams', filter, page, facets, true, caller);
  }

  stats(): SearchIndexStats {
    return { ...this.#stats, lagMs: this.#readAt === null ? null : Date.now() - this.#readAt };
  }

  start(): Promise<void> {
    this.#spawn();
    return this.#call('start');
  }

  refresh(): Promise<void> {
    return this.#call('refresh');
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#restartTimer) clearTimeout(this.#restartTimer);
    const worker = this.#worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const timer = setTimeout(() => void worker.terminate(), this.options.snapshots ? STOP_WAIT_SNAPSHOT_MS : STOP_WAIT_MS);
    // The thread closes its connections itself, then ends.
    await this.#call('stop')
      .catch(() => {})
      .then(() => worker.terminate());
    await exited;
    clearTimeout(timer);
  }

  /** Ends the thread as a crash would, without waiting for it (tests of the way back). */
  async crash(): Promise<void> {
    await this.#worker?.terminate();
  }

  /** Facets ride in the search's own message (a few requests out, their counts back): one round trip, one index state. */
  #search(table: Table, search: CreatorSearch | VideoSearch | LiveStreamFilter, page: PageArgs, facets: readonly FacetRequest[] | undefined, needsTotal: boolean, caller: string | undefined): Promise<IndexPage | null> {
    return this.#ask((id) => ({ type: 'search', id, caller, table, search, page, ...(facets?.length ? { facets } : {}), ...(needsTotal ? {} : { needsTotal: false as const }) }));
  }

  #ask<Answer extends IndexPage | IndexPage[]>(message: (id: number) => ToWorker): Promise<Answer | null> {
    // No thread, or one still loading: the caller runs SQL.
    if (!this.#worker || !this.#ready) return Promise.resolve(null);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve: (result) => resolve(result as Answer | null), reject, lost: () => resolve(null) });
      this.#worker!.postMessage(message(id));
    });
  }

  #call(type: 'start' | 'refresh' | 'stop'): Promise<void> {
    const worker = this.#worker;
    if (!worker) return Promise.reject(new Error('the search thread is not running'));
    const id = this.#nextId++;
    return new Promise<void>((resolve, reject) => {
      this.#pending.set(id, { resolve: () => resolve(), reject, lost: () => reject(new Error(`the search thread ended before its ${type}`)) });
      worker.postMessage({ type, id } satisfies ToWorker);
    });
  }

  #spawn(): void {
    const { connection, pollMs, snapshots, partition } = this.options;
    const settings: WorkerSettings = { connection, pollMs, ...(snapshots ? { snapshots } : {}), ...(partition ? { partition } : {}) };
    const worker = startWorker(settings);
    // The index alone must not keep a finished process alive.
    worker.unref();
    this.#worker = worker;
    worker.on('message', (message: FromWorker) => this.#receive(message));
    worker.on('error', (error) => this.options.log.error('search thread failed', { error: error.message }));
    worker.once('exit', (code) => this.#exited(worker, code));
  }

  #receive(message: FromWorker): void {
    switch (message.type) {
      case 'reply': {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (message.error !== undefined) pending?.reject(new Error(`search index: ${message.error}`));
        else pending?.resolve(message.result);
        return;
      }
      case 'rows':
        this.rows.forget(message.changes);
        return;
      case 'state':
        this.#ready = message.ready;
        this.#stats = message.stats;
        this.#readAt = message.readAt;
        if (message.ready) this.#restartMs = RESTART_FIRST_MS;
        return;
      case 'log':
        this.options.log[message.level](message.message, message.details);
        return;
    }
  }

  #exited(worker: Worker, code: number): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    this.#ready = false;
    this.#stats = NOTHING_LOADED;
    this.#readAt = null;
    // Nothing follows the feed now: cached rows could go stale.
    this.rows.forgetAll();
    // Searches in flight answer null (their callers run SQL); start, refresh and stop fail.
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.lost();
    }
    if (this.#stopped) return;
    this.options.log.error('search thread ended; searches run SQL until a new one has loaded', { exitCode: code, restartInMs: this.#restartMs });
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = null;
      if (this.#stopped) return;
      this.#spawn();
      this.#call('start').catch(() => {});
    }, this.#restartMs);
    this.#restartTimer.unref();
    this.#restartMs = Math.min(RESTART_MAX_MS, this.#restartMs * 2);
  }
}

/**
 * The process's search index: in a thread of its own over PostgreSQL (unless `thread` is false),
 * or in `partitions` threads each holding a share of the rows (./partitioned.ts); in the
 * pipeline's thread on the embedded store (its one connection lives in this thread).
 */
export function createSearch(options: {
  store: Store;
  log: Logger;
  pollMs: number;
  thread: boolean;
  partitions?: number;
  rowCacheRows?: number;
  snapshots?: SnapshotSettings;
}): Search {
  const connection = options.store.readConnection;
  const rows: ServerRows = new SearchRows(options.rowCacheRows);
  const { pollMs, log, snapshots } = options;
  const partitions = options.partitions ?? 1;
  // Before any thread of this process writes: the temporary files left now are dead writers'.
  const removed = snapshots ? removeStalePartials(snapshots.dir) : [];
  if (removed.length > 0) log.info('search index: removed the temporary files of snapshot writes that never finished', { dir: snapshots!.dir, files: removed });
  if (options.thread && connection) {
    const thread = (partition?: { index: number; count: number }) =>
      new SearchThread({ connection, pollMs, log, ...(snapshots ? { snapshots } : {}), ...(partition ? { partition } : {}) }, rows);
    if (partitions === 1) return thread();
    return new PartitionedSearch(
      Array.from({ length: partitions }, (_, index) => thread({ index, count: partitions })),
      rows,
    );
  }
  if (partitions > 1) log.warn('SEARCH_PARTITIONS is ignored: the index runs in the server’s own thread (the embedded store, or SEARCH_THREAD=off)', { partitions });
  return new LocalSearch({ db: options.store.readDb, log, pollMs, snapshots }, rows);
}

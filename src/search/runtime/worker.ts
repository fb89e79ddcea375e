import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { Logger } from '../../observability/log.js';
import type { IndexPage } from '../types.js';
import { openStore, type ReadConnection } from '../../store/connect.js';
import { FairQueue } from './fair-queue.js';
import { partition } from './partition.js';
import { SearchIndex } from './search-index.js';
import { type FromWorker, SEARCH_THREAD_NAME, type SearchMessage, type ToWorker, type WorkerSettings } from './thread.js';

// The search index in a thread of its own (src/search/runtime/thread.ts starts it): its own connections
// load it and follow the change feed; the pipeline's thread sends searches and gets ids and totals.

try {
  // A thread may rename itself through /proc; elsewhere there is no such file, and no harm.
  writeFileSync('/proc/thread-self/comm', SEARCH_THREAD_NAME);
} catch {
  // not Linux
}

const port = parentPort!;
const settings = workerData as WorkerSettings;
const post = (message: FromWorker) => port.postMessage(message);

// Logged by the server's logger, in its format.
const log: Logger = {
  info: (message, details) => post({ type: 'log', level: 'info', message, details }),
  warn: (message, details) => post({ type: 'log', level: 'warn', message, details }),
  error: (message, details) => post({ type: 'log', level: 'error', message, details }),
};

const connection: ReadConnection = settings.connection;
const store = await openStore({
  ...connection,
  // Loading reads one batch at a time, the feed one read at a time: two connections are plenty.
  poolSize: 2,
  onConnectionError: (error) => log.warn('search index: a database connection broke; it reconnects on the next read', { error: error.message }),
});
const index = new SearchIndex({
  db: store.db,
  log,
  pollMs: settings.pollMs,
  snapshots: settings.snapshots,
  ...(settings.partition ? { partition: partition(settings.partition.index, settings.partition.count) } : {}),
  onRowsChanged: (changes) => post({ type: 'rows', changes }),
});

function postState(): void {
  const stats = index.stats();
  post({ type: 'state', ready: index.ready, stats: { ...stats, lagMs: null }, readAt: stats.lagMs === null ? null : Date.now() - stats.lagMs });
}
const stateTimer = setInterval(postState, Math.max(100, settings.pollMs));

async function stop(): Promise<void> {
  clearInterval(stateTimer);
  await index.stop();
  await store.close();
}

/** Posts a search's answer, or its error's message. */
function answer(id: number, search: () => IndexPage | IndexPage[] | null): void {
  let reply: FromWorker;
  try {
    reply = { type: 'reply', id, result: search() };
  } catch (error) {
    reply = { type: 'reply', id, error: error instanceof Error ? error.message : String(error) };
  }
  post(reply);
}

function run(message: SearchMessage): void {
  if (message.type === 'channelVideos') {
    answer(message.id, () => index.channelVideos(message.search, message.channelIds, message.page, message.facets as never));
    return;
  }
  answer(message.id, () =>
    message.table === 'creators'
      ? index.creators(message.search as never, message.page, message.facets as never)
      : message.table === 'videos'
        ? index.videos(message.search as never, message.page, message.facets as never, message.needsTotal !== false)
        : index.liveStreams(message.search as never, message.page, message.facets as never),
  );
}

// Searches wait in their callers' lines; one runs per turn of the event loop, so the messages that
// arrived meanwhile (the port delivers all it holds at once) are in line before the next is picked.
const searches = new FairQueue<SearchMessage>();
let turnScheduled = false;
function runNext(): void {
  turnScheduled = false;
  const next = searches.next();
  if (!next) return;
  const started = performance.now();
  run(next.job);
  searches.charge(next.caller, performance.now() - started);
  if (searches.size > 0) scheduleTurn();
}
function scheduleTurn(): void {
  if (turnScheduled) return;
  turnScheduled = true;
  setImmediate(runNext);
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'search':
    case 'channelVideos':
      searches.push(message, message.caller);
      scheduleTurn();
      return;
    case 'start':
    case 'refresh':
    case 'stop': {
      // Searches still in line when the thread stops run SQL instead, as when a thread ends.
      if (message.type === 'stop') for (let next = searches.next(); next; next = searches.next()) post({ type: 'reply', id: next.job.id, result: null });
      const work = message.type === 'start' ? index.start() : message.type === 'refresh' ? index.refresh() : stop();
      work.then(
        () => {
          if (message.type !== 'stop') postState();
          post({ type: 'reply', id: message.id, result: null });
        },
        (error: unknown) => post({ type: 'reply', id: message.id, error: error instanceof Error ? error.message : String(error) }),
      );
      return;
    }
  }
});

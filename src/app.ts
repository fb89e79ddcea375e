import { KeylessBudget } from './access/keyless-budget.js';
import { createHash } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { createInFlightWork } from './access/in-flight.js';
import { createLimiter } from './access/limits.js';
import { openRefundJournal, type RefundJournal } from './access/refund-journal.js';
import { createAccessService } from './access/service.js';
import { type Config, DEFAULT_HTTP_KEEP_ALIVE_MS, folderRefused, makeFolder } from './config.js';
import { answerUnparsedRequest, createFrontDoor, type FrontDoor } from './http/server.js';
import { createLogger, errorReport, type Logger } from './observability/log.js';
import { createMetrics } from './observability/metrics.js';
import { createSearch } from './search/runtime/thread.js';
import type { Services } from './services.js';
import { KEY_CHANGES_CHANNEL } from './store/accounts.js';
import { ChangePruner, PRUNE_EVERY_MS } from './store/changes.js';
import { openStore, type Store } from './store/connect.js';
import { asDatabaseConfigError, isDatabaseUnavailable } from './store/errors.js';
import { migrateToLatest, NEWER_SCHEMA_WARNING } from './store/migrate.js';
import { sharedSecret } from './store/secrets.js';
import { createUpstreamHttp } from './upstreams/http.js';
import { createInstagramClient, type InstagramClient } from './upstreams/instagram/client.js';
import { createOffsetSeal, type OffsetSeal } from './upstreams/offset-seal.js';

export interface App {
  services: Services;
  /** The front door (src/http/server.ts): a node request handler, and `fetch` for in-process calls. */
  server: FrontDoor;
  /** Ends the work of every request still running (they answer 503): the shutdown grace is over. */
  abortInFlight(): void;
  /** Flushes owed refunds, then closes the limiter, the upstream connections and the store. */
  close(): Promise<void>;
}

export interface AppParts {
  log?: Logger;
  /** A store opened elsewhere (tests); by default the configured one is opened. Closed by close(). */
  store?: Store;
  /** The photo platform's client; null: none (realtime answers 500). By default one for the configured upstream. */
  instagram?: InstagramClient | null;
}

/** Opens the store (migrating it), the limiter and the access service: everything a request needs. */
export async function createApp(config: Config, parts: AppParts = {}): Promise<App> {
  // The folders this process writes in, made before anything is opened: the index wrote its first
  // snapshot only after a full load (minutes at millions of rows), and a folder that could not be
  // made was a warning then; the refund journal's was found only after the store's migrations.
  // The embedded store's first (the others' defaults are in it): DATA_DIR is what to correct.
  if (!parts.store && config.databaseUrl === undefined && !config.dataDir.startsWith('memory://')) makeFolder('DATA_DIR', config.dataDir);
  if (config.searchIndex && config.searchSnapshotDir !== undefined) makeFolder('SEARCH_SNAPSHOT_DIR', config.searchSnapshotDir);
  if (config.refundJournalDir !== undefined) makeFolder('REFUND_JOURNAL_DIR', config.refundJournalDir);
  const log = parts.log ?? createLogger();
  const store =
    parts.store ??
    (await openStore({
      databaseUrl: config.databaseUrl,
      readUrl: config.databaseReadUrl,
      transactionPooler: config.transactionPooler,
      dataDir: config.dataDir,
      statementTimeoutMs: config.statementTimeoutMs,
      connectTimeoutMs: config.connectTimeoutMs,
      poolSize: config.poolSize,
      onConnectionError: (error) => errorReport(log).unavailable(error),
    }));
  let realtimeOffsets: OffsetSeal;
  let refundJournal: RefundJournal | undefined;
  try {
    await migrateToLatest(store.db, (names) => log.warn(NEWER_SCHEMA_WARNING, { migrations: names })).catch((error: unknown) => {
      throw parts.store ? error : asDatabaseConfigError(error, config.databaseUrl);
    });
    // The replica is first used by searches, after the port opens: a URL it refuses for good
    // would leave the process unready for ever. One not reachable yet keeps /readyz 503 until it is.
    if (!parts.store && config.databaseReadUrl !== undefined) {
      await sql`SELECT 1`.execute(store.readDb).catch((error: unknown) => {
        const refused = asDatabaseConfigError(error, config.databaseReadUrl);
        if (refused !== error) throw refused;
      });
    }
    if (config.refundJournalDir) {
      // Named after the database, so two databases can share the folder without taking each other's refunds.
      const database = createHash('sha256').update(await sharedSecret(store.db, 'refund-journal')).digest('hex').slice(0, 16);
      try {
        refundJournal = openRefundJournal(config.refundJournalDir, database);
      } catch (error) {
        throw folderRefused('REFUND_JOURNAL_DIR', config.refundJournalDir, error);
      }
    }
    // One secret for every process behind the load balancer: configured, or kept in the database.
    realtimeOffsets = createOffsetSeal(
      config.offsetSecret === undefined ? await sharedSecret(store.db, 'realtime-offsets') : Buffer.from(config.offsetSecret, 'utf8'),
    );
  } catch (error) {
    await store.close();
    throw error;
  }
  const limiter = createLimiter({ redisUrl: config.redisUrl, log });
  const metrics = createMetrics();
  // docs/contract/decisions.md §7: without INSTAGRAM_UPSTREAM_URL, realtime fetches go to the built-in simulator
  // (in this process, on a free local port), and the operator is told the data is not real.
  let instagramSimulator: { url: string; close(): Promise<void> } | null = null;
  if (parts.instagram === undefined && !config.instagramUpstreamUrl) {
    const { startInstagramSimulator } = await import('./upstreams/instagram/simulator.js');
    instagramSimulator = await startInstagramSimulator({ port: 0, host: '127.0.0.1' });
    log.warn('INSTAGRAM_UPSTREAM_URL is not set: realtime media data is simulated', { simulator: instagramSimulator.url });
  }
  const instagram =
    parts.instagram === undefined
      ? createInstagramClient({
          baseUrl: config.instagramUpstreamUrl ?? instagramSimulator!.url,
          timeoutMs: config.upstreamTimeoutMs,
          http: createUpstreamHttp({ observe: metrics.upstreamCall }),
        })
      : (parts.instagram ?? undefined);
  metrics.watch({ store, breakers: instagram ? { instagram: () => instagram.breakerState } : {} });
  const access = createAccessService(store.db, limiter, {
    keyCacheMs: config.keyCacheMs,
    quotaLeaseUnits: config.quotaLeaseUnits,
    quotaLeaseFloor: config.quotaLeaseFloor,
    onError: (error) => errorReport(log).unavailable(error),
    refundJournal,
    onRefundsLost: (owed, error) =>
      log.error(
        config.refundJournalDir
          ? 'quota refunds not written before shutdown: kept in REFUND_JOURNAL_DIR for the next start there'
          : 'quota refunds not written: the database did not take them before shutdown',
        { owedUnitsByAccount: Object.fromEntries(owed), error: error instanceof Error ? error.message : String(error) },
      ),
    onRefundsExpired: (owed) =>
      log.error('quota refunds found in REFUND_JOURNAL_DIR owed for longer than written ones are recorded: not written, settle them by hand', {
        owedUnitsByAccount: Object.fromEntries(owed),
      }),
  });
  // A key changed by any writer (the CLI in another process, say) is forgotten at once; while the
  // notification session is down, and behind a transaction pooler, KEY_CACHE_MS bounds it instead.
  const keyChanges = await store.listen(KEY_CHANGES_CHANNEL, {
    message: (keyHash) => access.forgetKeys(keyHash === '' ? undefined : keyHash),
    listening: () => access.forgetKeys(),
  });
  if (!keyChanges) log.info('DATABASE_POOLER=transaction: key changes reach this process within KEY_CACHE_MS', { keyCacheMs: config.keyCacheMs });
  const work = createInFlightWork();
  // The index loads and follows the change feed where searches read: the replica, if there is one.
  const snapshots = config.searchSnapshotDir === undefined ? undefined : { dir: config.searchSnapshotDir, everyMs: config.searchSnapshotEveryMs };
  const search = config.searchIndex
    ? createSearch({ store, log, pollMs: config.searchPollMs, thread: config.searchThread, partitions: config.searchPartitions, rowCacheRows: config.rowCacheRows, snapshots })
    : null;
  // Searches run SQL until the index has loaded; the server does not wait for it.
  void search?.start().catch(() => {});
  // The change feed is pruned here, on the primary, index or not (ChangePruner).
  const pruner = new ChangePruner(store.db);
  const pruning = setInterval(() => {
    pruner.prune().catch((error: unknown) => {
      if (isDatabaseUnavailable(error)) errorReport(log).unavailable(error);
      else log.warn('change feed not pruned', { error: error instanceof Error ? error.message : String(error) });
    });
  }, PRUNE_EVERY_MS);
  pruning.unref();
  metrics.watch({ search: search ?? undefined });
  const keylessBudget = new KeylessBudget(config.keylessCpuMsPerSecond, config.keylessCpuBurstMs);
  const services: Services = { config, store, access, log, metrics, instagram, realtimeOffsets, work, search, keylessBudget };
  const server = createFrontDoor(services);
  return {
    services,
    server,
    abortInFlight: () => work.abortAll(),
    close: async () => {
      clearInterval(pruning);
      await keyChanges?.close();
      await search?.stop();
      await access.close();
      await limiter.close();
      await instagram?.close();
      await instagramSimulator?.close();
      await store.close();
    },
  };
}

export interface Listening {
  server: Server;
  url: string;
  /**
   * Graceful stop: refuse new connections at once, let the requests in flight finish for up to
   * `graceMs`, then end their work (they answer 503) and close every connection.
   */
  close(graceMs?: number): Promise<void>;
}

/** After the grace, how long aborted requests get to write their 503 before sockets are cut. */
const ABORT_ANSWER_MS = 2_000;

/**
 * Node keeps the first of several Authorization headers and drops the rest, so a request carrying
 * two keys would be served as the first's while a proxy may read the last. Several are combined
 * as HTTP combines field lines (RFC 9110 §5.3), and the key check refuses the result (401).
 */
function combineAuthorization(request: IncomingMessage): void {
  const raw = request.rawHeaders;
  let values: string[] | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization') (values ??= []).push(raw[i + 1]);
  }
  if (values && values.length > 1) request.headers.authorization = values.join(', ');
}

/**
 * HTTP/1.1 servers must accept a request target in absolute form (`POST http://host/api/…`,
 * RFC 9112 §3.2.2), which Node passes on as it came: the path and query are what route it.
 */
function toOriginForm(request: IncomingMessage): void {
  if (!/^https?:\/\//i.test(request.url!)) return;
  try {
    const target = new URL(request.url!);
    request.url = `${target.pathname}${target.search}`;
  } catch {
    // Not a URL: routed as it is (a 404).
  }
}

/**
 * How long a client may take to send its headers and its whole request (then 408), and how long an
 * idle keep-alive connection stays open for its next request.
 */
export interface ClientTimeouts {
  headersMs: number;
  requestMs: number;
  /**
   * Node closes an idle keep-alive connection after 5 s, and a pooled client that asks again after
   * that gets ECONNRESET on the reused socket (a dashboard polling every 10 s, the benchmark's
   * check). 65 s (HTTP_KEEP_ALIVE_MS) outlasts the 60 s idle timeouts of common load balancers,
   * which would otherwise answer 502 for such a request; `Keep-Alive: timeout=65` tells clients.
   */
  keepAliveMs: number;
}
export const CLIENT_TIMEOUTS: ClientTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: DEFAULT_HTTP_KEEP_ALIVE_MS };

/** What a listening server hands its requests to: an App, or a stand-in until one is assembled. */
export type RequestHandler = Pick<App, 'abortInFlight'> & { server(request: IncomingMessage, response: ServerResponse): unknown };

export async function listen(app: RequestHandler, port: number, host: string, timeouts: ClientTimeouts = CLIENT_TIMEOUTS): Promise<Listening> {
  let draining = false;
  const inFlight = new Set<ServerResponse>();
  let onIdle: (() => void) | null = null;
  // A slow client must not hold a connection open forever: Node checks the timeouts at this
  // interval (30 s by default, so a 10 s header timeout could wait 40).
  const checkEveryMs = Math.min(1_000, timeouts.headersMs);
  const options = { headersTimeout: timeouts.headersMs, requestTimeout: timeouts.requestMs, connectionsCheckingInterval: checkEveryMs };
  const server = createHttpServer(options, (request, response) => {
    // During the drain a client still gets its answer, and is told to reconnect elsewhere.
    if (draining) response.setHeader('connection', 'close');
    inFlight.add(response);
    if (request.headers.authorization !== undefined) combineAuthorization(request);
    if (request.url && request.url[0] !== '/') toOriginForm(request);
    response.once('close', () => {
      inFlight.delete(response);
      if (inFlight.size === 0) onIdle?.();
    });
    void app.server(request, response);
  });
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.on('clientError', answerUnparsedRequest);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const idle = (ms: number) =>
    new Promise<void>((resolve) => {
      if (inFlight.size === 0) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        onIdle = null;
        resolve();
      }
      onIdle = done;
    });
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    close: async (graceMs = 0) => {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await idle(graceMs);
      if (inFlight.size > 0) {
        app.abortInFlight();
        await idle(ABORT_ANSWER_MS);
      }
      server.closeAllConnections();
      await closed;
    },
  };
}

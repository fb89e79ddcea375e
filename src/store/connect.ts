import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { setMaxListeners } from 'node:events';
import { join, resolve } from 'node:path';
import { Kysely, PostgresDialect, sql, type LogConfig } from 'kysely';
import pg from 'pg';
import { folderRefused, makeFolder, MAX_TIMER_MS } from '../config.js';
import { parseUtcTimestamp } from '../domain/instant.js';
import { copyTransport } from './bulk-copy.js';
import { statementTransport, type BulkTransport } from './bulk.js';
import { abortError, ConnectionGate, tenantShare } from './connection-gate.js';
import type { Database } from './database.js';
import { listenPostgres, type Listener, type NotificationHandlers } from './notifications.js';
import { KeyBatches, type LookupByKey } from './key-batches.js';
import { preparedStatementName } from './prepared.js';

export { RequestAbortedError } from './connection-gate.js';

export interface CancellableDatabases {
  db: Kysely<Database>;
  readDb: Kysely<Database>;
  /** Rows by key from the read database, in one statement with the same lookups of the tenant's other requests (key-batches.ts). */
  lookup: LookupByKey;
  /** The work is over: an abort from now on cancels nothing. */
  close(): void;
}

export interface Store {
  /** The primary: every write, and reads that must see them (keys, quota). */
  db: Kysely<Database>;
  /** Where searches read (DATABASE_READ_URL's replica, else the primary). */
  readDb: Kysely<Database>;
  kind: 'postgres' | 'pglite';
  /** How seed and import write many rows: COPY on a PostgreSQL server, statements on the embedded store. */
  bulk: BulkTransport;
  /**
   * The primary and the read database as one request's work uses them: once `signal` aborts (the
   * client went away) the statements they have running are cancelled on the server and they get
   * no new connection, since nobody waits for an answer that would never be read. Work of one
   * `tenant` (an account, known once the key is checked) holds at most all but a fifth of the
   * pool's connections at once, and while the pool is full a freed connection goes to the
   * tenant holding the fewest, after any work without a tenant (connection-gate.ts): several
   * heavy accounts cannot queue a light one's statement behind theirs. On PGlite (one
   * in-process connection) they are the store's own.
   */
  cancellable(signal: AbortSignal, tenant?: () => string | undefined): CancellableDatabases;
  /** Whether the database answers a trivial statement within `timeoutMs`. */
  ping(timeoutMs: number): Promise<boolean>;
  /** Connections open, idle and requests waiting for one (PostgreSQL only). */
  poolStats(): { total: number; idle: number; waiting: number } | null;
  /** How another thread opens the database searches read (null: the embedded store, this thread's alone). */
  readConnection: ReadConnection | null;
  /**
   * Follows NOTIFY on `channel` of the primary (see notifications.ts); resolves once the first
   * LISTEN succeeded or failed. null behind a transaction pooler, which cannot hold a LISTEN: its
   * server connection goes back to the pool after each transaction.
   */
  listen(channel: string, handlers: NotificationHandlers): Promise<Listener | null>;
  close(): Promise<void>;
}

/** The options for openStore that reach readDb's database from another thread (plain data: it is posted). */
export type ReadConnection = Pick<StoreOptions, 'databaseUrl' | 'transactionPooler' | 'statementTimeoutMs' | 'connectTimeoutMs'>;

export interface StoreOptions {
  databaseUrl?: string;
  /** A read replica for searches (DATABASE_READ_URL). */
  readUrl?: string;
  /** The URLs lead to a transaction-mode pooler (PgBouncer): no session options are sent. */
  transactionPooler?: boolean;
  dataDir?: string;
  /** A new in-memory embedded database starts as this dump (PGlite's dumpDataDir), not from initdb. */
  startFrom?: Blob;
  statementTimeoutMs?: number;
  /** How long a request may wait for a connection (also: connecting to a server that is down). */
  connectTimeoutMs?: number;
  poolSize?: number;
  log?: LogConfig;
  /** A connection broke outside any statement (server restart, network): reported, never thrown. */
  onConnectionError?: (error: Error) => void;
}

// PostgreSQL when a URL is given, else the embedded PGlite in dataDir: the same migrations and
// the same queries run on both.
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return openEmbedded(options.dataDir ?? './.data', options);
}

const NEVER_ABORTED = new AbortController().signal;
// Every batch waiting for a connection listens on it: not a leak.
setMaxListeners(0, NEVER_ABORTED);

interface CancelScope {
  signal: AbortSignal;
  /** Whose work this is, when known: the gate shares the pool across tenants (ConnectionGate). */
  tenant: () => string | undefined;
  /** Connections checked out on behalf of this scope, to cancel what they run on abort. */
  clients: Set<pg.PoolClient>;
}

interface PostgresPool {
  db: Kysely<Database>;
  /** A Kysely over the same pool and gate that remembers which connections `scope` checked out. */
  scoped(scope: CancelScope): Kysely<Database>;
  pool: pg.Pool;
  gate: ConnectionGate;
  config: pg.PoolConfig;
}

/**
 * One connection pool with error handlers and timeouts. A request's work sees it through a Kysely
 * of its own (`scoped`), which knows the connections it checked out. AsyncLocalStorage did this
 * before, and its promise hooks, which run for every promise of the process, cost a tenth of the
 * graph's CPU (the nested video page, 2026-11-26).
 */
function postgresPool(connectionString: string, options: StoreOptions, applicationName: string): PostgresPool {
  const statementTimeoutMs = options.statementTimeoutMs ?? 15_000;
  const config: pg.PoolConfig = {
    connectionString,
    max: options.poolSize ?? 10,
    application_name: applicationName,
    // A runaway query is cut off by the server instead of holding a connection forever. A
    // transaction pooler (PgBouncer) passes no session options: set it on the role instead.
    ...(options.transactionPooler ? {} : { options: `-c statement_timeout=${statementTimeoutMs}` }),
    // Never wait forever: not for a pool slot, not for a server that does not answer a connect,
    // not for a reply on a socket that silently died (the server's own timeout plus a margin).
    connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
    // Within a timer's range: past it Node fires at once (STATEMENT_TIMEOUT_MS may be the range's end).
    query_timeout: Math.min(statementTimeoutMs + 5_000, MAX_TIMER_MS),
    keepAlive: true,
    idleTimeoutMillis: 30_000,
    types: { getTypeParser: typeParser as pg.CustomTypesConfig['getTypeParser'] },
  };
  const pool = new pg.Pool(config);
  const reportError = (error: Error) => options.onConnectionError?.(error);
  // pg emits 'error' on a client whose connection ends (a restart's 57P01) and, with no listener,
  // the process dies. The pool listens on idle clients only; every client gets one of its own,
  // for the time it is checked out too.
  pool.on('error', reportError);
  pool.on('connect', (client) => {
    client.on('error', reportError);
    // A transaction pooler hands each transaction another server connection: no named statements.
    if (!options.transactionPooler) namePreparedStatements(client);
  });

  // Every checkout goes through the gate, which decides who gets the next connection (connection-gate.ts).
  const gate = new ConnectionGate(config.max ?? 10, tenantShare(config.max ?? 10), config.connectionTimeoutMillis ?? 2_000);
  // The pool a Kysely sees: the same pool, entered through the gate; a scope's remembers each
  // connection it checks out until it is released.
  const gated = (scope: CancelScope | null, end: () => Promise<void>) => ({
    async connect(): Promise<pg.PoolClient> {
      const leave = await gate.enter(scope?.tenant(), scope?.signal);
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        leave();
        throw error;
      }
      if (scope?.signal.aborted) {
        client.release();
        leave();
        throw abortError(scope.signal);
      }
      scope?.clients.add(client);
      const release = client.release;
      client.release = (error?: Error | boolean) => {
        scope?.clients.delete(client);
        try {
          // A connection that was sent a cancel is closed, not pooled: the cancel travels on its own
          // socket and must not land on the next request's statement.
          return release.call(client, scope?.signal.aborted ? true : error);
        } finally {
          leave();
        }
      };
      return client;
    },
    end,
  });
  const kysely = (poolOf: ReturnType<typeof gated>) => new Kysely<Database>({ dialect: new PostgresDialect({ pool: poolOf as unknown as pg.Pool }), log: options.log });
  return { db: kysely(gated(null, () => pool.end())), scoped: (scope) => kysely(gated(scope, async () => {})), pool, gate, config };
}

const TIMESTAMPTZ = 1184;
const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date;

/** pg's parsers, but a timestamptz read in UTC keeps its text for printing (src/domain/instant.ts). */
function typeParser(oid: number, format?: 'text' | 'binary'): unknown {
  if (oid === TIMESTAMPTZ && format !== 'binary') return (text: string) => parseUtcTimestamp(text) ?? parseTimestamptz(text);
  return pg.types.getTypeParser(oid, format as 'text');
}

/** Sends the key lookups of prepared.ts under their names: pg prepares each once per connection. */
function namePreparedStatements(client: pg.PoolClient): void {
  const query = client.query;
  client.query = function (this: pg.PoolClient, ...args: unknown[]) {
    const [text, values, ...rest] = args;
    const name = typeof text === 'string' && Array.isArray(values) ? preparedStatementName(text) : undefined;
    return (query as (...args: unknown[]) => unknown).apply(this, name ? [{ name, text, values }, ...rest] : args);
  } as typeof client.query;
}

function openPostgres(connectionString: string, options: StoreOptions): Store {
  const primary = postgresPool(connectionString, options, 'creator-data');
  const replica = options.readUrl ? postgresPool(options.readUrl, options, 'creator-data-read') : null;

  /** A CancelRequest on a fresh socket, as psql's Ctrl-C: it needs no pool slot. */
  const cancelRunning = (client: pg.PoolClient) => {
    const { processID, secretKey, host, port } = client as unknown as { processID: number; secretKey: number; host: string; port: number };
    // pg's protocol Connection; its typings omit connect() and cancel().
    const connection = new pg.Connection() as pg.Connection & { connect(port: number, host: string): void; cancel(processID: number, secretKey: number): void };
    connection.on('error', () => {});
    connection.on('connect', () => connection.cancel(processID, secretKey));
    connection.connect(port, host);
  };
  const ping = (db: Kysely<Database>, timeoutMs: number) => withTimeout(sql`SELECT 1`.execute(db).then(() => true), timeoutMs, false);
  // A batch serves several requests: no one request's abort cancels it. One Kysely per account,
  // kept (a new one per batch cost the batch's gain); the map is emptied past 10,000 accounts.
  const batchDbs = new Map<string | undefined, Kysely<Database>>();
  const batches = new KeyBatches((tenant) => {
    let db = batchDbs.get(tenant);
    if (!db) {
      if (batchDbs.size >= 10_000) batchDbs.clear();
      batchDbs.set(tenant, (db = (replica ?? primary).scoped({ signal: NEVER_ABORTED, tenant: () => tenant, clients: new Set() })));
    }
    return db;
  });

  // A bulk load gets a connection of its own, outside the pool and its timeouts: building the
  // indexes of millions of rows takes minutes.
  const bulkSession = async () => {
    const client = new pg.Client({
      connectionString,
      connectionTimeoutMillis: primary.config.connectionTimeoutMillis,
      keepAlive: true,
      ...(options.transactionPooler ? {} : { options: '-c statement_timeout=0' }),
    });
    client.on('error', (error) => options.onConnectionError?.(error));
    await client.connect();
    return client;
  };

  return {
    db: primary.db,
    readDb: replica?.db ?? primary.db,
    kind: 'postgres',
    bulk: copyTransport(bulkSession, primary.db),
    cancellable(signal, tenant = () => undefined) {
      const scope: CancelScope = { signal, tenant, clients: new Set() };
      const onAbort = () => scope.clients.forEach(cancelRunning);
      signal.addEventListener('abort', onAbort, { once: true });
      const db = primary.scoped(scope);
      return {
        db,
        readDb: replica?.scoped(scope) ?? db,
        lookup: (lookup, group, keys) => batches.read(lookup, group, tenant(), keys, signal),
        close: () => signal.removeEventListener('abort', onAbort),
      };
    },
    // Ready when every database the service reads or writes answers.
    ping: async (timeoutMs) => (await ping(primary.db, timeoutMs)) && (!replica || (await ping(replica.db, timeoutMs))),
    poolStats: () => ({ total: primary.pool.totalCount, idle: primary.pool.idleCount, waiting: primary.gate.waiting + primary.pool.waitingCount }),
    readConnection: {
      databaseUrl: options.readUrl ?? connectionString,
      transactionPooler: options.transactionPooler,
      statementTimeoutMs: options.statementTimeoutMs,
      connectTimeoutMs: options.connectTimeoutMs,
    },
    listen: async (channel, handlers) =>
      options.transactionPooler
        ? null
        : listenPostgres(
            {
              connectionString,
              application_name: 'creator-data-listen',
              connectionTimeoutMillis: primary.config.connectionTimeoutMillis,
              keepAlive: true,
            },
            channel,
            handlers,
            { onError: (error) => options.onConnectionError?.(error) },
          ),
    close: async () => {
      await replica?.db.destroy();
      await primary.db.destroy();
    },
  };
}

async function openEmbedded(dataDir: string, options: StoreOptions): Promise<Store> {
  const [{ PGlite }, { pg_trgm }, { PGliteDialect }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
    import('kysely-pglite-dialect'),
  ]);
  // `memory://` keeps the database in this process only (tests); a folder is locked against a second process.
  const inMemory = dataDir.startsWith('memory://');
  const directory = inMemory ? dataDir : resolve(dataDir);
  if (!inMemory) makeFolder('DATA_DIR', dataDir);
  const releaseLock = inMemory ? () => {} : lockDirectory(directory);
  try {
    const pglite = await PGlite.create(directory, { extensions: { pg_trgm }, loadDataDir: inMemory ? options.startFrom : undefined });
    const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite), log: options.log });
    const batches = new KeyBatches(() => db);
    return {
      db,
      readDb: db,
      kind: 'pglite',
      bulk: statementTransport(db),
      cancellable: (signal, tenant = () => undefined) => ({
        db,
        readDb: db,
        lookup: (lookup, group, keys) => batches.read(lookup, group, tenant(), keys, signal),
        close: () => {},
      }),
      ping: (timeoutMs) => withTimeout(sql`SELECT 1`.execute(db).then(() => true), timeoutMs, false),
      poolStats: () => null,
      readConnection: null,
      // In-process, so nothing to lose: one LISTEN for the store's life.
      async listen(channel, handlers) {
        const unlisten = await pglite.listen(channel, handlers.message);
        handlers.listening();
        return { close: () => unlisten() };
      },
      close: async () => {
        await db.destroy();
        releaseLock();
      },
    };
  } catch (error) {
    releaseLock();
    throw error;
  }
}

/** The work's result, or `fallback` once it has failed or taken longer than `ms`. */
function withTimeout<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}

export class StoreLockedError extends Error {}

// PGlite corrupts its folder when two processes open it; a pid lock file turns that into a clear
// error. A lock left by a dead process is taken over.
function lockDirectory(directory: string): () => void {
  const lockPath = join(directory, 'creator-data.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw folderRefused('DATA_DIR', directory, error);
      const owner = Number(readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(owner) && owner > 0 && processIsAlive(owner)) {
        throw new StoreLockedError(
          `the embedded store in ${directory} is in use by process ${owner}; stop it, or set DATA_DIR to another folder or DATABASE_URL to a PostgreSQL server`,
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new StoreLockedError(`could not lock the embedded store in ${directory}`);
}

/** Whether a process of this pid runs on this machine (EPERM: it does, as another user). */
export function processIsAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

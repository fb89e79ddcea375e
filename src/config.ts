import { accessSync, constants, mkdirSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

// Every setting the service reads from its environment (docs/contract/decisions.md §7), read in one place.
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** A read replica searches read from; unset: the primary. */
  databaseReadUrl: string | undefined;
  /** The database URLs lead to a transaction-mode pooler such as PgBouncer. */
  transactionPooler: boolean;
  dataDir: string;
  redisUrl: string | undefined;
  instagramUpstreamUrl: string | undefined;
  upstreamTimeoutMs: number;
  twitch: { apiUrl: string; clientId: string; token: string } | undefined;
  adminToken: string | undefined;
  /** Serves /metrics on a port of its own (no key); unset: /metrics on the main port behind ADMIN_TOKEN. */
  metricsPort: number | undefined;
  /** The address METRICS_PORT listens on: loopback unless the operator says otherwise, the metrics having no key. */
  metricsHost: string;
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  poolSize: number;
  maxBodyBytes: number;
  /** GraphQL operations priced over this many units are refused before any work (docs/contract/decisions.md §6.1). */
  maxOperationUnits: number;
  /** CPU milliseconds a second (and at most at once) that work without a key may take: KEYLESS_CPU_MS_PER_S, KEYLESS_CPU_BURST_MS. */
  keylessCpuMsPerSecond: number;
  keylessCpuBurstMs: number;
  /** GraphQL operations whose lists could return more nodes than this in all are refused. */
  maxOperationNodes: number;
  /** How long in-flight requests may run on after SIGTERM before they are answered 503. */
  shutdownGraceMs: number;
  /** How long an idle keep-alive connection waits for its next request (src/app.ts, ClientTimeouts). */
  httpKeepAliveMs: number;
  /** Serve searches from the in-memory index (SEARCH_INDEX=off: every search runs SQL). */
  searchIndex: boolean;
  /** How often the index reads the change feed. */
  searchPollMs: number;
  /** On PostgreSQL, the index runs in a worker thread of its own (SEARCH_THREAD=off: in the pipeline's thread). */
  searchThread: boolean;
  /**
   * Threads the index is split over, each holding a share of the rows and searched side by side
   * (SEARCH_PARTITIONS, 1–16; with SEARCH_THREAD on, over PostgreSQL): more than one pays off only
   * when a search costs the index milliseconds, at millions of rows (docs/search-index.md).
   */
  searchPartitions: number;
  /**
   * Where the search index is written to disk, to start from (SEARCH_SNAPSHOT_DIR; default
   * DATA_DIR/search-snapshots; off, or an in-memory DATA_DIR: never).
   */
  searchSnapshotDir: string | undefined;
  /**
   * Where refunds owed while the database is away are kept until it takes them, past a restart
   * (REFUND_JOURNAL_DIR; default DATA_DIR/refunds-owed; off, or an in-memory DATA_DIR: memory only).
   */
  refundJournalDir: string | undefined;
  /** How often the index is written while serving, besides after a full load and at shutdown (0: only then). */
  searchSnapshotEveryMs: number;
  /**
   * How long a key's identity is reused. Key changes are announced and seen at once; this bounds
   * them while the notification session is down (and behind a transaction pooler, which has none).
   */
  keyCacheMs: number;
  /** Units per quota lease taken by this process (0: one reservation per call). */
  quotaLeaseUnits: number;
  /** Leases are taken only while this many leases' worth of units would remain besides them. */
  quotaLeaseFloor: number;
  /**
   * Signs realtime offsets (OFFSET_SECRET); unset: a secret kept in the database, the same for
   * every process sharing it.
   */
  offsetSecret: string | undefined;
  /** Rows each row cache of found pages keeps (creators per platform, videos, channels, live streams; 0: in effect none). */
  rowCacheRows: number;
  /** V8 grows the old generation by this percent of the live heap before its next full collection. */
  heapGrowthPercent: number;
  /** pino's level (LOG_LEVEL); createLogger reads it from the environment, checked here first. */
  logLevel: string;
}

/** A setting that cannot be used as it is: the CLI prints its message, one line, and exits 1. */
export class ConfigError extends Error {}

const FOLDER_REFUSALS: Record<string, string> = {
  ENOTDIR: 'a part of its path is a file',
  EEXIST: 'a file of that name is there',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
};

/**
 * A folder a setting names (DATA_DIR, SEARCH_SNAPSHOT_DIR, REFUND_JOURNAL_DIR) that cannot be
 * created or written in, found when it is opened: one line naming the setting, as a ConfigError from loadConfig.
 */
export function folderRefused(setting: string, folder: string, error: unknown): ConfigError {
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  const reason = code === undefined ? String(error) : `${code}${FOLDER_REFUSALS[code] ? `: ${FOLDER_REFUSALS[code]}` : ''}`;
  return new ConfigError(`${setting}: cannot ${syscall === 'mkdir' ? 'create' : 'write in'} the folder ${folder} (${reason})`);
}

/** Creates the folder a setting names, if need be, and checks it can be written in: else folderRefused. */
export function makeFolder(setting: string, folder: string): void {
  try {
    mkdirSync(folder, { recursive: true });
    accessSync(folder, constants.W_OK);
  } catch (error) {
    throw folderRefused(setting, folder, error);
  }
}

/** The real path of the nearest folder on the way to `folder` that exists (itself, if it does). */
function nearestExisting(folder: string): string | null {
  for (let path = resolve(folder); ; path = dirname(path)) {
    try {
      return realpathSync(path);
    } catch {
      if (dirname(path) === path) return null;
    }
  }
}

/**
 * DATA_DIR, SEARCH_SNAPSHOT_DIR, REFUND_JOURNAL_DIR: a folder in /proc, or reached through a link
 * into it (/dev/fd), is refused before anything tries to create it. mkdir there answers ENOENT
 * for a parent that exists, and Node's recursive mkdir, which each of them is created with, then
 * tries again for ever: the command hung at start. Nothing else is created or checked here;
 * makeFolder and folderRefused say what else is wrong when the folder is opened.
 */
function folderSetting(name: string, folder: string | undefined): string | undefined {
  if (folder === undefined || folder.startsWith('memory://')) return folder;
  const existing = nearestExisting(folder);
  if (existing === '/proc' || existing?.startsWith('/proc/')) {
    throw new ConfigError(`${name}: cannot create the folder ${folder} (it is in /proc, where no folder can be made)`);
  }
  return folder;
}

const nonEmpty = (value: string | undefined) => (value && value.trim() !== '' ? value : undefined);

function integer(name: string, value: string | undefined, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new ConfigError(max === Number.MAX_SAFE_INTEGER ? `${name} must be a non-negative integer` : `${name} must be an integer from ${min} to ${max}`);
  }
  return parsed;
}

/**
 * The longest delay Node's timers take (about 24.8 days): past it a timer fires after 1 ms, with a
 * TimeoutOverflowWarning each time. It is also PostgreSQL's largest statement_timeout.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A duration setting (`*_MS`): from `min`, below which it could never work, to what a timer can wait. */
function milliseconds(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > MAX_TIMER_MS) {
    throw new ConfigError(`${name} must be a whole number of milliseconds from ${min} to ${MAX_TIMER_MS}`);
  }
  return parsed;
}

/** A TCP port (PORT, METRICS_PORT); 0: any free one. */
const port = (name: string, value: string | undefined, fallback: number) => integer(name, value, fallback, 0, 65_535);

/**
 * DATABASE_URL, DATABASE_READ_URL: a postgres:// URL that parses (pg reads what does not as a host
 * name, or throws from inside the pool), whose certificate files (read by pg at every connect) can
 * be read. The value is never repeated in the message: it may hold a password.
 */
function databaseUrl(name: string, value: string | undefined): string | undefined {
  const set = nonEmpty(value);
  if (set === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(set);
  } catch {
    throw new ConfigError(`${name} is not a valid URL (postgres://user:password@host:port/database)`);
  }
  // `postgres:user:password@host` parses too, as a path: the password would be printed as one.
  if (!/^(postgres|postgresql):\/\//i.test(set) && url.protocol !== 'socket:') throw new ConfigError(`${name} must start with postgres:// or postgresql://`);
  try {
    // As pg does: a stray % in the user or password would throw from inside the pool.
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    throw new ConfigError(`${name} is not a valid URL: a % in its user or password must be written %25`);
  }
  for (const parameter of ['sslcert', 'sslkey', 'sslrootcert']) {
    const file = url.searchParams.get(parameter);
    if (file === null || file === '') continue;
    try {
      accessSync(file, constants.R_OK);
    } catch (error) {
      throw new ConfigError(`${name}: the ${parameter} file ${file} cannot be read (${(error as NodeJS.ErrnoException).code})`);
    }
  }
  return set;
}

/** REDIS_URL, as ioredis reads it: a port, a socket path, or a URL whose redis:// may be left out. */
function redisUrl(value: string | undefined): string | undefined {
  const set = nonEmpty(value);
  if (set === undefined || /^\d+$/.test(set) || (set.startsWith('/') && !set.startsWith('//'))) return set;
  const url = /^rediss?:\/\//i.test(set) ? set : set.startsWith('//') ? `redis:${set}` : `redis://${set}`;
  try {
    // ioredis decodes both, and throws from inside the client where they do not decode.
    const parsed = new URL(url);
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
  } catch {
    throw new ConfigError('REDIS_URL is not a valid URL (redis://:password@host:port/db)');
  }
  return set;
}

function poolerMode(value: string | undefined): boolean {
  if (value === undefined || value === '' || value === 'session') return false;
  if (value === 'transaction') return true;
  throw new ConfigError('DATABASE_POOLER must be transaction or session');
}

function secret(name: string, value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (value.length < 32) throw new ConfigError(`${name} must be at least 32 characters`);
  return value;
}

function onOff(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'on' || value === 'off') return value === 'on';
  throw new ConfigError(`${name} must be on or off`);
}

function partitions(value: string | undefined): number {
  const count = integer('SEARCH_PARTITIONS', value, 1);
  if (count < 1 || count > 16) throw new ConfigError('SEARCH_PARTITIONS must be an integer from 1 to 16');
  return count;
}

/** INSTAGRAM_UPSTREAM_URL, TWITCH_API_URL: the base of an HTTP API. Not repeated in the message: it may hold credentials. */
function httpUrl(name: string, value: string | undefined): string | undefined {
  const set = nonEmpty(value);
  if (set === undefined) return undefined;
  let protocol: string;
  try {
    protocol = new URL(set).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw new ConfigError(`${name} must be an http:// or https:// URL`);
  return set;
}

/**
 * The collector calls the platform with all three (docs/contract/decisions.md §8): the URL without
 * the others would fail at every pass, and the others without the URL were silently unused (the
 * collector off, where the operator meant it on). None of the three: off.
 */
function twitch(env: NodeJS.ProcessEnv): Config['twitch'] {
  const apiUrl = httpUrl('TWITCH_API_URL', env.TWITCH_API_URL);
  const clientId = nonEmpty(env.TWITCH_CLIENT_ID);
  const token = nonEmpty(env.TWITCH_TOKEN);
  if (apiUrl === undefined && clientId === undefined && token === undefined) return undefined;
  const values = { TWITCH_API_URL: apiUrl, TWITCH_CLIENT_ID: clientId, TWITCH_TOKEN: token };
  const names = Object.keys(values) as (keyof typeof values)[];
  const missing = names.filter((name) => values[name] === undefined);
  if (missing.length > 0) {
    // The URL first when it is set, as before: "TWITCH_API_URL is set without …".
    const set = apiUrl === undefined ? names.filter((name) => values[name] !== undefined) : ['TWITCH_API_URL'];
    throw new ConfigError(`${set.join(' and ')} ${set.length > 1 ? 'are' : 'is'} set without ${missing.join(' and ')}: the live-stream collector needs all three`);
  }
  return { apiUrl: apiUrl!, clientId: clientId!, token: token! };
}

/** pino's levels: anything else throws from inside the logger. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function logLevel(value: string | undefined): string {
  if (value === undefined || value === '') return 'info';
  if (!LOG_LEVELS.includes(value)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  return value;
}

/**
 * The contract's bounds of one GraphQL operation (docs/contract/decisions.md §6.1): GRAPHQL_MAX_UNITS
 * and GRAPHQL_MAX_NODES may lower them, never raise them. Below one search of a full page (100
 * units, 100 nodes) no search could run through GraphQL.
 */
export const CONTRACT_MAX_OPERATION_UNITS = 10_000;
export const CONTRACT_MAX_OPERATION_NODES = 50_000;
const MIN_OPERATION_BOUND = 100;

/**
 * MAX_BODY_BYTES: the largest valid search body, every list and text at its limit, is 5.4 KB
 * (test/config.test.ts); 16 KiB leaves room for whitespace and GraphQL documents. The most: what a
 * string can hold once read, with room to spare (V8's limit is about 512 MiB).
 */
export const BODY_BYTES_MIN = 16 * 1024;
export const BODY_BYTES_MAX = 256 * 1024 * 1024;

/** SEARCH_SNAPSHOT_EVERY_MS: 0 (only after a full load and at shutdown), or an interval a write (seconds at 1M rows) fits in. */
function snapshotEvery(value: string | undefined): number {
  if (value !== undefined && value.trim() !== '' && Number(value) === 0) return 0;
  try {
    return milliseconds('SEARCH_SNAPSHOT_EVERY_MS', value, 10 * 60_000, 1_000);
  } catch {
    throw new ConfigError(`SEARCH_SNAPSHOT_EVERY_MS must be 0 (no periodic write) or a whole number of milliseconds from 1000 to ${MAX_TIMER_MS}`);
  }
}

/**
 * HEAP_GROWTH_PERCENT, handed to V8 as --heap-growing-percent (src/cli/serve.ts): the old
 * generation grows by 1 + this/100 before its next full collection. 0 leaves the factor to V8,
 * which picks it from 1.1 to 4.0 (its kMinGrowingFactor, kMaxGrowingFactor); outside those a full
 * collection follows every few MB of garbage, or the heap nears its limit before one, which is what
 * the setting is there to prevent. The flag is a C int: V8 took 99999999999 without a word.
 */
function heapGrowth(value: string | undefined): number {
  if (value !== undefined && value.trim() !== '' && Number(value) === 0) return 0;
  try {
    return integer('HEAP_GROWTH_PERCENT', value, 40, 10, 300);
  } catch {
    throw new ConfigError("HEAP_GROWTH_PERCENT must be 0 (V8's own choice) or an integer from 10 to 300");
  }
}

/** A folder setting (SEARCH_SNAPSHOT_DIR, REFUND_JOURNAL_DIR), or off; unset: `folder` beside the embedded store's files, unless those live in memory. */
function besideData(value: string | undefined, dataDir: string, folder: string): string | undefined {
  const set = nonEmpty(value);
  if (set === undefined) return dataDir.startsWith('memory://') ? undefined : `${dataDir.replace(/\/+$/, '')}/${folder}`;
  return set.toLowerCase() === 'off' ? undefined : set;
}

/**
 * How long an idle keep-alive connection waits by default: above the 60 s idle timeout of common
 * load balancers (some hold 350 or 600 s: set HTTP_KEEP_ALIVE_MS above theirs).
 */
export const DEFAULT_HTTP_KEEP_ALIVE_MS = 65_000;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: port('PORT', env.PORT, 8080),
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    databaseUrl: databaseUrl('DATABASE_URL', env.DATABASE_URL),
    databaseReadUrl: databaseUrl('DATABASE_READ_URL', env.DATABASE_READ_URL),
    transactionPooler: poolerMode(env.DATABASE_POOLER),
    dataDir: folderSetting('DATA_DIR', nonEmpty(env.DATA_DIR) ?? './.data')!,
    redisUrl: redisUrl(env.REDIS_URL),
    instagramUpstreamUrl: httpUrl('INSTAGRAM_UPSTREAM_URL', env.INSTAGRAM_UPSTREAM_URL),
    upstreamTimeoutMs: milliseconds('UPSTREAM_TIMEOUT_MS', env.UPSTREAM_TIMEOUT_MS, 10_000, 100),
    twitch: twitch(env),
    adminToken: secret('ADMIN_TOKEN', nonEmpty(env.ADMIN_TOKEN)),
    metricsPort: nonEmpty(env.METRICS_PORT) === undefined ? undefined : port('METRICS_PORT', env.METRICS_PORT, 0),
    metricsHost: nonEmpty(env.METRICS_HOST) ?? '127.0.0.1',
    // The client's own query timeout is this plus 5 s, kept within a timer's range (src/store/connect.ts).
    statementTimeoutMs: milliseconds('STATEMENT_TIMEOUT_MS', env.STATEMENT_TIMEOUT_MS, 15_000, 100),
    // pg reads 0 as "wait forever"; below 50 ms not even a local connection is made.
    connectTimeoutMs: milliseconds('DB_CONNECT_TIMEOUT_MS', env.DB_CONNECT_TIMEOUT_MS, 2_000, 50),
    poolSize: integer('DB_POOL_SIZE', env.DB_POOL_SIZE, 10, 1, 1_000),
    maxBodyBytes: integer('MAX_BODY_BYTES', env.MAX_BODY_BYTES, 64 * 1024, BODY_BYTES_MIN, BODY_BYTES_MAX),
    maxOperationUnits: integer('GRAPHQL_MAX_UNITS', env.GRAPHQL_MAX_UNITS, CONTRACT_MAX_OPERATION_UNITS, MIN_OPERATION_BOUND, CONTRACT_MAX_OPERATION_UNITS),
    // A second's worth at most: one thread has no more CPU to give.
    keylessCpuMsPerSecond: integer('KEYLESS_CPU_MS_PER_S', env.KEYLESS_CPU_MS_PER_S, 200, 1, 1_000),
    keylessCpuBurstMs: milliseconds('KEYLESS_CPU_BURST_MS', env.KEYLESS_CPU_BURST_MS, 2_000, 1),
    maxOperationNodes: integer('GRAPHQL_MAX_NODES', env.GRAPHQL_MAX_NODES, CONTRACT_MAX_OPERATION_NODES, MIN_OPERATION_BOUND, CONTRACT_MAX_OPERATION_NODES),
    shutdownGraceMs: milliseconds('SHUTDOWN_GRACE_MS', env.SHUTDOWN_GRACE_MS, 10_000, 0),
    httpKeepAliveMs: milliseconds('HTTP_KEEP_ALIVE_MS', env.HTTP_KEEP_ALIVE_MS, DEFAULT_HTTP_KEEP_ALIVE_MS, 1_000),
    searchIndex: onOff('SEARCH_INDEX', env.SEARCH_INDEX, true),
    searchPollMs: milliseconds('SEARCH_POLL_MS', env.SEARCH_POLL_MS, 500, 10),
    searchThread: onOff('SEARCH_THREAD', env.SEARCH_THREAD, true),
    searchPartitions: partitions(env.SEARCH_PARTITIONS),
    searchSnapshotDir: folderSetting('SEARCH_SNAPSHOT_DIR', besideData(env.SEARCH_SNAPSHOT_DIR, nonEmpty(env.DATA_DIR) ?? './.data', 'search-snapshots')),
    refundJournalDir: folderSetting('REFUND_JOURNAL_DIR', besideData(env.REFUND_JOURNAL_DIR, nonEmpty(env.DATA_DIR) ?? './.data', 'refunds-owed')),
    searchSnapshotEveryMs: snapshotEvery(env.SEARCH_SNAPSHOT_EVERY_MS),
    keyCacheMs: milliseconds('KEY_CACHE_MS', env.KEY_CACHE_MS, 2_000, 0),
    // A million units is a hundred operations at the contract's highest price: a larger lease saves
    // no write worth having (its checkpoint is written every 250 ms anyway), it only holds more of
    // the account's units away from other processes, for a minute after a crash.
    quotaLeaseUnits: integer('QUOTA_LEASE_UNITS', env.QUOTA_LEASE_UNITS, 2_000, 0, 1_000_000),
    // In leases' worth, not units: QUOTA_LEASE_UNITS × this must remain. 0 would lease an account's
    // last units, and another process's calls be refused (403) while they sit unsold in a lease.
    // Both bounds keep that product exact in JavaScript and within PostgreSQL's bigint (past it,
    // every keyed call failed with a 500).
    quotaLeaseFloor: integer('QUOTA_LEASE_FLOOR', env.QUOTA_LEASE_FLOOR, 1_000, 1, 1_000_000),
    offsetSecret: secret('OFFSET_SECRET', env.OFFSET_SECRET),
    // Per cache (3 + one per creator platform), each with an admission filter of about 2 bytes a row
    // allocated up front: 1M rows is 1 MiB a cache up front and up to ~1.4 GB filled with creators
    // (10M: 16 MiB up front each; 10^12 threw at start). 0: in effect no cache (a row at most).
    rowCacheRows: integer('ROW_CACHE_ROWS', env.ROW_CACHE_ROWS, 10_000, 0, 1_000_000),
    heapGrowthPercent: heapGrowth(env.HEAP_GROWTH_PERCENT),
    logLevel: logLevel(env.LOG_LEVEL),
  };
}

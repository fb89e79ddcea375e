import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Kysely, PostgresDialect, type LogConfig } from 'kysely';
import pg from 'pg';
import type { Database } from './database.js';

export interface Store {
  db: Kysely<Database>;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

export interface StoreOptions {
  databaseUrl?: string;
  dataDir?: string;
  statementTimeoutMs?: number;
  log?: LogConfig;
}

// PostgreSQL when a URL is given, else the embedded PGlite in dataDir: the same migrations and
// the same queries run on both.
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return openEmbedded(options.dataDir ?? './.data', options);
}

function openPostgres(connectionString: string, options: StoreOptions): Store {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    // A runaway query is cut off by the server instead of holding a connection forever.
    options: `-c statement_timeout=${options.statementTimeoutMs ?? 15_000}`,
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: options.log });
  return { db, kind: 'postgres', close: () => db.destroy() };
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
  if (!inMemory) mkdirSync(directory, { recursive: true });
  const releaseLock = inMemory ? () => {} : lockDirectory(directory);
  try {
    const pglite = await PGlite.create(directory, { extensions: { pg_trgm } });
    const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite), log: options.log });
    return {
      db,
      kind: 'pglite',
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
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
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

function processIsAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

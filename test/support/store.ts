import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { openStore, type Store } from '../../src/store/connect.js';
import { migrateToLatest } from '../../src/store/migrate.js';

export interface TestStore extends Store {
  /** The URL of this test's own database (PostgreSQL only), for servers started in other processes. */
  databaseUrl: string | undefined;
  /** Statements run so far, for tests that assert the number of queries an operation issues. */
  queries: string[];
}

// With TEST_DATABASE_URL: a fresh `test_*` database on that server, dropped afterwards
// (TEST_DATABASE_PREFIX names them otherwise: runs that share a server can tell theirs apart).
// Without it: an in-memory PGlite, started from the run's migrated template. Either way, migrated and empty.
export async function createTestStore(pool: { statementTimeoutMs?: number } = {}): Promise<TestStore> {
  const queries: string[] = [];
  const log = (event: { level: string; query: { sql: string } }) => {
    if (event.level === 'query') queries.push(event.query.sql);
  };
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    const store = await openStore({ dataDir: 'memory://', log, startFrom: migratedTemplate() });
    await migrateToLatest(store.db);
    return { ...store, databaseUrl: undefined, queries };
  }
  const database = await createEmptyDatabase(serverUrl);
  const store = await openStore({ databaseUrl: database.url, log, ...pool });
  await migrateToLatest(store.db);
  return {
    ...store,
    databaseUrl: database.url,
    queries,
    close: async () => {
      await store.close();
      await database.drop();
    },
  };
}

/** A new database on the test server, with nothing in it (not migrated), and how to drop it. */
export async function createEmptyDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${databasePrefix()}${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

function databasePrefix(): string {
  const prefix = process.env.TEST_DATABASE_PREFIX || 'test_';
  if (!/^[a-z_][a-z0-9_]{0,30}$/.test(prefix)) throw new Error(`TEST_DATABASE_PREFIX must be a lower-case SQL identifier (got ${JSON.stringify(prefix)})`);
  return prefix;
}

let template: Blob | undefined;
/** The migrated database test/support/pglite-template.ts dumped before the run. */
function migratedTemplate(): Blob | undefined {
  const file = inject('pgliteTemplate');
  if (file) template ??= new Blob([readFileSync(file)]);
  return template;
}

async function adminQuery(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Logger } from '../src/observability/log.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { createTestStore, type TestStore } from './support/store.js';

// A deploy rolled back after a migration: the build before runs on a database a newer build
// migrated. It starts on it as it is, with a warning, instead of refusing to start (Kysely's
// "corrupted migrations"); a database of another line of builds, which lacks migrations this build
// knows, is refused before anything runs. On both stores.

const FUTURE = '2099_01_01_0001_a_newer_build';

/** The newest migration this build knows, as the migrations table records it. */
async function newestKnown(store: TestStore): Promise<{ name: string }> {
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration WHERE name <> ${FUTURE} ORDER BY name DESC LIMIT 1`.execute(store.db);
  return rows[0];
}

const migratedByNewerBuild = (store: TestStore) =>
  sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${FUTURE}, ${new Date().toISOString()})`.execute(store.db);

describe('migrations', () => {
  it('leave a database a newer build migrated as it is, and say so', { timeout: 60_000 }, async () => {
    const store = await createTestStore();
    try {
      expect(await migrateToLatest(store.db)).toEqual([]);
      await migratedByNewerBuild(store);
      const told: string[][] = [];
      expect(await migrateToLatest(store.db, (names) => told.push(names))).toEqual([]);
      expect(told).toEqual([[FUTURE]]);
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM kysely_migration WHERE name = ${FUTURE}`.execute(store.db);
      expect(rows[0].n).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('refuse a database of another line of builds, running nothing', { timeout: 60_000 }, async () => {
    const store = await createTestStore();
    try {
      await migratedByNewerBuild(store);
      // Its newest migration's objects stay, unrecorded: running it again would fail on them.
      const known = await newestKnown(store);
      await sql`DELETE FROM kysely_migration WHERE name = ${known.name}`.execute(store.db);
      await expect(migrateToLatest(store.db)).rejects.toThrow(
        `the database was migrated by another line of builds: it has run ${FUTURE}, which this build does not know, and not ${known.name}, which it does`,
      );
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM kysely_migration WHERE name = ${known.name}`.execute(store.db);
      expect(rows[0].n, 'nothing run').toBe(0);
    } finally {
      await store.close();
    }
  });

  it('let the service start on a newer schema, with a warning naming its migrations', { timeout: 60_000 }, async () => {
    const store = await createTestStore();
    await migratedByNewerBuild(store);
    const warnings: { message: string; details?: Record<string, unknown> }[] = [];
    const log: Logger = { info: () => {}, warn: (message, details) => void warnings.push({ message, details }), error: () => {} };
    const app = await createApp({ ...loadConfig({}), searchIndex: false, searchSnapshotDir: undefined }, { store, log, instagram: null });
    try {
      expect(warnings).toContainEqual({ message: 'the database was migrated by a newer build: running on it without migrating', details: { migrations: [FUTURE] } });
      const answer = await app.server.fetch(new Request('http://localhost/healthz'));
      expect(answer.status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

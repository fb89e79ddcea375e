import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedPosition, type FeedPosition, prunedPast } from '../src/store/changes.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { createTestStore, type TestStore } from './support/store.js';

// Builds before `change_pruned` pruned the change feed without recording what they deleted. The
// migration that adds the record starts it from bounds that hold for anything they may have
// pruned (migrations/2026_11_28_0003_change_pruned.ts): every id below the newest change, every
// transaction below the newest horizon sample the retention old. A reader's position (a snapshot
// file, a process that kept running across the upgrade) whose later changes may be gone must then
// read as pruned past, and the newest position must not. A transaction running at a position
// needs a second connection, so this runs on PostgreSQL only.

const postgres = process.env.TEST_DATABASE_URL;
if (!postgres) console.log('change-pruned-migration.test.ts: skipped, a transaction left running needs PostgreSQL (TEST_DATABASE_URL)');

const MIGRATION = '2026_11_28_0003_change_pruned';
/** The migrations from that one on, which an older build had not applied either. */
const LATER = ['2026_11_28_0004_change_readers', '2026_11_29_0001_sql_path_video_text_indexes'];

/** Puts the database back as a build before `change_pruned` left it. */
async function beforeTheRecord(db: TestStore['db']): Promise<void> {
  await sql`DROP TABLE change_readers`.execute(db);
  await sql`DROP TABLE change_pruned`.execute(db);
  await sql`DELETE FROM kysely_migration WHERE name = ANY(${[MIGRATION, ...LATER]})`.execute(db);
}

describe.skipIf(!postgres)('the record of what the change feed pruned, added to a feed older builds pruned', () => {
  let store: TestStore;
  /** A second connection, for a transaction left running while positions are taken. */
  let other: pg.Client;

  beforeAll(async () => {
    store = await createTestStore();
    other = new pg.Client({ connectionString: store.databaseUrl });
    await other.connect();
  });
  afterAll(async () => {
    await other?.end();
    await store?.close();
  });

  const change = (key: string) => sql`INSERT INTO catalog_changes (entity, platform, key) VALUES ('creators', 'twitter', ${key})`.execute(store.db);
  const position = () => feedPosition(store.db);
  const horizonNow = async () =>
    BigInt((await sql<{ xmin: string }>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`.execute(store.db)).rows[0].xmin);

  it('starts from bounds under which every position a pruning may have passed is pruned past, and the newest is not', async () => {
    // As an older build left the database: no record, the migration not yet applied.
    await beforeTheRecord(store.db);

    const atStart: FeedPosition = await position();
    await change('a');
    const afterA = await position();
    // A transaction writes a change and stays open while a later change commits: a reader then
    // has the later one's id as its last, and this transaction among those running.
    await other.query('BEGIN');
    await other.query(`INSERT INTO catalog_changes (entity, platform, key) VALUES ('creators', 'twitter', 'slow')`);
    const slowXid = BigInt((await other.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows[0].xid);
    await change('b');
    const whileSlowRan = await position();
    await other.query('COMMIT');
    expect(whileSlowRan.running).toContain(String(slowXid));

    // The older pruner: a horizon sample the retention old, taken after every one of those
    // transactions had ended, and each change of a transaction below it deleted but the newest.
    // The slow transaction's change goes; 'b', a later id, is not above whileSlowRan. Transaction
    // ids are the cluster's: another test's transaction older than the slow one holds the horizon
    // below it until it ends, so the sample waits for that.
    await expect.poll(horizonNow, { timeout: 60_000, interval: 50 }).toBeGreaterThan(slowXid);
    await sql`INSERT INTO change_horizons (sampled_at, horizon) VALUES (now() - interval '16 minutes', pg_snapshot_xmin(pg_current_snapshot()))`.execute(store.db);
    // Taken after the sample: every transaction running at it is at or above the horizon.
    await change('newest');
    const newest = await position();
    await sql`DELETE FROM catalog_changes WHERE key IN ('a', 'slow', 'b')`.execute(store.db);
    expect(await migrateToLatest(store.db)).toEqual([MIGRATION, ...LATER]);

    expect(await prunedPast(store.db, atStart), 'a position before the pruned changes').toBe(true);
    expect(await prunedPast(store.db, afterA), 'a position before later pruned changes').toBe(true);
    // Its last id is that of 'b', above the slow change's: only the running transaction tells.
    expect(await prunedPast(store.db, whileSlowRan), 'a position with a pruned transaction running at it').toBe(true);
    expect(await prunedPast(store.db, newest), 'the newest position').toBe(false);

    // From here on each pruning records itself; a reader at the newest position stays whole.
    await change('after the upgrade');
    expect(await prunedPast(store.db, newest)).toBe(false);
  }, 90_000);

  it('starts at nothing pruned on an empty feed, without any horizon sample', async () => {
    const fresh = await createTestStore();
    try {
      // A transaction of the cluster (here another database's) runs at the position and ends
      // before the migration: an empty feed was never pruned, whatever ran meanwhile.
      await other.query('BEGIN');
      const otherXid = (await other.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows[0].xid;
      // A later transaction ends first, so the snapshot lists the other one as running (a
      // snapshot's list stops below the newest transaction ended).
      await sql`SELECT pg_current_xact_id()`.execute(fresh.db);
      const empty = await feedPosition(fresh.db);
      await other.query('COMMIT');
      expect(empty.running).toContain(otherXid);
      await beforeTheRecord(fresh.db);
      await sql`DELETE FROM change_horizons`.execute(fresh.db);
      expect(await migrateToLatest(fresh.db)).toEqual([MIGRATION, ...LATER]);
      expect(await prunedPast(fresh.db, empty)).toBe(false);
    } finally {
      await fresh.close();
    }
  });
});

import { sql, type Kysely } from 'kysely';

// Samples of the transaction horizon (`pg_snapshot_xmin`: every transaction with a lower id had
// ended when it was read), taken by whichever serving process prunes the change feed, about one a
// minute across all of them, on the database's clock. The feed is pruned up to the newest sample
// at least the retention old. Kept in the database, not in each process: a process that kept its
// own samples pruned nothing in its first minutes, and a fleet restarted more often than the
// retention never pruned. A sample older than the one in use is deleted, so the table holds about
// a retention's worth of rows. (`horizon`, not `xmin`: that name is a system column.)
// Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('change_horizons')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('sampled_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('horizon', sql`xid8`, (c) => c.notNull())
    .execute();
  await sql`CREATE INDEX change_horizons_sampled_at_idx ON change_horizons (sampled_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('change_horizons').execute();
}

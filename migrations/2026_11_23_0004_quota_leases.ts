import { sql, type Kysely } from 'kysely';

// Quota leases: a server process takes a block of an account's units in one UPDATE and sells them
// to requests from memory, instead of one UPDATE (and one WAL flush, and one row lock every
// concurrent request queues on) per request. The units of a live lease are already in
// accounts.quota_used, so other processes never oversell; what the lease did not sell goes back
// when it ends. `used` is checkpointed every few hundred milliseconds, so a lease left behind by a
// crashed process is settled by any other process from its last checkpoint.
// Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('quota_leases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('granted', 'bigint', (c) => c.notNull().check(sql`granted > 0`))
    .addColumn('used', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('renewed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('quota_leases_used_within_granted', sql`used >= 0 AND used <= granted`)
    .execute();
  await sql`CREATE INDEX quota_leases_renewed_idx ON quota_leases (renewed_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('quota_leases').execute();
}

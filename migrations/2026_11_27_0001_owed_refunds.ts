import { sql, type Kysely } from 'kysely';

// Refunds the database could not take when they were owed (an outage) are kept by the process and
// in a journal on its disk, each under an id, until written. This table notes the ids written, so
// a journal replayed after a crash, or by two processes, refunds each one once.
// Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('quota_refunds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('units', 'bigint', (c) => c.notNull().check(sql`units > 0`))
    .addColumn('written_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('quota_refunds').execute();
}

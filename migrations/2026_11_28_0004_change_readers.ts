import { sql, type Kysely } from 'kysely';

// Readers of the change feed that must not lose what they have yet to read: a process loading its
// search index from the tables registers the feed position of its load, renews it while the load
// runs, and removes it at its first read of the feed. The pruning keeps every change a registered
// reader has yet to read (an id above its `last_id`, or a transaction in its `running`), as a
// replication slot keeps WAL. Without it, a load longer than the retention while changes were
// written found the feed pruned past its position at its first read and loaded again, for ever on
// a machine where loading always takes that long. A registration not renewed for a few minutes is
// a reader gone: ignored by the pruning, and deleted by it.
// Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('change_readers')
    .addColumn('reader', 'text', (c) => c.primaryKey())
    .addColumn('last_id', 'bigint', (c) => c.notNull())
    // The transactions running at the reader's position.
    .addColumn('running', sql`xid8[]`, (c) => c.notNull())
    .addColumn('renewed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('change_readers').execute();
}

import type { Kysely } from 'kysely';

// Secrets every server process sharing the database must agree on, such as the key that signs
// realtime offsets (an offset issued by one process behind a load balancer must open in another).
// The first process that needs one makes it. Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('service_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('secret', 'bytea', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('service_secrets').execute();
}

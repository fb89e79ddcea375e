import { sql, type Kysely } from 'kysely';

// Lookups by key in the graph (`node`, `nodes`, `creator`, `channel`, `video`, `category`) are
// charged to the endpoint `graph.lookup` (docs/contract/decisions.md §6.1): every plan covers it.
// Idempotent, so a second migration adding it as well changes nothing.
// Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`UPDATE plans SET endpoints = array_append(endpoints, 'graph.lookup') WHERE NOT ('graph.lookup' = ANY(endpoints))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`UPDATE plans SET endpoints = array_remove(endpoints, 'graph.lookup')`.execute(db);
}

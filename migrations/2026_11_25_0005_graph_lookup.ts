import { sql, type Kysely } from 'kysely';

// GraphQL lookups by key (creator, channel, video, category, node, nodes) are metered under their
// own endpoint id, `graph.lookup` (docs/contract/decisions.md §6.1: 1 unit a key). Both seeded plans
// cover it: a trial key may look up what its searches found. Plans an operator made are left as
// they are: adding an endpoint to a plan is a decision about that plan.
// Frozen in time: never import application code here.

const SEEDED = ['trial', 'pro'];

export async function up(db: Kysely<any>): Promise<void> {
  await db
    .updateTable('plans')
    .set({ endpoints: sql`array_append(endpoints, 'graph.lookup')` })
    .where('id', 'in', SEEDED)
    .where(sql<boolean>`NOT ('graph.lookup' = ANY(endpoints))`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db
    .updateTable('plans')
    .set({ endpoints: sql`array_remove(endpoints, 'graph.lookup')` })
    .where('id', 'in', SEEDED)
    .execute();
}

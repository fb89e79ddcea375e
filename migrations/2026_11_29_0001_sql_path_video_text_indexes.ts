import { sql, type Kysely } from 'kysely';

// The videos' two trigram indexes (title, description) go. A text search is answered by the
// in-memory index; these served only the SQL path (while that index loads without a snapshot or
// its thread is replaced), and there they bought little: a substring most videos' text shares
// (the common case) is read through most of the table either way, 0.49–0.50 s with them against
// 0.67–0.68 s of a parallel scan at 2M videos; only a substring no video holds was quick (0.4 ms
// against 0.68 s). Their cost was the largest single step of a seed at ×10 (the description's
// build 134–215 s and the title's 80–109 s, one after the other on the load's critical path) and
// every new video of an import (docs/decisions.md, "The SQL path's indexes"). Kept: the creators'
// name indexes (their table's chain is not the seed's critical path, and a name search on the
// SQL path is a user's lookup by name).
// Frozen in time: never import application code here.

/** The indexes this migration drops, as the catalog migration made them (the benchmark's PostGraphile gets them back). */
export const SQL_PATH_VIDEO_TEXT_INDEXES: readonly { name: string; definition: string }[] = [
  { name: 'videos_title_trgm_idx', definition: 'ON videos USING gin (lower(title) gin_trgm_ops)' },
  { name: 'videos_description_trgm_idx', definition: 'ON videos USING gin (lower(description) gin_trgm_ops)' },
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const index of SQL_PATH_VIDEO_TEXT_INDEXES) await sql`DROP INDEX IF EXISTS ${sql.id(index.name)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of SQL_PATH_VIDEO_TEXT_INDEXES) await sql`CREATE INDEX IF NOT EXISTS ${sql.id(index.name)} ${sql.raw(index.definition)}`.execute(db);
}

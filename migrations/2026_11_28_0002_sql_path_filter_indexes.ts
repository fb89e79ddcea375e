import { sql, type Kysely } from 'kysely';

// The creators' nine indexes that only narrowed a filter on one column (a range of a metric, a
// language, a gender) go. Searches are answered by the in-memory index; these served only
// the SQL path, which answers while that index loads without a snapshot or while its thread is
// replaced, and they cost every write: a row whose follower count changes is a new version in
// every index of the table. At 1M creators an import of new creators ran at 4,700–5,700 lines/s
// with them and 9,200–10,500 without them, of changed creators at 2,300–2,700 and 4,300
// (docs/decisions.md, "The SQL path's indexes"). Kept: the keys, each documented sort's walk
// (alone, within a country, within verified or has-email), the publish window's (without it a
// narrow window's page walked the whole follower order: 2 s at 1M), the categories' and the text
// searches' GIN indexes.
// Frozen in time: never import application code here.

/** The indexes this migration drops, as the catalog migration made them (the benchmark's PostGraphile gets them back). */
export const SQL_PATH_FILTER_INDEXES: readonly { name: string; definition: string }[] = [
  ...['language', 'gender', 'avg_comment_count', 'avg_like_count', 'avg_view_count', 'avg_engagement_count', 'avg_video_engagement_rate', 'recent_month_publish_count', 'retweet_ratio'].map(
    (column) => ({ name: `creators_${column}_idx`, definition: `ON creators (platform, ${column})` }),
  ),
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const index of SQL_PATH_FILTER_INDEXES) await sql`DROP INDEX IF EXISTS ${sql.id(index.name)}`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of SQL_PATH_FILTER_INDEXES) await sql`CREATE INDEX IF NOT EXISTS ${sql.id(index.name)} ${sql.raw(index.definition)}`.execute(db);
}

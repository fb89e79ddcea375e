import { sql, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './database.js';

// Rows by key are read for every search page, always with the same statement text, and
// PostgreSQL spent longer planning `WHERE id IN (…20 values…)` than running it. These statements
// take their keys as one array (`= ANY($n)`: one text whatever the number of keys) and are
// prepared once per connection under a name (connect.ts gives pg the name): a page then costs a
// Bind and an Execute. Key lookups only: their plan never depends on the values; a search's may.

const names = new Map<string, string>();

/** `= ANY(values)` as one array parameter. */
export function anyOf(values: readonly string[]): RawBuilder<string> {
  return sql<string>`ANY(${[...values]})`;
}

/** Runs a key lookup as a prepared statement (on PostgreSQL without a transaction pooler; elsewhere as a plain one). */
export async function executePrepared<Row>(db: Kysely<Database>, query: Compilable<Row>): Promise<Row[]> {
  const compiled = query.compile();
  if (!names.has(compiled.sql)) names.set(compiled.sql, `cds_key_lookup_${names.size + 1}`);
  return (await db.executeQuery(compiled)).rows;
}

/** The name a statement text is prepared under, when it is a key lookup. */
export function preparedStatementName(text: string): string | undefined {
  return names.get(text);
}

// The tables that take bulk rows (seed, import) and what both transports need to know of them.
// No database code here: worker threads load this module (src/cli/import-worker.ts).

export type Row = Record<string, unknown>;

/** A table that takes bulk rows: its key, and its columns with the element type unnest needs. */
export interface BulkTable {
  name: 'categories' | 'creators' | 'channels' | 'videos' | 'live_streams';
  key: readonly string[];
  /** Every column a row may carry, in COPY order; `cast` for array-valued columns. */
  columns: readonly (readonly [column: string, elementType: string, cast?: string])[];
}

export const categoriesTable: BulkTable = {
  name: 'categories',
  key: ['id'],
  columns: [['id', 'int4'], ['parent_id', 'int4'], ['level', 'int2'], ['name', 'text']],
};

export const creatorsTable: BulkTable = {
  name: 'creators',
  key: ['platform', 'user_id'],
  columns: [
    ['platform', 'text'], ['user_id', 'text'], ['username', 'text'], ['full_name', 'text'], ['avatar', 'text'],
    ['country', 'text'], ['language', 'text'], ['gender', 'int2'], ['follower_count', 'int8'], ['is_verified', 'bool'],
    ['has_email', 'bool'], ['avg_engagement_rate', 'numeric'], ['avg_video_engagement_rate', 'numeric'],
    ['avg_comment_count', 'numeric'], ['avg_like_count', 'numeric'], ['avg_retweet_count', 'numeric'],
    ['avg_view_count', 'numeric'], ['retweet_ratio', 'numeric'], ['reply_ratio', 'numeric'], ['post_count', 'int8'],
    ['video_count', 'int8'], ['last_publish_at', 'timestamptz'], ['recent_month_publish_count', 'int4'],
    ['recent_week_publish_count', 'int4'], ['last_post', 'text', 'jsonb'], ['evaluation_min', 'numeric'],
    ['evaluation_max', 'numeric'], ['category_ids', 'text', 'integer[]'], ['last_update_at', 'timestamptz'],
  ],
};

export const channelsTable: BulkTable = {
  name: 'channels',
  key: ['channel_id'],
  columns: [
    ['channel_id', 'text'], ['title', 'text'], ['avatar', 'text'], ['country', 'text'], ['language', 'text'],
    ['gender', 'int2'], ['follower_count', 'int8'], ['avg_engagement_rate', 'numeric'], ['avg_play_count', 'numeric'],
    ['avg_like_count', 'numeric'], ['avg_comment_count', 'numeric'], ['video_count', 'int8'],
    ['recent_month_publish_count', 'int4'], ['evaluation_min', 'numeric'], ['evaluation_max', 'numeric'],
    ['last_update_at', 'timestamptz'],
  ],
};

export const videosTable: BulkTable = {
  name: 'videos',
  key: ['video_id'],
  columns: [
    ['video_id', 'text'], ['channel_id', 'text'], ['title', 'text'], ['description', 'text'], ['cover_url', 'text'],
    ['create_at', 'timestamptz'], ['duration_seconds', 'int4'], ['video_url', 'text'], ['video_type', 'int2'],
    ['category_id', 'int4'], ['like_count', 'int8'], ['comment_count', 'int8'], ['play_count', 'int8'],
    ['engagement_rate', 'numeric'], ['last_update_at', 'timestamptz'],
  ],
};

export const liveStreamsTable: BulkTable = {
  name: 'live_streams',
  key: ['id'],
  columns: [
    ['id', 'text'], ['user_id', 'text'], ['user_login', 'text'], ['user_name', 'text'], ['game_id', 'text'],
    ['game_name', 'text'], ['type', 'text'], ['title', 'text'], ['viewer_count', 'int8'], ['started_at', 'timestamptz'],
    ['language', 'text'], ['thumbnail_url', 'text'], ['tags', 'text', 'text[]'], ['is_mature', 'bool'],
    ['last_update_at', 'timestamptz'],
  ],
};

const columnNameLists = new WeakMap<BulkTable, readonly string[]>();
/** The table's columns in COPY order (one array per table: a row's encoding asks for it). */
export function columnNames(table: BulkTable): readonly string[] {
  let names = columnNameLists.get(table);
  if (!names) columnNameLists.set(table, (names = table.columns.map(([column]) => column)));
  return names;
}
/** Tables whose rows carry `last_update_at`, set by the database when a row does not give it. */
export const isStamped = (table: BulkTable) => table.columns.some(([column]) => column === 'last_update_at');

/** A row's key as one string. */
export const keyOf = (table: BulkTable, row: Row) => table.key.map((column) => String(row[column])).join('\u0000');

/** One row per key, the last one given: a statement cannot touch a row twice. */
export function lastRowPerKey(table: BulkTable, rows: Iterable<Row>): Row[] {
  const latest = new Map<string, Row>();
  for (const row of rows) latest.set(keyOf(table, row), row);
  return [...latest.values()];
}

/**
 * Splits `update-changed` rows by whether they give `last_update_at`: a given stamp is part of the
 * comparison, while without one an otherwise equal row keeps the stamp it has. Each group is
 * written by its own statement, with the columns it carries.
 */
export function stampGroups(table: BulkTable, rows: readonly Row[]): { stamped: boolean; rows: Row[] }[] {
  if (!isStamped(table)) return [{ stamped: false, rows: [...rows] }];
  return [false, true].map((stamped) => ({ stamped, rows: rows.filter((row) => (row.last_update_at !== undefined) === stamped) }));
}

/** The columns an `update-changed` statement writes: every column, `last_update_at` only if given. */
export const writtenColumns = (table: BulkTable, stamped: boolean) =>
  columnNames(table).filter((column) => stamped || column !== 'last_update_at');

/** The columns whose difference makes an `update-changed` row (bulk.ts) replace the stored one. */
export const comparedColumns = (table: BulkTable, stamped: boolean) =>
  writtenColumns(table, stamped).filter((column) => !table.key.includes(column));

/**
 * A PostgreSQL array literal ({1,NULL,"a \\"b\\""}), for unnest parameters and COPY text alike:
 * the driver's own array serialisation costs more than generating the rows.
 */
export function arrayLiteral(values: readonly unknown[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) parts[i] = 'NULL';
    else if (typeof value === 'number' || typeof value === 'boolean') parts[i] = String(value);
    else {
      const text = value instanceof Date ? value.toISOString() : Array.isArray(value) ? arrayLiteral(value) : String(value);
      parts[i] = `"${text.replace(/[\\"]/g, '\\$&')}"`;
    }
  }
  return `{${parts.join(',')}}`;
}


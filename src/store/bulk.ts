import { performance } from 'node:perf_hooks';
import { sql, type Kysely, type OnConflictBuilder, type OnConflictUpdateBuilder } from 'kysely';
import {
  arrayLiteral,
  comparedColumns,
  isStamped,
  lastRowPerKey,
  stampGroups,
  writtenColumns,
  type BulkTable,
  type Row,
} from './bulk-tables.js';
import type { EncodedRows } from './copy-text.js';
import type { Database } from './database.js';

// Bulk writes of mapped rows (src/store/imports.ts maps records to rows; src/cli/seed.ts generates
// them) into the tables of bulk-tables.ts. Where rows come from is one code path; how they reach
// the table is a `BulkTransport`:
// statements through Kysely here (any store, and inside a caller's transaction), or COPY through a
// session of its own on a PostgreSQL server (bulk-copy.ts).


/**
 * What a row whose key is already stored does:
 * - `keep-stored`: nothing (seeding: a second run only adds the missing rows). Keys must be unique
 *   within one load.
 * - `update-changed`: it replaces the stored row, but only where some column differs (import: the
 *   same file twice changes nothing, `last_update_at` included). Within one write the last row of a
 *   key wins. A row without `last_update_at` is stamped with the time of the write if it changes.
 */
export type Conflict = 'keep-stored' | 'update-changed';

/**
 * Writes rows: an array, a lazy iterable the transport pulls as it sends, or rows already encoded
 * as COPY text where they were made (a worker thread), which only a transport that
 * `takesEncodedRows` accepts. Resolves to the rows written.
 */
export type WriteRows = (rows: Iterable<Row> | EncodedRows) => Promise<number>;

export const isEncoded = (rows: Iterable<Row> | EncodedRows): rows is EncodedRows => 'copyText' in rows;

export interface BulkTransport {
  /** True when loads into different tables may run at the same time. */
  readonly concurrent: boolean;
  /** True when `write` accepts EncodedRows as well as rows. */
  readonly takesEncodedRows: boolean;
  /**
   * Loads one table: `fill` writes its rows through `write`, one call after another. `note`
   * receives progress of the transport's own steps. Resolves to the rows written (inserted, or
   * inserted and updated).
   */
  load(table: BulkTable, conflict: Conflict, fill: (write: WriteRows) => Promise<void>, note?: (text: string) => void, options?: LoadOptions): Promise<number>;
  /**
   * VACUUM ANALYZE, so counts become index-only scans at once (autovacuum may be off). Run it once
   * no load is open: a transaction that began before a load committed keeps its rows from being
   * marked visible to all.
   */
  vacuumAnalyze(table: BulkTable, note?: (text: string) => void): Promise<void>;
}

export interface LoadOptions {
  /**
   * Settles once the rows this table's foreign keys point at are committed (another load of the
   * same seed). The load's references are checked only after it resolved: a transport may copy the
   * rows meanwhile and check them all at once before it commits; if it rejects, so does the load.
   */
  referencedRowsStored?: Promise<unknown>;
}

type AnyOnConflict = OnConflictBuilder<any, any>;

/**
 * `ON CONFLICT (key) DO UPDATE SET <every column> = excluded.<column> WHERE <some column> IS DISTINCT
 * FROM excluded.<column>`: a row equal to the stored one is not written. Without a given stamp,
 * excluded.last_update_at is the column default, the time of the write. Shared by both transports.
 */
export function updateChanged(table: BulkTable, stamped: boolean) {
  const columns = comparedColumns(table, stamped);
  const compared = columns.map((column) => sql<boolean>`${sql.ref(`${table.name}.${column}`)} IS DISTINCT FROM ${sql.ref(`excluded.${column}`)}`);
  const updated = isStamped(table) && !stamped ? [...columns, 'last_update_at'] : columns;
  return (conflict: AnyOnConflict): OnConflictUpdateBuilder<any, any> =>
    conflict
      .columns(table.key as string[])
      .doUpdateSet(Object.fromEntries(updated.map((column) => [column, sql.ref(`excluded.${column}`)])))
      .where(sql<boolean>`${sql.join(compared, sql` OR `)}`);
}

/** Rows per unnest INSERT: one bind parameter per column (an array each), free of PostgreSQL's limit. */
const UNNEST_BATCH_ROWS = 5_000;
/** Rows per multi-row VALUES upsert: every table stays far below PostgreSQL's 65,535 bind parameters. */
export const VALUES_BATCH_ROWS = 500;

/** `INSERT INTO t (…) SELECT … FROM unnest($1::text[], $2::int8[], …) ON CONFLICT DO NOTHING`. */
function unnestInsert(table: BulkTable, rows: readonly Row[]) {
  const arrays = table.columns.map(([column, type]) => sql`${arrayLiteral(rows.map((row) => row[column]))}::${sql.raw(type)}[]`);
  const names = table.columns.map(([column]) => sql.id(column));
  const selected = table.columns.map(([column, , cast]) => (cast ? sql`${sql.id(column)}::${sql.raw(cast)}` : sql.id(column)));
  return sql`INSERT INTO ${sql.id(table.name)} (${sql.join(names)})
    SELECT ${sql.join(selected)} FROM unnest(${sql.join(arrays)}) AS u(${sql.join(names)})
    ON CONFLICT DO NOTHING`;
}

async function insertMissing(db: Kysely<Database>, table: BulkTable, rows: Iterable<Row>): Promise<number> {
  let inserted = 0;
  // The next batch is generated while the database inserts the previous one.
  let pending: Promise<void> | null = null;
  const send = async (batch: Row[]) => {
    await pending;
    pending = unnestInsert(table, batch)
      .execute(db)
      .then((result) => {
        inserted += Number(result.numAffectedRows ?? 0);
      });
  };
  let batch: Row[] = [];
  for (const row of rows) {
    batch.push(row);
    if (batch.length === UNNEST_BATCH_ROWS) {
      await send(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await send(batch);
  await pending;
  return inserted;
}

async function upsertChanged(db: Kysely<Database>, table: BulkTable, rows: Iterable<Row>): Promise<number> {
  let written = 0;
  for (const group of stampGroups(table, lastRowPerKey(table, rows))) {
    const columns = writtenColumns(table, group.stamped);
    for (let offset = 0; offset < group.rows.length; offset += VALUES_BATCH_ROWS) {
      const values = group.rows
        .slice(offset, offset + VALUES_BATCH_ROWS)
        .map((row) => Object.fromEntries(columns.map((column) => [column, row[column]])));
      const [result] = await (db as unknown as Kysely<Record<string, Row>>)
        .insertInto(table.name)
        .values(values)
        .onConflict(updateChanged(table, group.stamped))
        .execute();
      written += Number(result.numInsertedOrUpdatedRows ?? 0);
    }
  }
  return written;
}

/**
 * Writes rows with statements through `db`, which may be a transaction: unnest INSERTs of 5,000
 * rows for `keep-stored`, multi-row VALUES upserts of 500 for `update-changed`.
 */
export function writeRows(db: Kysely<Database>, table: BulkTable, conflict: Conflict, rows: Iterable<Row>): Promise<number> {
  return conflict === 'keep-stored' ? insertMissing(db, table, rows) : upsertChanged(db, table, rows);
}

export async function vacuumAnalyze(db: Kysely<Database>, table: BulkTable): Promise<void> {
  await sql`VACUUM ANALYZE ${sql.table(table.name)}`.execute(db);
}

/**
 * Every store (the embedded one has no COPY from a client stream): each write in a transaction of
 * its own, one table after another since the embedded store has a single connection.
 */
export function statementTransport(db: Kysely<Database>): BulkTransport {
  return {
    concurrent: false,
    takesEncodedRows: false,
    async load(table, conflict, fill, _note, { referencedRowsStored } = {}) {
      await referencedRowsStored;
      let written = 0;
      await fill(async (rows) => {
        if (isEncoded(rows)) throw new TypeError('the statement transport writes rows, not COPY text');
        const count = await db.transaction().execute((trx) => writeRows(trx, table, conflict, rows));
        written += count;
        return count;
      });
      return written;
    },
    async vacuumAnalyze(table, note = () => {}) {
      const started = performance.now();
      await vacuumAnalyze(db, table);
      note(`vacuumed and analysed in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    },
  };
}

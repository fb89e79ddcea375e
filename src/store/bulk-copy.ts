import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { columnNames, comparedColumns, isStamped, lastRowPerKey, writtenColumns, type BulkTable, type Row } from './bulk-tables.js';
import { isEncoded, updateChanged, type BulkTransport, type Conflict, type LoadOptions } from './bulk.js';
import { enabledChangeTriggers, reloadMarker } from './changes.js';
import { copyChunks, type EncodedRows } from './copy-text.js';
import type { Database } from './database.js';

// The PostgreSQL server's transport: rows travel as COPY text, each load on a connection of its own.
//
// - Into an empty table, one transaction: its secondary indexes are dropped, the rows copied, the
//   indexes rebuilt (loadIntoEmptyTable).
// - Into a table with rows, each write is a transaction: COPY into a temporary staging table, then
//   one INSERT … SELECT … ON CONFLICT into the table, through the same ON CONFLICT clause as the
//   statement transport.

/** Memory for index builds: sorts of millions of keys and GIN's pending entries stay in memory. */
const INDEX_BUILD_MEMORY = '1GB';
const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';
const INSUFFICIENT_PRIVILEGE = '42501';
/** COPY text buffered ahead of the connection. */
const COPY_BUFFER_CHARS = 1024 * 1024;

/** `connect` opens a connection for one load, without statement or query timeouts. */
export function copyTransport(connect: () => Promise<pg.Client>, db: Kysely<Database>): BulkTransport {
  return {
    concurrent: true,
    takesEncodedRows: true,
    load: (table, conflict, fill, note = () => {}, { referencedRowsStored }: LoadOptions = {}) =>
      withSession(connect, db, async (session) => {
        let written = 0;
        const counted = async (writing: Promise<number>) => {
          const rows = await writing;
          written += rows;
          return rows;
        };
        // Into an empty table, nothing stored can conflict, and keys are unique within a
        // keep-stored load: rows go straight into the table, frozen when it could be truncated.
        const loadedEmpty = await loadIntoEmptyTable(session, table, conflict, note, referencedRowsStored, (freeze) =>
          fill((rows) => counted(conflict === 'keep-stored' ? session.copyIn(table, copyChunks(table, rows), { freeze }) : session.copyOrUpsert(table, rows))),
        );
        if (!loadedEmpty) {
          await referencedRowsStored;
          await fill((rows) => counted(session.transaction(() => session.stageAndWrite(table, conflict, rows))));
        }
        return written;
      }),
    vacuumAnalyze: (table, note = () => {}) =>
      withSession(connect, db, async (session) => {
        const started = performance.now();
        await session.run(sql`VACUUM ANALYZE ${sql.table(table.name)}`);
        note(`vacuumed and analysed in ${secondsSince(started)} s`);
      }),
  };
}

/** A connection of its own for `work`, closed afterwards: its settings and staging table go with it. */
async function withSession<T>(connect: () => Promise<pg.Client>, db: Kysely<Database>, work: (session: CopySession) => Promise<T>): Promise<T> {
  const client = await connect();
  try {
    const session = new CopySession(client, db);
    // A staged batch is small next to the table: each row is looked up through the key index.
    // Otherwise the planner, unsure of a table growing inside the load, hashes the whole table
    // for every batch.
    await session.run(sql`SET enable_hashjoin = off`);
    await session.run(sql`SET enable_mergejoin = off`);
    return await work(session);
  } finally {
    await client.end();
  }
}

const secondsSince = (started: number) => ((performance.now() - started) / 1000).toFixed(1);

/**
 * Bulk load into an empty table, in one transaction: a failure leaves the table as it was, empty
 * and with every index. Returns false, having changed nothing, when the table has rows.
 *
 * before: unless the references can be checked at the end (below), wait for `referencedRowsStored`;
 *         lock the table (its readers wait until the load commits), check it is empty, save the
 *         definitions of its secondary indexes from the catalogue and drop them; pause its
 *         change-feed triggers (src/store/changes.ts); for keep-stored loads, truncate it (no
 *         other table's foreign key may point at it) so that COPY may write the rows frozen,
 *         visible to all and all-visible in the visibility map, whatever transactions run
 *         meanwhile; when `referencedRowsStored` is given and the role may, the foreign keys
 *         are left unchecked while rows are copied (deferReferenceChecks);
 * load:   `load(freeze)` writes the rows;
 * after:  recreate the indexes from the saved definitions (one sort each instead of a page split
 *         per row), with memory for the sorts; check the foreign keys left unchecked, all rows at
 *         once, once `referencedRowsStored` resolved (after the builds: an index on the
 *         referencing columns is read instead of the table); resume the triggers and write one
 *         "reload the table" change instead of a change per row; commit.
 *
 * The migrations stay the only definition of the indexes. Foreign keys stay: dropping one would
 * lock the referenced table against its readers too.
 */
async function loadIntoEmptyTable(
  session: CopySession,
  table: BulkTable,
  conflict: Conflict,
  note: (text: string) => void,
  referencedRowsStored: Promise<unknown> | undefined,
  load: (freeze: boolean) => Promise<void>,
): Promise<boolean> {
  return session.transaction(async () => {
    // Decided before the lock: a load that must check row by row waits for the referenced rows
    // without keeping this table's readers waiting too.
    const deferred = referencedRowsStored !== undefined && (await deferReferenceChecks(session));
    if (!deferred) await referencedRowsStored;
    await session.run(sql`LOCK TABLE ${sql.table(table.name)} IN ACCESS EXCLUSIVE MODE`);
    const { rows } = await session.run<{ stored: boolean; referenced: boolean }>(sql`
      SELECT EXISTS (SELECT 1 FROM ${sql.table(table.name)}) AS stored,
        EXISTS (SELECT 1 FROM pg_constraint WHERE contype = 'f' AND confrelid = ${table.name}::regclass AND conrelid <> confrelid) AS referenced`);
    if (rows[0].stored) return false;
    const indexes = await secondaryIndexes(session, table);
    for (const { name } of indexes) await session.run(sql`DROP INDEX ${sql.id(name)}`);
    const entity = table.name === 'categories' ? null : table.name;
    const triggers = entity ? (await session.run(enabledChangeTriggers(entity))).rows : [];
    for (const { name } of triggers) await session.run(sql`ALTER TABLE ${sql.table(table.name)} DISABLE TRIGGER ${sql.id(name)}`);
    const freeze = conflict === 'keep-stored' && !rows[0].referenced;
    if (freeze) await session.run(sql`TRUNCATE ${sql.table(table.name)}`);
    note(
      `empty table: its ${indexes.length} secondary indexes are built after the load${freeze ? ', rows are copied frozen' : ''}` +
        (deferred ? ', references are checked at the end' : ''),
    );

    await load(freeze);

    await session.run(sql`SET LOCAL maintenance_work_mem = ${sql.lit(INDEX_BUILD_MEMORY)}`);
    if (deferred) await session.run(sql`SET LOCAL session_replication_role = origin`);
    const started = performance.now();
    for (const [done, { name, definition }] of indexes.entries()) {
      const building = performance.now();
      await session.run(sql.raw(definition));
      note(`index ${done + 1} / ${indexes.length} built: ${name} in ${secondsSince(building)} s`);
    }
    note(`${indexes.length} indexes built in ${secondsSince(started)} s`);
    if (deferred) {
      await referencedRowsStored;
      const checking = performance.now();
      await checkReferences(session, table);
      note(`references checked in ${secondsSince(checking)} s`);
    }
    for (const { name } of triggers) await session.run(sql`ALTER TABLE ${sql.table(table.name)} ENABLE TRIGGER ${sql.id(name)}`);
    if (entity) await session.run(reloadMarker(entity));
    return true;
  });
}

/**
 * Leaves the table's foreign keys unchecked for the rest of the transaction: PostgreSQL's
 * referential-integrity triggers do not fire under `session_replication_role = replica`. Checked
 * row by row, the references of 500,000 videos doubled the COPY's time (4.05 s against 1.9 s,
 * 2026-11-25), and the videos of a seed had to wait for their channels to commit. Only a
 * superuser, or a role granted SET on the setting, may: otherwise false, nothing changed.
 */
async function deferReferenceChecks(session: CopySession): Promise<boolean> {
  await session.run(sql`SAVEPOINT defer_reference_checks`);
  try {
    await session.run(sql`SET LOCAL session_replication_role = replica`);
    await session.run(sql`RELEASE SAVEPOINT defer_reference_checks`);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw error;
    // Rolled back and released: COPY FREEZE must run in the subtransaction that truncated.
    await session.run(sql`ROLLBACK TO SAVEPOINT defer_reference_checks`);
    await session.run(sql`RELEASE SAVEPOINT defer_reference_checks`);
    return false;
  }
}

/**
 * Every foreign key of `table`, checked for all its rows at once. Its distinct keys are read once
 * (from an index on them when there is one: 6 s for 20M videos, against 54 s for two passes over
 * the table), the referenced rows among them locked FOR KEY SHARE, as the row-by-row checks lock
 * them, so none is deleted or re-keyed before the load commits; fewer rows locked than keys read
 * means a reference is missing, and the load fails with PostgreSQL's own error (23503). Hash joins
 * (the session turns them off for its staged batches), with the index builds' memory.
 */
async function checkReferences(session: CopySession, table: BulkTable): Promise<void> {
  await session.run(sql`SET LOCAL enable_hashjoin = on`);
  await session.run(sql`SET LOCAL work_mem = ${sql.lit(INDEX_BUILD_MEMORY)}`);
  const { rows: foreignKeys } = await session.run<{ name: string; referenced: string; columns: string[]; referencedColumns: string[] }>(sql`
    SELECT c.conname AS name, r.relname AS referenced,
      ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n) AS columns,
      ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n)
        JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.n) AS "referencedColumns"
    FROM pg_constraint c JOIN pg_class r ON r.oid = c.confrelid
    WHERE c.contype = 'f' AND c.conrelid = ${table.name}::regclass
    ORDER BY c.conname`);
  for (const key of foreignKeys) {
    const columns = sql.join(key.columns.map((column) => sql.ref(`t.${column}`)));
    const matches = sql.join(
      key.columns.map((column, i) => sql`${sql.ref(`r.${key.referencedColumns[i]}`)} = ${sql.ref(`t.${column}`)}`),
      sql` AND `,
    );
    // MATCH SIMPLE: a row with a null in the key references nothing.
    const present = sql.join(key.columns.map((column) => sql`${sql.ref(`t.${column}`)} IS NOT NULL`), sql` AND `);
    const { rows: counts } = await session.run<{ keys: string; locked: string }>(sql`
      WITH keys AS MATERIALIZED (SELECT DISTINCT ${columns} FROM ${sql.table(table.name)} t WHERE ${present}),
        locked AS (SELECT 1 FROM ${sql.table(key.referenced)} r JOIN keys t ON ${matches} FOR KEY SHARE OF r)
      SELECT (SELECT count(*) FROM keys) AS keys, (SELECT count(*) FROM locked) AS locked`);
    if (counts[0].keys === counts[0].locked) continue;
    const { rows: missing } = await session.run<Record<string, unknown>>(sql`
      SELECT ${columns} FROM ${sql.table(table.name)} t
      WHERE ${present} AND NOT EXISTS (SELECT 1 FROM ${sql.table(key.referenced)} r WHERE ${matches})
      LIMIT 1`);
    const values = key.columns.map((column) => String(missing[0]?.[column])).join(', ');
    throw Object.assign(new Error(`insert or update on table "${table.name}" violates foreign key constraint "${key.name}"`), {
      code: FOREIGN_KEY_VIOLATION,
      detail: `Key (${key.columns.join(', ')})=(${values}) is not present in table "${key.referenced}".`,
    });
  }
}

/**
 * The indexes of `table` (current schema) that are neither unique nor exclusion indexes: the key
 * stays, since it enforces the key during the load and ON CONFLICT needs it. B-trees come last:
 * PostgreSQL builds them on parallel workers, GIN indexes on one core, so a load that is the last
 * one running ends on builds that use every core (seeds run loads side by side).
 */
async function secondaryIndexes(session: CopySession, table: BulkTable): Promise<{ name: string; definition: string }[]> {
  const { rows } = await session.run<{ name: string; definition: string }>(sql`
    SELECT i.indexname AS name, i.indexdef AS definition
    FROM pg_indexes i JOIN pg_index x ON x.indexrelid = format('%I.%I', i.schemaname, i.indexname)::regclass
      JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_am am ON am.oid = c.relam
    WHERE i.schemaname = current_schema() AND i.tablename = ${table.name} AND NOT x.indisunique AND NOT x.indisexclusion
    ORDER BY am.amname = 'btree', i.indexname`);
  return rows;
}

/** One connection: Kysely builds the statements, the client runs them and streams COPY. */
class CopySession {
  private staging: string | null = null;

  constructor(
    private readonly client: pg.Client,
    private readonly db: Kysely<Database>,
  ) {}

  /** Runs a query builder or a raw `sql` template (builders ignore the executor they are given). */
  run<R = unknown>(statement: { compile(db: Kysely<any>): CompiledQuery }) {
    const compiled = statement.compile(this.db);
    return this.client.query<R & pg.QueryResultRow>(compiled.sql, compiled.parameters as unknown[]);
  }

  async transaction<T>(work: () => Promise<T>): Promise<T> {
    await this.client.query('BEGIN');
    try {
      const value = await work();
      await this.client.query('COMMIT');
      return value;
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }

  /** COPY text into `into` (the table, or its staging table), in the table's column order; resolves to the rows copied. */
  async copyIn(table: BulkTable, chunks: Iterable<string>, { into = table.name, freeze = false }: { into?: string; freeze?: boolean } = {}): Promise<number> {
    const columns = sql.join(columnNames(table).map((column) => sql.id(column)));
    const options = freeze ? sql` WITH (FREEZE)` : sql``;
    const stream = this.client.query(copyFrom(sql`COPY ${sql.table(into)} (${columns}) FROM STDIN${options}`.compile(this.db).sql));
    await pipeline(Readable.from(chunks, { objectMode: false, highWaterMark: COPY_BUFFER_CHARS }), stream);
    return stream.rowCount;
  }

  /** Within the caller's transaction: the rows into staging, then into the table. */
  async stageAndWrite(table: BulkTable, conflict: Conflict, rows: Iterable<Row> | EncodedRows): Promise<number> {
    if (conflict === 'update-changed') return this.stageAndUpsert(table, rows);
    const staging = await this.stage(table, copyChunks(table, rows));
    const columns = columnNames(table);
    const { rowCount } = await this.run(
      this.any()
        .insertInto(table.name)
        .columns(columns)
        .expression(this.any().selectFrom(staging).select(columns))
        .onConflict((conflict) => conflict.doNothing()),
    );
    return rowCount ?? 0;
  }

  /**
   * `update-changed` into a table that was empty when the load began: COPY straight into it, a
   * fraction of what staging and upserting cost PostgreSQL, when no earlier batch of the load wrote
   * one of the keys. One that did makes the COPY fail on the key index; the batch is rolled back to
   * its savepoint and upserted. Rows without `last_update_at` always go through staging, where
   * the column default stamps them.
   */
  async copyOrUpsert(table: BulkTable, rows: Iterable<Row> | EncodedRows): Promise<number> {
    const unique = isEncoded(rows) ? rows : lastRowPerKey(table, rows);
    const stamped = isEncoded(unique) ? unique.everyRowStamped === true : unique.every((row) => row.last_update_at !== undefined);
    if (isStamped(table) && !stamped) return this.stageAndUpsert(table, unique);
    await this.client.query('SAVEPOINT copy_into_table');
    try {
      const copied = await this.copyIn(table, copyChunks(table, unique));
      await this.client.query('RELEASE SAVEPOINT copy_into_table');
      return copied;
    } catch (error) {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
      await this.client.query('ROLLBACK TO SAVEPOINT copy_into_table');
      return this.stageAndUpsert(table, unique);
    }
  }

  /**
   * `update-changed` from staging, per stamp group (bulk.ts `stampGroups`):
   *   INSERT INTO t (…) SELECT … FROM staging s WHERE s.last_update_at IS [NOT] NULL
   *     AND NOT EXISTS (SELECT FROM t WHERE t.key = s.key AND (t.…) IS NOT DISTINCT FROM (s.…))
   *   ON CONFLICT (key) DO UPDATE … WHERE … IS DISTINCT FROM …
   * The NOT EXISTS leaves out the rows equal to the stored ones before ON CONFLICT would lock them.
   */
  async stageAndUpsert(table: BulkTable, rows: Iterable<Row> | EncodedRows): Promise<number> {
    const unique = isEncoded(rows) ? rows : lastRowPerKey(table, rows);
    if (isEncoded(unique) ? unique.copyText === '' : unique.length === 0) return 0;
    const staging = await this.stage(table, copyChunks(table, unique));
    let written = 0;
    for (const stamped of isStamped(table) ? [false, true] : [false]) {
      const columns = writtenColumns(table, stamped);
      const refs = (alias: string, names: readonly string[]) => sql.join(names.map((column) => sql.ref(`${alias}.${column}`)));
      const compared = comparedColumns(table, stamped);
      let source = this.any()
        .selectFrom(`${staging} as s`)
        .select(columns.map((column) => `s.${column}`))
        .where(sql<boolean>`NOT EXISTS (SELECT FROM ${sql.table(table.name)} AS t
          WHERE (${refs('t', table.key)}) = (${refs('s', table.key)}) AND (${refs('t', compared)}) IS NOT DISTINCT FROM (${refs('s', compared)}))`);
      if (isStamped(table)) source = source.where('s.last_update_at', stamped ? 'is not' : 'is', null);
      const { rowCount } = await this.run(this.any().insertInto(table.name).columns(columns).expression(source).onConflict(updateChanged(table, stamped)));
      written += rowCount ?? 0;
    }
    return written;
  }

  /** A temporary table with the columns (types, collations) of `table`, emptied, then filled by COPY. */
  private async stage(table: BulkTable, chunks: Iterable<string>): Promise<string> {
    if (this.staging === null) {
      const name = `staging_${table.name}`;
      const columns = columnNames(table).map((column) => sql.id(column));
      await this.run(sql`CREATE TEMPORARY TABLE ${sql.id(name)} AS SELECT ${sql.join(columns)} FROM ${sql.table(table.name)} WITH NO DATA`);
      this.staging = name;
    } else {
      await this.run(sql`TRUNCATE ${sql.id(this.staging)}`);
    }
    await this.copyIn(table, chunks, { into: this.staging });
    return this.staging;
  }

  private any() {
    return this.db as unknown as Kysely<any>;
  }
}


import { sql, type Kysely } from 'kysely';

// The change feed of the catalogue, read by every server process to keep its in-memory search
// index within seconds of the database (src/search/, src/store/changes.ts).
//
// Statement-level triggers with transition tables record the keys of the rows each statement
// touched, one set-based INSERT per statement (a 500-row upsert is one trigger call, not 500).
// `txid` is the writing transaction: a reader follows the feed by id, and also re-reads the rows of
// transactions that were still running at its last read (their ids may be lower than ones it saw).
// A bulk load (seeding an empty table, replacing the live-stream snapshot) sets
// `creator_data.bulk_load` for its transaction, skips the per-row records and writes one row with
// a NULL key instead: "reload the whole table".
// Frozen in time: never import application code here.

const tables = [
  { name: 'creators', key: 'user_id', platform: 'platform' },
  { name: 'channels', key: 'channel_id', platform: null },
  { name: 'videos', key: 'video_id', platform: null },
  { name: 'live_streams', key: 'id', platform: null },
] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('catalog_changes')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('platform', 'text')
    .addColumn('key', 'text')
    .addColumn('txid', sql`xid8`, (c) => c.notNull().defaultTo(sql`pg_current_xact_id()`))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX catalog_changes_txid_idx ON catalog_changes (txid)`.execute(db);
  await sql`CREATE INDEX catalog_changes_changed_at_idx ON catalog_changes (changed_at)`.execute(db);

  // TG_ARGV: the key column, and the platform column or ''. UPDATE records old and new keys alike.
  await sql`
    CREATE FUNCTION catalog_changes_record() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      platform_expr text := CASE WHEN TG_ARGV[1] = '' THEN 'NULL' ELSE format('r.%I', TG_ARGV[1]) END;
      rows_sql text;
    BEGIN
      IF current_setting('creator_data.bulk_load', true) = 'on' THEN
        RETURN NULL;
      END IF;
      rows_sql := CASE TG_OP
        WHEN 'INSERT' THEN 'SELECT * FROM new_rows'
        WHEN 'DELETE' THEN 'SELECT * FROM old_rows'
        ELSE 'SELECT * FROM new_rows UNION ALL SELECT * FROM old_rows'
      END;
      EXECUTE format(
        'INSERT INTO catalog_changes (entity, platform, key) SELECT DISTINCT %L, %s, r.%I FROM (%s) r',
        TG_TABLE_NAME, platform_expr, TG_ARGV[0], rows_sql
      );
      RETURN NULL;
    END
    $$
  `.execute(db);

  for (const table of tables) {
    const args = sql`${sql.lit(table.key)}, ${sql.lit(table.platform ?? '')}`;
    await sql`CREATE TRIGGER ${sql.id(`${table.name}_changes_insert`)} AFTER INSERT ON ${sql.id(table.name)}
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_changes_record(${args})`.execute(db);
    await sql`CREATE TRIGGER ${sql.id(`${table.name}_changes_update`)} AFTER UPDATE ON ${sql.id(table.name)}
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_changes_record(${args})`.execute(db);
    await sql`CREATE TRIGGER ${sql.id(`${table.name}_changes_delete`)} AFTER DELETE ON ${sql.id(table.name)}
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_changes_record(${args})`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of tables) {
    for (const event of ['insert', 'update', 'delete']) {
      await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table.name}_changes_${event}`)} ON ${sql.id(table.name)}`.execute(db);
    }
  }
  await sql`DROP FUNCTION IF EXISTS catalog_changes_record()`.execute(db);
  await db.schema.dropTable('catalog_changes').execute();
}

import { sql, type Kysely } from 'kysely';

// The highest change id and transaction id the change feed's pruning has deleted, one row, raised
// by each pruning in the statement that deletes. A reader at a position was pruned past exactly
// when a change it had yet to read is gone: one with a higher id, or of a transaction still running
// at its position. Inferred from the horizon samples instead, a load or a snapshot older than the
// retention counted as pruned past whether or not anything after it was pruned: a 10M-row load
// that took 25 minutes on a slow machine was loaded again, and its snapshot refused, with nothing
// written meanwhile.
// What older builds pruned is not recorded: the row starts at bounds that hold for it. The newest
// change is never pruned, so every id pruned is below the newest, and an empty feed was never
// pruned at all; every transaction pruned had ended before the newest sample the retention (15
// minutes) old, or, without one, before now. (Without the empty feed's case, a position taken on
// an empty feed while another database's transaction ran read as pruned once that one had ended.)
// Frozen in time: never import application code here.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('change_pruned')
    .addColumn('id', 'boolean', (c) => c.primaryKey().defaultTo(true).check(sql`id`))
    .addColumn('max_id', 'bigint', (c) => c.notNull())
    .addColumn('max_txid', 'bigint', (c) => c.notNull())
    .execute();
  await sql`
    INSERT INTO change_pruned (max_id, max_txid)
    SELECT coalesce((SELECT max(id) FROM catalog_changes), 1) - 1,
      CASE WHEN NOT EXISTS (SELECT FROM catalog_changes) THEN 0
      ELSE coalesce(
        (SELECT horizon::text::bigint FROM change_horizons WHERE sampled_at <= now() - interval '15 minutes' ORDER BY sampled_at DESC LIMIT 1),
        pg_snapshot_xmin(pg_current_snapshot())::text::bigint) - 1 END`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('change_pruned').execute();
}

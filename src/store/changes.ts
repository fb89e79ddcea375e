import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.js';

// Reading the catalogue's change feed (migrations/2026_11_23_0003_catalog_changes.ts).
//
// A reader remembers the highest change id it has seen and the transactions that were still running
// when it last read. Ids are allocated in time order, so a change it has not seen is either newer
// than that id, or belongs to one of those transactions (which may commit later with lower ids):
//   SELECT … FROM catalog_changes WHERE id > :lastId OR txid = ANY(:runningAtLastRead)
// Everything is read in one REPEATABLE READ snapshot whose running transactions become the next set.

export type CatalogEntity = 'creators' | 'channels' | 'videos' | 'live_streams';

export interface CatalogChange {
  entity: CatalogEntity;
  platform: string | null;
  /** The row's key; null: the whole table was reloaded in bulk. */
  key: string | null;
}

export interface FeedPosition {
  lastId: string;
  /** Transaction ids (xid8, as text) running at the snapshot. */
  running: string[];
}

/** How long changes are kept: a reader away longer than this reloads everything. */
export const CHANGE_RETENTION_MS = 15 * 60_000;
const READ_BATCH = 20_000;

/** `xmin:xmax:xip,xip` → the running transaction ids. */
function runningIn(snapshot: string): string[] {
  const running = snapshot.split(':')[2] ?? '';
  return running === '' ? [] : running.split(',');
}

/** The feed position of the calling transaction's snapshot (a full load's starting point). */
export async function feedPosition(trx: Transaction<Database> | Kysely<Database>): Promise<FeedPosition> {
  const { rows } = await sql<{ snapshot: string; last_id: string | number | bigint }>`
    SELECT pg_current_snapshot()::text AS snapshot, coalesce(max(id), 0) AS last_id FROM catalog_changes`.execute(trx);
  return { lastId: String(rows[0].last_id), running: runningIn(rows[0].snapshot) };
}

/** The changes committed since `from`, in id order, and the position to read from next. */
export async function readChanges(db: Kysely<Database>, from: FeedPosition): Promise<{ changes: CatalogChange[]; next: FeedPosition }> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const { rows } = await sql<{ snapshot: string }>`SELECT pg_current_snapshot()::text AS snapshot`.execute(trx);
      const changes: CatalogChange[] = [];
      let lastId = BigInt(from.lastId);
      let after = 0n;
      for (;;) {
        const batch = await sql<{ id: string | number | bigint; entity: CatalogEntity; platform: string | null; key: string | null }>`
          SELECT id, entity, platform, key FROM catalog_changes
          WHERE (id > ${from.lastId}::bigint OR txid = ANY(${sql.val(from.running)}::xid8[])) AND id > ${after.toString()}::bigint
          ORDER BY id LIMIT ${READ_BATCH}`.execute(trx);
        for (const row of batch.rows) {
          const id = BigInt(row.id);
          if (id > lastId) lastId = id;
          after = id;
          changes.push({ entity: row.entity, platform: row.platform, key: row.key });
        }
        if (batch.rows.length < READ_BATCH) break;
      }
      return { changes, next: { lastId: lastId.toString(), running: runningIn(rows[0].snapshot) } };
    });
}

/** One change as the feed holds it: what tells it apart from a change of the same id elsewhere. */
export interface ChangeFingerprint {
  changedAt: string;
  entity: string;
  platform: string | null;
  key: string | null;
}

/** The change of this id, or null when the feed no longer (or never) held it. */
export async function changeFingerprint(db: Kysely<Database>, id: string): Promise<ChangeFingerprint | null> {
  const { rows } = await sql<ChangeFingerprint>`
    SELECT changed_at::text AS "changedAt", entity, platform, key FROM catalog_changes WHERE id = ${id}::bigint`.execute(db);
  return rows[0] ?? null;
}

/** The name of the database `db` reads. */
export async function databaseName(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ name: string }>`SELECT current_database() AS name`.execute(db);
  return rows[0].name;
}

/** How often a serving process prunes the feed (ChangePruner). */
export const PRUNE_EVERY_MS = 60_000;

/**
 * The feed's pruning, run by every serving process on the primary (a replica refuses the DELETE;
 * with SEARCH_INDEX=off nothing reads the feed, but the triggers still write it). Each run samples
 * the transaction horizon and prunes up to the newest sample at least the retention old
 * (pruneChanges), so a process prunes nothing in its first CHANGE_RETENTION_MS; any other running
 * process may, it is idempotent.
 */
export class ChangePruner {
  #horizons: { at: number; xmin: string }[] = [];

  constructor(private readonly db: Kysely<Database>) {}

  async prune(now = Date.now()): Promise<void> {
    this.#horizons.push({ at: now, xmin: await transactionHorizon(this.db) });
    const old = (sample: { at: number } | undefined) => sample !== undefined && now - sample.at >= CHANGE_RETENTION_MS;
    while (old(this.#horizons[1])) this.#horizons.shift();
    if (old(this.#horizons[0])) await pruneChanges(this.db, this.#horizons[0].xmin);
  }
}

/**
 * The oldest transaction still running (`pg_snapshot_xmin`, xid8 as text): every transaction with
 * a lower id had ended when this was read. Sampled by the pruner (pruneChanges' `endedBefore`).
 */
export async function transactionHorizon(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ xmin: string }>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`.execute(db);
  return rows[0].xmin;
}

/**
 * Drops changes older than the retention (any process may; it is idempotent), except the newest:
 * a quiet database keeps the change its readers' positions, and their snapshots, refer to.
 *
 * A change's `changed_at` is its transaction's start (`now()`), not its commit: a transaction
 * open for longer than the retention commits changes that are already "old", and pruning by time
 * alone deleted them within a minute of the commit, before a reader that was loading, catching up
 * from a snapshot or between two reads had seen them; that reader then served the row's old values
 * until it changed again. So a change is dropped only when its transaction had also ended before
 * `endedBefore`, a transactionHorizon() read at least the retention ago: committed that long ago.
 */
export async function pruneChanges(db: Kysely<Database>, endedBefore: string): Promise<void> {
  await sql`DELETE FROM catalog_changes
    WHERE changed_at < now() - ${`${CHANGE_RETENTION_MS} milliseconds`}::interval
      AND txid < ${endedBefore}::xid8
      AND id < (SELECT max(id) FROM catalog_changes)`.execute(db);
}

/**
 * Runs a bulk write (seeding an empty table, replacing the live-stream snapshot) without a change
 * row per row: readers are told to reload the whole table instead, in the same transaction.
 */
export async function inBulk<T>(trx: Transaction<Database>, entities: readonly CatalogEntity[], work: () => Promise<T>): Promise<T> {
  await sql`SELECT set_config('creator_data.bulk_load', 'on', true)`.execute(trx);
  const result = await work();
  await sql`SELECT set_config('creator_data.bulk_load', 'off', true)`.execute(trx);
  for (const entity of entities) await reloadMarker(entity).execute(trx);
  return result;
}

/** The change row that tells readers to reload `entity` whole, written in the bulk load's transaction. */
export const reloadMarker = (entity: CatalogEntity) => sql`INSERT INTO catalog_changes (entity, key) VALUES (${entity}, NULL)`;

/**
 * The enabled change-feed triggers of `table`. A load into an empty table (src/store/bulk-copy.ts)
 * disables them in its transaction, which also spares PostgreSQL collecting every row into their
 * transition tables, and writes one reload marker instead.
 */
export const enabledChangeTriggers = (table: CatalogEntity) => sql<{ name: string }>`
  SELECT t.tgname AS name FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
  WHERE t.tgrelid = ${table}::regclass AND p.proname = 'catalog_changes_record' AND t.tgenabled <> 'D'
  ORDER BY t.tgname`;

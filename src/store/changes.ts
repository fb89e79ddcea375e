import { type RawBuilder, sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.js';
import { interval } from './values.js';

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

/**
 * A change of `catalog_changes` a reader at (`lastId`, `running`) has yet to read: a higher id, or
 * of a transaction running at its position (its id may be lower than ones the reader saw). What
 * a read takes and what the pruning keeps for a reader holding the feed.
 */
const unreadAt = (lastId: RawBuilder<unknown>, running: RawBuilder<unknown>) =>
  sql`(catalog_changes.id > ${lastId} OR catalog_changes.txid = ANY(${running}))`;

/** `xmin:xmax:xip,xip` → the position's running transaction ids. */
function snapshotParts(snapshot: string): Pick<FeedPosition, 'running'> {
  const [, , running = ''] = snapshot.split(':');
  return { running: running === '' ? [] : running.split(',') };
}

/** The feed position of the calling transaction's snapshot (a full load's starting point). */
export async function feedPosition(trx: Transaction<Database> | Kysely<Database>): Promise<FeedPosition> {
  const { rows } = await sql<{ snapshot: string; last_id: string | number | bigint }>`
    SELECT pg_current_snapshot()::text AS snapshot, coalesce(max(id), 0) AS last_id FROM catalog_changes`.execute(trx);
  return { lastId: String(rows[0].last_id), ...snapshotParts(rows[0].snapshot) };
}

/**
 * The changes committed since `from`, in id order, and the position to read from next. With
 * `verify`, null instead when the feed may have been pruned past `from` (prunedPast, in the same
 * snapshot): the changes read would miss some.
 */
export async function readChanges(
  db: Kysely<Database>,
  from: FeedPosition,
  { verify = false }: { verify?: boolean } = {},
): Promise<{ changes: CatalogChange[]; next: FeedPosition } | null> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const { rows } = await sql<{ snapshot: string }>`SELECT pg_current_snapshot()::text AS snapshot`.execute(trx);
      if (verify && (await prunedPast(trx, from))) return null;
      const changes: CatalogChange[] = [];
      let lastId = BigInt(from.lastId);
      let after = 0n;
      for (;;) {
        const batch = await sql<{ id: string | number | bigint; entity: CatalogEntity; platform: string | null; key: string | null }>`
          SELECT id, entity, platform, key FROM catalog_changes
          WHERE ${unreadAt(sql`${from.lastId}::bigint`, sql`${sql.val(from.running)}::xid8[]`)} AND id > ${after.toString()}::bigint
          ORDER BY id LIMIT ${READ_BATCH}`.execute(trx);
        for (const row of batch.rows) {
          const id = BigInt(row.id);
          if (id > lastId) lastId = id;
          after = id;
          changes.push({ entity: row.entity, platform: row.platform, key: row.key });
        }
        if (batch.rows.length < READ_BATCH) break;
      }
      return { changes, next: { lastId: lastId.toString(), ...snapshotParts(rows[0].snapshot) } };
    });
}

/**
 * Whether the feed no longer holds every change after `from`: a change with a higher id, or of a
 * transaction running at `from`, was pruned (`change_pruned` holds the highest of each pruned).
 * One row read. What this catches is a full load, or a snapshot file, older than the retention
 * with changes written after it; one that old with nothing pruned after it is still whole.
 */
export async function prunedPast(db: Kysely<Database> | Transaction<Database>, from: FeedPosition): Promise<boolean> {
  const { rows } = await sql<{ pruned: boolean }>`
    SELECT max_id > ${from.lastId}::bigint OR max_txid >= ANY(${sql.val(from.running)}::bigint[]) AS pruned
    FROM change_pruned`.execute(db);
  // Without its row (the migration writes it) nothing is known of what was pruned: load again.
  return rows[0]?.pruned ?? true;
}

/**
 * How long a reader's registration (holdFeed) holds the pruning back without being renewed, and
 * how often a reader renews it: a process that died stops holding it within the lease.
 */
export const READER_LEASE_MS = 5 * 60_000;
export const READER_RENEW_MS = 60_000;

/**
 * Registers `reader` at `position`, or renews it: the pruning keeps every change it has yet to
 * read (an id above the position, or of a transaction running at it) until releaseFeed, or until
 * the registration is not renewed within READER_LEASE_MS.
 */
export async function holdFeed(db: Kysely<Database>, reader: string, position: FeedPosition): Promise<void> {
  await sql`
    INSERT INTO change_readers (reader, last_id, running, renewed_at)
    VALUES (${reader}, ${position.lastId}::bigint, ${sql.val(position.running)}::xid8[], now())
    ON CONFLICT (reader) DO UPDATE SET last_id = excluded.last_id, running = excluded.running, renewed_at = now()`.execute(db);
}

/** Ends `reader`'s registration: what it had yet to read may be pruned again. */
export async function releaseFeed(db: Kysely<Database>, reader: string): Promise<void> {
  await sql`DELETE FROM change_readers WHERE reader = ${reader}`.execute(db);
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
 * A run samples the transaction horizon when the newest sample is older than this: about one
 * sample a minute however many processes prune, and every run of a process pruning alone (a little
 * under PRUNE_EVERY_MS, for its timer's drift).
 */
const SAMPLE_EVERY_MS = 50_000;

/**
 * The transaction-scoped advisory locks (key pair) of a run's two steps, one process at a time on
 * a database each: sampling (waited for: a moment) and pruning (skipped when held: the holder does
 * the work).
 */
const LOCK_CLASS = 0x63647331;
const SAMPLING = 1;
const PRUNING = 2;

/**
 * The feed's pruning, run by every serving process on the primary (a replica refuses the writes;
 * with SEARCH_INDEX=off nothing reads the feed, but the triggers still write it). Each run samples
 * the transaction horizon into `change_horizons` (unless a process did within the last minute),
 * then prunes up to the newest sample at least the retention old (pruneChanges), on the
 * database's clock, and deletes the samples older than that one. The samples are the database's,
 * not the process's: a process that kept its own pruned nothing in its first CHANGE_RETENTION_MS,
 * and a fleet deployed more often than that never pruned. Any number of processes may run it at
 * once: each step runs under an advisory lock, and each statement is idempotent.
 */
export class ChangePruner {
  constructor(private readonly db: Kysely<Database>) {}

  async prune(): Promise<void> {
    // The sample is committed on its own, whatever becomes of the pruning. Its time is read after
    // the horizon (clock_timestamp(), not the statement's start): every transaction below the
    // horizon had ended by then. Under the lock, a second process sees the first one's sample.
    await this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${LOCK_CLASS}, ${SAMPLING})`.execute(trx);
      await sql`INSERT INTO change_horizons (sampled_at, horizon)
        SELECT clock_timestamp(), ${TRANSACTION_HORIZON}
        WHERE NOT EXISTS (SELECT FROM change_horizons WHERE sampled_at > clock_timestamp() - ${interval(SAMPLE_EVERY_MS)})`.execute(trx);
    });
    await this.db.transaction().execute(async (trx) => {
      const { rows: locked } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${LOCK_CLASS}, ${PRUNING}) AS locked`.execute(trx);
      // Another process is pruning right now: its run does this one's work.
      if (!locked[0].locked) return;
      const { rows } = await sql<{ id: string; horizon: string }>`
        SELECT id::text AS id, horizon::text AS horizon FROM change_horizons
        WHERE sampled_at <= now() - ${interval(CHANGE_RETENTION_MS)}
        ORDER BY sampled_at DESC LIMIT 1`.execute(trx);
      const sample = rows[0];
      // No sample is that old yet (a new database): nothing can be pruned.
      if (!sample) return;
      await sql`DELETE FROM change_horizons
        WHERE sampled_at < (SELECT sampled_at FROM change_horizons WHERE id = ${sample.id}::bigint)`.execute(trx);
      await pruneChanges(trx, sample.horizon);
    });
  }
}

/**
 * The oldest transaction still running (xid8): every transaction with a lower id had ended when
 * this was read. What ChangePruner samples (pruneChanges' `endedBefore`).
 */
const TRANSACTION_HORIZON = sql`pg_snapshot_xmin(pg_current_snapshot())`;

/** TRANSACTION_HORIZON now, as text. */
export async function transactionHorizon(db: Kysely<Database>): Promise<string> {
  const { rows } = await sql<{ xmin: string }>`SELECT ${TRANSACTION_HORIZON}::text AS xmin`.execute(db);
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
export async function pruneChanges(db: Kysely<Database> | Transaction<Database>, endedBefore: string): Promise<void> {
  // A registered reader's unread changes stay (holdFeed); one not renewed within its lease is gone.
  await sql`DELETE FROM change_readers WHERE renewed_at < now() - ${interval(READER_LEASE_MS)}`.execute(db);
  // The highest id and transaction pruned are raised in the same statement (prunedPast).
  await sql`
    WITH pruned AS (
      DELETE FROM catalog_changes
      WHERE changed_at < now() - ${interval(CHANGE_RETENTION_MS)}
        AND txid < ${endedBefore}::xid8
        AND id < (SELECT max(id) FROM catalog_changes)
        AND NOT EXISTS (SELECT FROM change_readers r WHERE ${unreadAt(sql`r.last_id`, sql`r.running`)})
      RETURNING id, txid
    )
    UPDATE change_pruned SET
      max_id = greatest(max_id, (SELECT max(id) FROM pruned)),
      max_txid = greatest(max_txid, (SELECT max(txid::text::bigint) FROM pruned))`.execute(db);
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

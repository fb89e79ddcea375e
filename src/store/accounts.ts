import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from './database.js';
import { interval, toCount, toDate } from './values.js';

// Accounts, plans, keys and the quota counter. Quota changes are single conditional UPDATEs, so
// they are exact however many requests and server processes share the database.

export const KEY_PREFIX = 'cds_';

/**
 * Where every change to api_keys is announced (migrations/2026_11_25_0002_key_changes.ts): the
 * base64 of the key's hash, or '' for all keys.
 */
export const KEY_CHANGES_CHANNEL = 'api_key_changes';

export function hashKey(rawKey: string): Buffer {
  return createHash('sha256').update(rawKey, 'utf8').digest();
}

function newRawKey(): string {
  return `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
}

const newId = (kind: string) => `${kind}_${randomBytes(9).toString('base64url')}`;
const visiblePrefix = (rawKey: string) => rawKey.slice(0, KEY_PREFIX.length + 6);

export interface KeyOwner {
  keyId: string;
  accountId: string;
  planId: string;
  endpoints: string[];
  ratePerSecond: number;
  burst: number;
  maxInFlight: number;
  subscriptionEndsAt: Date | null;
}

/** The active key with this hash and its account's limits, or null. */
export async function findActiveKey(db: Kysely<Database>, keyHash: Buffer): Promise<KeyOwner | null> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .innerJoin('plans as p', 'p.id', 'a.plan_id')
    .select([
      'k.id as keyId',
      'a.id as accountId',
      'p.id as planId',
      'p.endpoints',
      'p.rate_per_second as planRate',
      'p.burst',
      'p.max_in_flight as maxInFlight',
      'a.rate_per_second as accountRate',
      'a.subscription_ends_at as subscriptionEndsAt',
    ])
    .where('k.key_hash', '=', keyHash)
    .where('k.status', '=', 'active')
    .executeTakeFirst();
  if (!row) return null;
  // An account's own rate overrides its plan's; its burst is then twice that (docs/contract/decisions.md §7).
  const ratePerSecond = row.accountRate ?? row.planRate;
  return {
    keyId: row.keyId,
    accountId: row.accountId,
    planId: row.planId,
    endpoints: row.endpoints,
    ratePerSecond,
    burst: row.accountRate ? row.accountRate * 2 : row.burst,
    maxInFlight: row.maxInFlight,
    subscriptionEndsAt: toDate(row.subscriptionEndsAt),
  };
}

export type ReserveOutcome =
  | { ok: true; remaining: number }
  | { ok: false; reason: 'not_in_plan' | 'subscription_ended' | 'quota_exhausted' | 'no_account'; planId?: string; remaining: number };

/**
 * Takes `cost` units if the plan covers the endpoint, the subscription runs and the units are there:
 *   UPDATE accounts SET quota_used = quota_used + :cost FROM plans
 *   WHERE id = :account AND :endpoint = ANY(plans.endpoints) AND <subscription runs>
 *     AND quota_used + :cost <= quota_allowance RETURNING quota_allowance - quota_used
 */
export async function reserveQuota(db: Kysely<Database>, accountId: string, endpoint: string, cost: number): Promise<ReserveOutcome> {
  const taken = await db
    .updateTable('accounts as a')
    .from('plans as p')
    .set({ quota_used: sql`a.quota_used + ${cost}` })
    .whereRef('p.id', '=', 'a.plan_id')
    .where('a.id', '=', accountId)
    .where(sql<boolean>`${endpoint} = ANY(p.endpoints)`)
    .where((eb) => eb.or([eb('a.subscription_ends_at', 'is', null), eb('a.subscription_ends_at', '>', sql<Date>`now()`)]))
    .where(sql<boolean>`a.quota_used + ${cost} <= a.quota_allowance`)
    .returning(sql<string>`a.quota_allowance - a.quota_used`.as('remaining'))
    .executeTakeFirst();
  if (taken) return { ok: true, remaining: toCount(taken.remaining) };

  // Refused: read once more to say why.
  const account = await db
    .selectFrom('accounts as a')
    .innerJoin('plans as p', 'p.id', 'a.plan_id')
    .select(['p.id as planId', 'p.endpoints', 'a.subscription_ends_at', sql<string>`a.quota_allowance - a.quota_used`.as('remaining')])
    .where('a.id', '=', accountId)
    .executeTakeFirst();
  if (!account) return { ok: false, reason: 'no_account', remaining: 0 };
  const remaining = toCount(account.remaining);
  if (!account.endpoints.includes(endpoint)) return { ok: false, reason: 'not_in_plan', planId: account.planId, remaining };
  const ends = toDate(account.subscription_ends_at);
  if (ends && ends.getTime() <= Date.now()) return { ok: false, reason: 'subscription_ended', remaining };
  return { ok: false, reason: 'quota_exhausted', remaining };
}

export async function refundQuota(db: Kysely<Database>, accountId: string, cost: number): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ quota_used: sql`greatest(quota_used - ${cost}, 0)` })
    .where('id', '=', accountId)
    .execute();
}

export interface OwedRefund {
  id: string;
  accountId: string;
  units: number;
  /** When it was owed (epoch ms); absent in journals of builds before it was kept. */
  owedAt?: number;
}

/**
 * How long quota_refunds keeps the id of a refund written. A refund owed for longer is not written
 * from a journal (it may have been, its id pruned since): an operator settles it (refunds.ts).
 */
export const REFUND_NOTES_KEPT_MS = 90 * 24 * 60 * 60_000;

/** Forgets the ids of refunds written longer ago than REFUND_NOTES_KEPT_MS. */
export async function pruneRefundNotes(db: Kysely<Database>): Promise<void> {
  await sql`DELETE FROM quota_refunds WHERE written_at < now() - ${interval(REFUND_NOTES_KEPT_MS)}`.execute(db);
}

/**
 * Writes refunds that were owed, each once however often it is sent (its id is noted in
 * quota_refunds in the same statement): a journal replayed after a crash, or by two processes,
 * gives nothing back twice. A refund of an account deleted since is dropped.
 */
export async function refundOwed(db: Kysely<Database>, owed: readonly OwedRefund[]): Promise<void> {
  if (owed.length === 0) return;
  await sql`
    WITH noted AS (
      INSERT INTO quota_refunds (id, account_id, units)
      SELECT owed.id, owed.account_id, owed.units
      FROM unnest(${owed.map((o) => o.id)}::text[], ${owed.map((o) => o.accountId)}::text[], ${owed.map((o) => o.units)}::bigint[])
        AS owed (id, account_id, units)
      JOIN accounts ON accounts.id = owed.account_id
      ON CONFLICT (id) DO NOTHING
      RETURNING account_id, units
    ), summed AS (SELECT account_id, sum(units) AS units FROM noted GROUP BY account_id)
    UPDATE accounts SET quota_used = greatest(quota_used - summed.units, 0)
    FROM summed WHERE accounts.id = summed.account_id`.execute(db);
}

/**
 * Takes `units` of the account for a lease if at least `floor` units remain after it:
 *   WITH taken AS (UPDATE accounts SET quota_used = quota_used + :units
 *                  WHERE id = :account AND quota_used + :units + :floor <= quota_allowance RETURNING …)
 *   INSERT INTO quota_leases … SELECT … FROM taken
 * The units left in the account, or null when the account is too close to its allowance to lease.
 */
export async function takeLease(db: Kysely<Database>, accountId: string, leaseId: string, units: number, floor: number): Promise<number | null> {
  const { rows } = await sql<{ remaining: string | number | bigint }>`
    WITH taken AS (
      UPDATE accounts SET quota_used = quota_used + ${units}
      WHERE id = ${accountId} AND quota_used + ${units} + ${floor} <= quota_allowance
      RETURNING id, quota_allowance - quota_used AS remaining
    ), leased AS (
      INSERT INTO quota_leases (id, account_id, granted) SELECT ${leaseId}, id, ${units} FROM taken RETURNING id
    )
    SELECT remaining FROM taken, leased`.execute(db);
  return rows.length > 0 ? toCount(rows[0].remaining) : null;
}

/** Records how many of a lease's units have been sold, so a crash loses no more than since the last one. */
export async function checkpointLease(db: Kysely<Database>, leaseId: string, used: number): Promise<void> {
  await db.updateTable('quota_leases').set({ used, renewed_at: sql`now()` }).where('id', '=', leaseId).execute();
}

/** Ends a lease: the units it did not sell go back to the account, in one statement. */
export async function endLease(db: Kysely<Database>, leaseId: string, used: number): Promise<void> {
  await sql`
    WITH ended AS (DELETE FROM quota_leases WHERE id = ${leaseId} RETURNING account_id, granted)
    UPDATE accounts a SET quota_used = greatest(a.quota_used - (ended.granted - ${used}), 0)
    FROM ended WHERE a.id = ended.account_id`.execute(db);
}

/** Settles the leases of processes that stopped renewing them (crashed): back what they had not sold. */
export async function reclaimLeases(db: Kysely<Database>, staleMs: number): Promise<void> {
  await sql`
    WITH stale AS (
      DELETE FROM quota_leases WHERE renewed_at < now() - ${interval(staleMs)} RETURNING account_id, granted - used AS unused
    ), owed AS (SELECT account_id, sum(unused) AS unused FROM stale GROUP BY account_id)
    UPDATE accounts a SET quota_used = greatest(a.quota_used - owed.unused, 0) FROM owed WHERE a.id = owed.account_id`.execute(db);
}

export async function quotaRemaining(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('accounts')
    .select(sql<string>`quota_allowance - quota_used`.as('remaining'))
    .where('id', '=', accountId)
    .executeTakeFirst();
  return row ? toCount(row.remaining) : 0;
}

export interface NewAccountOptions {
  plan?: string;
  quota?: number;
  ratePerSecond?: number;
  subscriptionEndsAt?: Date;
  /** A fixed id (the demo account); default a random one. */
  id?: string;
}

export async function createAccount(db: Kysely<Database>, options: NewAccountOptions = {}): Promise<string> {
  const planId = options.plan ?? 'trial';
  const plan = await db.selectFrom('plans').select('quota_units').where('id', '=', planId).executeTakeFirst();
  if (!plan) throw new UnknownPlanError(planId);
  const id = options.id ?? newId('acct');
  await db
    .insertInto('accounts')
    .values({
      id,
      plan_id: planId,
      quota_allowance: options.quota ?? toCount(plan.quota_units),
      rate_per_second: options.ratePerSecond ?? null,
      subscription_ends_at: options.subscriptionEndsAt ?? null,
    })
    .execute();
  return id;
}

export class UnknownPlanError extends Error {
  constructor(readonly planId: string) {
    super(`unknown plan ${planId}`);
  }
}

export interface IssuedKey {
  id: string;
  accountId: string;
  key: string;
}

/** A new key for the account; the raw key exists only in this return value. */
export async function issueKey(db: Kysely<Database>, accountId: string, id = newId('key')): Promise<IssuedKey> {
  const key = newRawKey();
  await db
    .insertInto('api_keys')
    .values({ id, account_id: accountId, prefix: visiblePrefix(key), key_hash: hashKey(key) })
    .execute();
  return { id, accountId, key };
}

/** A new account and its first key in one transaction: a failure between them leaves no keyless account. */
export async function createAccountWithKey(db: Kysely<Database>, options: NewAccountOptions = {}): Promise<IssuedKey> {
  return db.transaction().execute(async (trx) => issueKey(trx, await createAccount(trx, options)));
}

/** A new secret for an existing key id: the old value stops working in the same statement. */
export async function rotateKey(db: Kysely<Database>, keyId: string): Promise<IssuedKey | null> {
  const key = newRawKey();
  const row = await db
    .updateTable('api_keys')
    .set({ key_hash: hashKey(key), prefix: visiblePrefix(key), rotated_at: new Date() })
    .where('id', '=', keyId)
    .where('status', '!=', 'deleted')
    .returning(['id', 'account_id'])
    .executeTakeFirst();
  return row ? { id: row.id, accountId: row.account_id, key } : null;
}

/** The account of the key whose status was set, or null when there is no such key (or it is deleted). */
export async function setKeyStatus(db: Kysely<Database>, keyId: string, status: 'active' | 'disabled' | 'deleted'): Promise<string | null> {
  const row = await db
    .updateTable('api_keys')
    .set({ status })
    .where('id', '=', keyId)
    // A deleted key stays deleted.
    .where('status', '!=', 'deleted')
    .returning('account_id')
    .executeTakeFirst();
  return row?.account_id ?? null;
}

export async function listKeys(db: Kysely<Database>, accountId?: string) {
  let query = db
    .selectFrom('api_keys')
    .select(['id', 'account_id', 'prefix', 'status', 'created_at', 'rotated_at'])
    .where('status', '!=', 'deleted')
    .orderBy('created_at')
    .orderBy('id');
  if (accountId) query = query.where('account_id', '=', accountId);
  return query.execute();
}

export async function accountUsage(db: Kysely<Database>, accountId?: string) {
  let query = db
    .selectFrom('accounts')
    .select(['id', 'plan_id', 'quota_allowance', 'quota_used', 'subscription_ends_at'])
    .orderBy('created_at')
    .orderBy('id');
  if (accountId) query = query.where('id', '=', accountId);
  const rows = await query.execute();
  return rows.map((row) => ({
    accountId: row.id,
    plan: row.plan_id,
    quotaAllowance: toCount(row.quota_allowance),
    quotaUsed: toCount(row.quota_used),
    quotaRemaining: toCount(row.quota_allowance) - toCount(row.quota_used),
    subscriptionEndsAt: toDate(row.subscription_ends_at),
  }));
}

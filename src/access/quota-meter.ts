import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { checkpointLease, endLease, reclaimLeases, takeLease } from '../store/accounts.js';
import type { Database } from '../store/database.js';

// Quota without a database round trip per request (migrations/…_quota_leases.ts): this process
// takes a lease of an account's units in one UPDATE, sells them to requests from memory, records
// what it sold every CHECKPOINT_MS, and gives back the rest when the account goes idle.
//
// Exactness: a lease's units are already charged to the account, so no process can oversell, and
// a failed call gives its units back to the lease. Leases are only taken while the account keeps
// at least `floor` units besides (a thousand leases' worth by default): near its allowance every
// call reserves its own units exactly, so "units for exactly N calls" still means exactly N
// successes, whatever the concurrency.

const CHECKPOINT_MS = 250;
/** A lease nobody bought from for this long goes back. */
const IDLE_MS = 1_000;
/** Even without sales a live lease is renewed this often, so it never looks abandoned. */
const RENEW_MS = 10_000;
/** Leases not renewed for this long were left by a process that died: any process settles them. */
const ABANDONED_MS = 60_000;
const RECLAIM_EVERY_MS = 30_000;
/** After a refusal for quota, how long the account's calls reserve exactly in this process. */
const EXACT_AFTER_REFUSAL_MS = 5_000;

interface Lease {
  id: string;
  accountId: string;
  granted: number;
  sold: number;
  checkpointed: number;
  /** Units the account had left besides this lease when it was granted. */
  remainingBesides: number;
  lastSoldAt: number;
  lastRenewedAt: number;
  ended: boolean;
}

export interface LeasedUnits {
  /** Units left for the account as far as this process knows (X-Quota-Remaining). */
  remaining: number;
  refund(): Promise<void>;
}

export interface QuotaMeterOptions {
  /** Units per lease; 0 turns leasing off (every call reserves its own units). */
  leaseUnits: number;
  /** Leases taken only while this many units would remain besides: `floorLeases` leases' worth. */
  floorLeases?: number;
  /** A refund that cannot go to a lease any more (it ended) goes to the account directly. */
  refundToAccount: (accountId: string, units: number) => Promise<void>;
  onError: (error: unknown) => void;
}

export class QuotaMeter {
  readonly #leases = new Map<string, Lease>();
  readonly #taking = new Map<string, Promise<Lease | null>>();
  /** Leases whose end the database did not take yet (an outage): retried every tick. */
  readonly #unsettled = new Set<Lease>();
  readonly #timer: NodeJS.Timeout | null;
  #lastReclaim = 0;
  #closed = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: QuotaMeterOptions,
  ) {
    this.#timer = options.leaseUnits > 0 ? setInterval(() => void this.#tick(), CHECKPOINT_MS) : null;
    this.#timer?.unref();
  }

  /** `cost` units from a lease of the account, or null: no lease can be had (reserve exactly). */
  async take(accountId: string, cost: number): Promise<LeasedUnits | null> {
    if (this.#closed || this.options.leaseUnits <= 0 || cost > this.options.leaseUnits) return null;
    const exactUntil = this.#exactUntil.get(accountId);
    if (exactUntil !== undefined) {
      if (performance.now() < exactUntil) return null;
      this.#exactUntil.delete(accountId);
    }
    const current = this.#leases.get(accountId);
    if (current && current.granted - current.sold >= cost) return this.#sell(current, cost);
    if (current) this.#end(current);
    let taking = this.#taking.get(accountId);
    if (!taking) {
      taking = this.#lease(accountId).finally(() => this.#taking.delete(accountId));
      this.#taking.set(accountId, taking);
    }
    const lease = await taking;
    // Concurrent callers share one new lease; one that finds it sold out reserves exactly.
    if (!lease || lease.ended || lease.granted - lease.sold < cost) return null;
    return this.#sell(lease, cost);
  }

  /** Accounts refused for quota lately: no leases for them until then, every call reserves exactly. */
  readonly #exactUntil = new Map<string, number>();

  /** Units this process holds unsold for the account (to report usage as the account's callers see it). */
  unsold(accountId: string): number {
    const lease = this.#leases.get(accountId);
    return lease ? lease.granted - lease.sold : 0;
  }

  /**
   * A call of the account was refused for quota: this process stops leasing its units for a while
   * (each call reserves exactly) and gives back what it holds unsold, a lease being taken included,
   * so a 403 never stands while units of the account sit here. Whether anything was given back.
   */
  async giveBack(accountId: string): Promise<boolean> {
    this.#exactUntil.set(accountId, performance.now() + EXACT_AFTER_REFUSAL_MS);
    if (this.#exactUntil.size > 10_000) this.#exactUntil.delete(this.#exactUntil.keys().next().value as string);
    await this.#taking.get(accountId);
    const lease = this.#leases.get(accountId);
    if (!lease) return false;
    const unsold = lease.granted - lease.sold;
    this.#end(lease);
    await this.#settle();
    return unsold > 0 && !this.#unsettled.has(lease);
  }

  /** Gives every lease back (shutdown). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    for (const lease of this.#leases.values()) this.#end(lease);
    await this.#settle();
  }

  async #lease(accountId: string): Promise<Lease | null> {
    const units = this.options.leaseUnits;
    const id = `lease_${randomBytes(9).toString('base64url')}`;
    const remainingBesides = await takeLease(this.db, accountId, id, units, units * (this.options.floorLeases ?? 1_000));
    if (remainingBesides === null) return null;
    const now = performance.now();
    const lease: Lease = { id, accountId, granted: units, sold: 0, checkpointed: 0, remainingBesides, lastSoldAt: now, lastRenewedAt: now, ended: false };
    this.#leases.set(accountId, lease);
    return lease;
  }

  #sell(lease: Lease, cost: number): LeasedUnits {
    lease.sold += cost;
    lease.lastSoldAt = performance.now();
    let refunded = false;
    return {
      remaining: lease.remainingBesides + lease.granted - lease.sold,
      refund: async () => {
        if (refunded) return;
        refunded = true;
        // Back to the lease while it runs; once it has ended (and been charged), to the account.
        if (!lease.ended) lease.sold -= cost;
        else await this.options.refundToAccount(lease.accountId, cost);
      },
    };
  }

  #end(lease: Lease): void {
    if (lease.ended) return;
    lease.ended = true;
    if (this.#leases.get(lease.accountId) === lease) this.#leases.delete(lease.accountId);
    this.#unsettled.add(lease);
  }

  async #tick(): Promise<void> {
    const now = performance.now();
    for (const lease of this.#leases.values()) {
      if (now - lease.lastSoldAt > IDLE_MS) this.#end(lease);
      else if (lease.sold !== lease.checkpointed || now - lease.lastRenewedAt > RENEW_MS) {
        const sold = lease.sold;
        lease.lastRenewedAt = now;
        await checkpointLease(this.db, lease.id, sold).then(
          () => void (lease.checkpointed = sold),
          (error: unknown) => this.options.onError(error),
        );
      }
    }
    await this.#settle();
    if (now - this.#lastReclaim > RECLAIM_EVERY_MS) {
      this.#lastReclaim = now;
      await reclaimLeases(this.db, ABANDONED_MS).catch((error: unknown) => this.options.onError(error));
    }
  }

  /** Writes the ends of ended leases: the sold units stay charged, the rest go back. */
  async #settle(): Promise<void> {
    for (const lease of [...this.#unsettled]) {
      try {
        await endLease(this.db, lease.id, lease.sold);
        this.#unsettled.delete(lease);
      } catch (error) {
        this.options.onError(error);
        return;
      }
    }
  }
}

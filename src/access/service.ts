import type { Kysely } from 'kysely';
import { ApiError } from '../domain/errors.js';
import { findActiveKey, hashKey, type KeyOwner, quotaRemaining, reserveQuota } from '../store/accounts.js';
import type { Database } from '../store/database.js';
import type { EndpointId } from './endpoints.js';
import type { Limiter } from './limits-core.js';
import type { AccessService, Caller, Reservation, ReservingRequest } from './pipeline.js';
import { QuotaHolds } from './holds.js';
import { QuotaMeter } from './quota-meter.js';
import type { RefundJournal } from './refund-journal.js';
import { createRefunds } from './refunds.js';

const unauthorized = (message: string) => new ApiError('UNAUTHENTICATED', message);

/** The raw key only: no scheme, no whitespace anywhere (docs/contract/decisions.md §4). */
function rawKeyOf(authorization: string | null): string {
  if (authorization === null || authorization === '') throw unauthorized('Unauthorized: missing Authorization header');
  if (/^bearer\b/i.test(authorization)) throw unauthorized('Unauthorized: send the raw API key, without a Bearer prefix');
  // Several Authorization headers arrive combined with commas (src/app.ts); no key has one.
  if (authorization.includes(',')) throw unauthorized('Unauthorized: send one Authorization header with one API key');
  if (/\s/.test(authorization)) throw unauthorized('Unauthorized: the API key contains whitespace or a line break');
  return authorization;
}

export interface AccessOptions {
  /**
   * Refunds the database still had not taken at shutdown: kept in `refundJournal` for the next
   * start there, else money an operator must settle by hand.
   */
  onRefundsLost?: (owed: Map<string, number>, error: unknown) => void;
  /** Refunds a journal held past the time their ids are kept, by account: not written (./refunds.ts). */
  onRefundsExpired?: (owed: Map<string, number>) => void;
  /** Where refunds owed during an outage outlive the process (./refund-journal.ts). */
  refundJournal?: RefundJournal;
  /**
   * How long a key's identity (or its absence) is reused before the database is asked again: a
   * disabled, rotated or deleted key stops working within this bound (0: ask every time), sooner
   * when the change is announced (forgetKeys).
   */
  keyCacheMs?: number;
  /** Units per quota lease (0: every call reserves its own units in the database). */
  quotaLeaseUnits?: number;
  /** Leases are taken only while this many leases' worth of units would remain besides. */
  quotaLeaseFloor?: number;
  onError?: (error: unknown) => void;
  /** How long a call refused for quota may wait for other calls' held units to settle (./holds.ts). */
  holdWaitMs?: number;
}

const KEY_CACHE_ENTRIES = 10_000;
/** Calls end within this (statement and upstream timeouts): past it a refusal for quota stands. */
const HOLD_WAIT_MS = 20_000;

const notInPlan = (planId: string, endpoint: EndpointId) => new ApiError('FORBIDDEN', `Forbidden: the ${planId} plan does not include ${endpoint}`);
const subscriptionEnded = () => new ApiError('FORBIDDEN', 'Forbidden: the subscription has ended');
const quotaExhausted = (remaining: number, needed: number) =>
  new ApiError('QUOTA_EXHAUSTED', `Forbidden: quota exhausted (${remaining} units left, ${needed} needed)`);

/** Plan and subscription as the key's identity says (at most keyCacheMs old). */
function checkPlan(caller: Caller, endpoints: readonly EndpointId[]): void {
  const missing = endpoints.find((endpoint) => !caller.endpoints.includes(endpoint));
  if (missing) throw notInPlan(caller.planId, missing);
  if (caller.subscriptionEndsAt && caller.subscriptionEndsAt.getTime() <= Date.now()) throw subscriptionEnded();
}

export function createAccessService(db: Kysely<Database>, limiter: Limiter, options: AccessOptions = {}): AccessService {
  const refunds = createRefunds(db, {
    journal: options.refundJournal,
    onStillOwed: options.onRefundsLost ?? (() => {}),
    onExpired: options.onRefundsExpired ?? (() => {}),
    onError: options.onError ?? (() => {}),
  });
  const keyCacheMs = options.keyCacheMs ?? 2_000;
  // Keyed by the key's hash, never the key; a Map iterates in insertion order (oldest first).
  const identities = new Map<string, { owner: KeyOwner | null; until: number }>();
  // Bumped by every forgetKeys: a lookup that was under way when a key changed may have read the
  // old row, and must not be cached.
  let forgotten = 0;
  const holds = new QuotaHolds();
  const meter = new QuotaMeter(db, {
    leaseUnits: options.quotaLeaseUnits ?? 0,
    floorLeases: options.quotaLeaseFloor,
    refundToAccount: (accountId, units) => refunds.refund(accountId, units),
    onError: options.onError ?? (() => {}),
  });

  async function ownerOf(authorization: string | null): Promise<KeyOwner | null> {
    const hash = hashKey(rawKeyOf(authorization));
    if (keyCacheMs <= 0) return findActiveKey(db, hash);
    const cacheKey = hash.toString('base64');
    const now = performance.now();
    const cached = identities.get(cacheKey);
    if (cached && cached.until > now) return cached.owner;
    const asOf = forgotten;
    const owner = await findActiveKey(db, hash);
    if (asOf !== forgotten) return owner;
    identities.delete(cacheKey);
    if (identities.size >= KEY_CACHE_ENTRIES) identities.delete(identities.keys().next().value as string);
    identities.set(cacheKey, { owner, until: now + keyCacheMs });
    return owner;
  }

  // Units this process holds unsold in a lease are the account's: reported as remaining.
  const remaining = async (caller: Caller) => (await quotaRemaining(db, caller.accountId)) + meter.unsold(caller.accountId);

  return {
    async identify(authorization) {
      const owner = await ownerOf(authorization);
      // One message for unknown, disabled, rotated-out and deleted keys: nothing to probe.
      if (!owner) throw unauthorized('Unauthorized: invalid API key');
      return owner;
    },

    forgetKeys(keyHash) {
      forgotten += 1;
      if (keyHash === undefined) identities.clear();
      else identities.delete(keyHash);
    },

    async admit(caller: Caller) {
      const admission = await limiter.acquire(caller.keyId, {
        ratePerSecond: caller.ratePerSecond,
        burst: caller.burst,
        maxInFlight: caller.maxInFlight,
      });
      if (!admission.ok) {
        const what = admission.reason === 'rate' ? 'rate limit' : 'concurrent request limit';
        throw new ApiError('RATE_LIMITED', `Too Many Requests: ${what} of the plan exceeded`, [], {
          'retry-after': String(admission.retryAfterSeconds),
        });
      }
      return admission.release;
    },

    async reserve(caller: Caller, endpoint: EndpointId, cost: number, by: ReservingRequest = {}): Promise<Reservation> {
      // Plan and subscription as the key's identity says (at most keyCacheMs old), then a lease.
      checkPlan(caller, [endpoint]);
      const { accountId } = caller;
      const holder = by.holder ?? {};
      const held = (remaining: number, refund: () => Promise<void>) => reservation(remaining, cost, refund, holds.hold(accountId, holder, cost));
      const waitUntil = performance.now() + (options.holdWaitMs ?? HOLD_WAIT_MS);
      for (;;) {
        const seen = holds.lastRelease(accountId);
        const leased = await meter.take(accountId, cost);
        if (leased) return held(leased.remaining, leased.refund);

        let outcome = await reserveQuota(db, accountId, endpoint, cost);
        // Refused while this process held unsold units of the account: they go back, and the call
        // tries once more, so a 403 never stands while units sit in our own lease.
        if (!outcome.ok && outcome.reason === 'quota_exhausted' && (await meter.giveBack(accountId))) {
          outcome = await reserveQuota(db, accountId, endpoint, cost);
        }
        if (outcome.ok) return held(outcome.remaining, () => refunds.refund(accountId, cost));
        // Refused while other calls of the account hold units that would pay for this one should
        // they fail: wait for them to settle and try again (./holds.ts). A caller holding units
        // itself does not wait, so no two calls wait on each other.
        const waitMs = waitUntil - performance.now();
        if (outcome.reason === 'quota_exhausted' && waitMs > 0 && !by.signal?.aborted && !holds.holds(accountId, holder)) {
          // Units let go while the database answered are not in its answer: ask again at once.
          if (holds.lastRelease(accountId) !== seen) continue;
          if (outcome.remaining + holds.heldByOthers(accountId, holder) >= cost) {
            await holds.released(accountId, waitMs, by.signal);
            continue;
          }
        }
        switch (outcome.reason) {
          case 'not_in_plan':
            throw notInPlan(outcome.planId!, endpoint);
          case 'subscription_ended':
            throw subscriptionEnded();
          case 'no_account':
            throw new ApiError('FORBIDDEN', 'Forbidden: the account no longer exists');
          case 'quota_exhausted':
            throw quotaExhausted(outcome.remaining, cost);
        }
      }
    },

    checkPlan,

    async quote(caller, endpoints, units) {
      checkPlan(caller, endpoints);
      const left = await remaining(caller);
      if (left < units) throw quotaExhausted(left, units);
      return left;
    },

    remaining,
    unsold: (accountId) => meter.unsold(accountId),
    pendingRefunds: () => refunds.pending(),
    close: async () => {
      await meter.close();
      await refunds.flush();
    },
  };
}

/** A reservation whose refund runs once, however often it is asked for; either end lets its hold go. */
function reservation(remaining: number, units: number, giveBack: () => Promise<void>, release: () => void): Reservation {
  let refunded = false;
  return {
    remaining,
    units,
    get refunded() {
      return refunded;
    },
    refund: async () => {
      if (refunded) return;
      refunded = true;
      try {
        await giveBack();
      } finally {
        release();
      }
    },
    keep: release,
  };
}

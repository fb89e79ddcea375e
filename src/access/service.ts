import type { Kysely } from 'kysely';
import { ApiError } from '../errors.js';
import { findActiveKey, hashKey, quotaRemaining, refundQuota, reserveQuota } from '../store/accounts.js';
import type { Database } from '../store/database.js';
import type { EndpointId } from './endpoints.js';
import type { Limiter } from './limits.js';
import type { AccessService, Caller, Reservation } from './pipeline.js';

const unauthorized = (message: string) => new ApiError('UNAUTHENTICATED', message);

/** The raw key only: no scheme, no whitespace anywhere (decisions.md §4). */
function rawKeyOf(authorization: string | null): string {
  if (authorization === null || authorization === '') throw unauthorized('Unauthorized: missing Authorization header');
  if (/^bearer\b/i.test(authorization)) throw unauthorized('Unauthorized: send the raw API key, without a Bearer prefix');
  if (/\s/.test(authorization)) throw unauthorized('Unauthorized: the API key contains whitespace or a line break');
  return authorization;
}

export function createAccessService(db: Kysely<Database>, limiter: Limiter): AccessService {
  return {
    async identify(authorization) {
      const owner = await findActiveKey(db, hashKey(rawKeyOf(authorization)));
      // One message for unknown, disabled, rotated-out and deleted keys: nothing to probe.
      if (!owner) throw unauthorized('Unauthorized: invalid API key');
      return owner;
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

    async reserve(caller: Caller, endpoint: EndpointId, cost: number): Promise<Reservation> {
      const outcome = await reserveQuota(db, caller.accountId, endpoint, cost);
      if (outcome.ok) {
        let refunded = false;
        return {
          remaining: outcome.remaining,
          refund: async () => {
            if (refunded) return;
            refunded = true;
            await refundQuota(db, caller.accountId, cost);
          },
        };
      }
      switch (outcome.reason) {
        case 'not_in_plan':
          throw new ApiError('FORBIDDEN', `Forbidden: the ${outcome.planId} plan does not include ${endpoint}`);
        case 'subscription_ended':
          throw new ApiError('FORBIDDEN', 'Forbidden: the subscription has ended');
        case 'no_account':
          throw new ApiError('FORBIDDEN', 'Forbidden: the account no longer exists');
        case 'quota_exhausted':
          throw new ApiError('QUOTA_EXHAUSTED', `Forbidden: quota exhausted (${outcome.remaining} units left, ${cost} needed)`);
      }
    },

    remaining: (caller) => quotaRemaining(db, caller.accountId),
  };
}

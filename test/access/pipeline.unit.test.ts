import { describe, expect, it } from 'vitest';
import type { AccessService, Caller, Reservation } from '../../src/access/pipeline.js';
import { RequestAccess } from '../../src/access/pipeline.js';

// The pipeline's bookkeeping alone, over an account kept in memory: the meter behind it has its own
// tests on both stores (quota-leases.test.ts, access.test.ts).

const caller: Caller = {
  keyId: 'k',
  accountId: 'a',
  planId: 'pro',
  endpoints: ['search.creators', 'search.videos'],
  ratePerSecond: 100,
  burst: 100,
  maxInFlight: 10,
  subscriptionEndsAt: null,
};

/** An account of `quota` units whose reserve() answers are held until `answer()` lets them go, in any order. */
function accountWithHeldAnswers(quota: number) {
  let left = quota;
  const held: (() => void)[] = [];
  const service: AccessService = {
    identify: async () => caller,
    forgetKeys: () => {},
    admit: async () => async () => {},
    async reserve(_caller, _endpoint, units) {
      left -= units;
      const reservation: Reservation = { remaining: left, units, refunded: false, refund: async () => {}, keep: () => {} };
      return new Promise<Reservation>((resolve) => held.push(() => resolve(reservation)));
    },
    checkPlan: () => {},
    quote: async () => left,
    remaining: async () => left,
    unsold: () => 0,
    pendingRefunds: () => 0,
    close: async () => {},
  };
  return { service, answer: (order: number[]) => order.forEach((i) => held[i]()) };
}

describe('X-Quota-Remaining of a request whose root fields reserve concurrently', () => {
  it.each([
    ['in the order taken', [0, 1]],
    ['the first taken answering last', [1, 0]],
  ])('is the figure after every reservation when they answer %s', async (_name, order) => {
    const { service, answer } = accountWithHeldAnswers(1_000);
    const access = new RequestAccess(service, 'key');
    await access.enter();
    const reserved = Promise.all([access.reserve('search.videos', 'videos'), access.reserve('search.creators', 'creators')]);
    await new Promise((resolve) => setImmediate(resolve));
    answer(order);
    await reserved;
    expect(await access.quotaRemaining()).toBe(800);
    expect(access.chargedUnits()).toBe(200);
  });
});

import { describe, expect, it } from 'vitest';
import { QuotaHolds } from '../../src/access/holds.js';

// The bookkeeping a call refused for quota waits on (src/access/holds.ts); the waits themselves,
// through the real pipeline and database, are in held-quota.test.ts.

/** Whether `promise` settles within `ms`. */
const settlesWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

describe('units held by requests', () => {
  it("counts each request's units per account, a request's own apart from the others'", () => {
    const holds = new QuotaHolds();
    const [a, b] = [{}, {}];
    const releaseA1 = holds.hold('acct', a, 100);
    holds.hold('acct', a, 5);
    holds.hold('acct', b, 100);
    holds.hold('other', b, 7);
    expect(holds.holds('acct', a)).toBe(true);
    expect(holds.heldByOthers('acct', a)).toBe(100);
    expect(holds.heldByOthers('acct', b)).toBe(105);
    releaseA1();
    releaseA1();
    expect(holds.heldByOthers('acct', b)).toBe(5);
    expect(holds.holds('acct', {})).toBe(false);
  });

  it("wakes a waiter at its account's next release, not another account's, and moves the release clock", async () => {
    const holds = new QuotaHolds();
    const release = holds.hold('acct', {}, 100);
    const releaseOther = holds.hold('other', {}, 100);
    const before = holds.lastRelease('acct');
    const waiting = holds.released('acct', 60_000);
    releaseOther();
    expect(await settlesWithin(waiting, 50)).toBe(false);
    expect(holds.lastRelease('acct')).toBe(before);
    release();
    expect(await settlesWithin(waiting, 1_000)).toBe(true);
    expect(holds.lastRelease('acct')).not.toBe(before);
  });

  it('stops waiting when its client leaves, or after its time, whichever comes first', async () => {
    const holds = new QuotaHolds();
    holds.hold('acct', {}, 100);
    const left = new AbortController();
    const waiting = holds.released('acct', 60_000, left.signal);
    expect(await settlesWithin(waiting, 50)).toBe(false);
    left.abort();
    expect(await settlesWithin(waiting, 1_000)).toBe(true);
    expect(await settlesWithin(holds.released('acct', 60_000, left.signal), 1_000)).toBe(true);
    expect(await settlesWithin(holds.released('acct', 30), 1_000)).toBe(true);
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueKey, reclaimLeases } from '../../src/store/accounts.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { loadCatalog } from '../support/catalog.js';

// Quota metered from leases: one UPDATE per lease instead of one per call, exact all the same.

const SEARCH = '/api/v1/search/twitter/user';
let app: TestApp;

beforeAll(async () => {
  // Leases of 200 units (two searches), taken while 5 leases' worth (1,000 units) would remain.
  app = await createTestApp({ quotaLeaseUnits: 200, quotaLeaseFloor: 5 });
  await loadCatalog(app.store.db);
});
afterAll(() => app?.close());

async function account(quota: number) {
  const accountId = await createAccount(app.store.db, { plan: 'pro', quota, ratePerSecond: 10_000 });
  const { key } = await issueKey(app.store.db, accountId);
  const stored = async () =>
    Number((await app.store.db.selectFrom('accounts').select('quota_used').where('id', '=', accountId).executeTakeFirstOrThrow()).quota_used);
  return { accountId, key, stored };
}

const search = (key: string) => app.rest(SEARCH, { body: { page_size: 1 }, key });

describe('quota leases', () => {
  it('sells units from a lease, reports exact usage meanwhile, and settles exactly once idle', async () => {
    const { key, stored } = await account(1_000_000);
    const before = app.store.queries.length;
    for (let i = 0; i < 7; i++) expect((await search(key)).status).toBe(200);
    // Four leases of two searches: four UPDATEs for seven searches.
    expect(app.store.queries.slice(before).filter((q) => /update "?accounts"? set "?quota_used"? = quota_used \+/i.test(q)).length).toBeLessThanOrEqual(4);
    const viewer = await app.graphql('{ viewer { quotaUsed quotaRemaining } }', undefined, key);
    expect(viewer.body.data.viewer).toEqual({ quotaUsed: 700, quotaRemaining: 1_000_000 - 700 });
    expect(await stored()).toBe(800);
    await sleep(1_600);
    expect(await stored()).toBe(700);
  });

  it('gives a failed call its units back through the lease', async () => {
    const { key, stored } = await account(1_000_000);
    expect((await search(key)).status).toBe(200);
    // Passes validation, then fails in the resolver (a cursor of another order) after reserving.
    const failed = await app.graphql('{ creators(first: 1, sortBy: ENGAGEMENT_RATE, after: "WyJjOmZvbGxvd2VycyIsMSwidTAwMCJd") { totalCount } }', undefined, key);
    expect(failed.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    await sleep(1_600);
    expect(await stored()).toBe(100);
  });

  it('near the allowance every call reserves exactly: 40 searches, 16 at a time, with units for 20 yield 20 successes', async () => {
    const { key, stored } = await account(2_000);
    // 16 at a time: the pro plan's in-flight cap.
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next++ < 40) statuses.push((await search(key)).status);
      }),
    );
    statuses.sort();
    expect(statuses).toEqual([...Array(20).fill(200), ...Array(20).fill(403)]);
    await sleep(1_600);
    expect(await stored()).toBe(2_000);
  });

  it('uses leases above the floor and exact reservations below it, never overselling across the switch', async () => {
    // 1,000 units of floor + 1,000 above it: leases for the first searches, exact ones after.
    const { key, stored } = await account(2_000);
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await search(key)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    await sleep(1_600);
    expect(await stored()).toBe(2_000);
  });

  it('settles a lease left by a crashed process from its last checkpoint', async () => {
    const { accountId, stored } = await account(1_000_000);
    await sql`UPDATE accounts SET quota_used = quota_used + 200 WHERE id = ${accountId}`.execute(app.store.db);
    await sql`INSERT INTO quota_leases (id, account_id, granted, used, renewed_at) VALUES ('lease_dead', ${accountId}, 200, 100, now() - interval '5 minutes')`.execute(app.store.db);
    expect(await stored()).toBe(200);
    await reclaimLeases(app.store.db, 60_000);
    expect(await stored()).toBe(100);
    expect((await sql`SELECT id FROM quota_leases WHERE id = 'lease_dead'`.execute(app.store.db)).rows).toEqual([]);
  });
});

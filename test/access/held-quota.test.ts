import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueKey } from '../../src/store/accounts.js';
import { createInstagramClient } from '../../src/upstreams/instagram/client.js';
import { INSTAGRAM_SIM_USERS, type InstagramSimulator, startInstagramSimulator } from '../../src/upstreams/instagram/simulator.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { loadCatalog } from '../support/catalog.js';

// A call reserves its units before its work and gets them back if the work fails. While a doomed
// call runs, its units look spent: a call refused for quota then must not be told "0 units left"
// when they come back a moment later (src/access/holds.ts). Found by black-box probing: a realtime
// fetch hanging on the platform made the account's next search a 403 with units to spare.

const CREATORS = '/api/v1/search/twitter/user';
/** The photo platform's client gives up on an account that never answers after this long. */
const UPSTREAM_TIMEOUT_MS = 800;

let app: TestApp;
let sim: InstagramSimulator;

beforeAll(async () => {
  sim = await startInstagramSimulator();
  app = await createTestApp({}, { instagram: createInstagramClient({ baseUrl: sim.url, timeoutMs: UPSTREAM_TIMEOUT_MS }) });
  await loadCatalog(app.store.db);
});
afterAll(async () => {
  await app?.close();
  await sim?.close();
});

async function account(quota: number, keys = 1) {
  const accountId = await createAccount(app.store.db, { plan: 'pro', quota, ratePerSecond: 10_000 });
  const issued = await Promise.all(Array.from({ length: keys }, () => issueKey(app.store.db, accountId)));
  return { accountId, keys: issued.map((k) => k.key) };
}

async function used(accountId: string): Promise<number> {
  const { rows } = await sql<{ used: string }>`SELECT quota_used AS used FROM accounts WHERE id = ${accountId}`.execute(app.store.db);
  return Number(rows[0].used);
}

const realtime = (key: string, userId: string) => app.rest(`/api/v1/instagram/realtime/user/medias?user_id=${userId}`, { key });

describe('units held by calls still running', () => {
  it('a search refused while a doomed call holds the units waits for them, and is served', async () => {
    const { accountId, keys: [key] } = await account(200);
    // Holds 100 units until the platform's client gives up on it (500, refunded).
    const hanging = realtime(key, INSTAGRAM_SIM_USERS.hangs);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const first = await app.rest(CREATORS, { body: {}, key });
    expect(first.status).toBe(200);
    const second = await app.rest(CREATORS, { body: {}, key });
    expect(second.status).toBe(200);
    expect(second.headers.get('x-quota-remaining')).toBe('0');
    expect((await hanging).status).toBe(500);
    expect(await used(accountId)).toBe(200);
    // Now the quota is spent for real: refused at once.
    const third = await app.rest(CREATORS, { body: {}, key });
    expect(third.status).toBe(403);
    expect(third.body.message).toBe('Forbidden: quota exhausted (0 units left, 100 needed)');
  });

  it('units for exactly 10 calls, failing calls mixed in: exactly 10 successes, the failures refunded, the rest 403', async () => {
    const { accountId, keys } = await account(1_000, 8);
    const calls = Array.from({ length: 48 }, (_, i) => {
      const key = keys[i % keys.length];
      // Every fourth a realtime fetch the platform fails (500 after a reservation) or never answers.
      if (i % 4 === 0) return realtime(key, i % 8 === 0 ? INSTAGRAM_SIM_USERS.hangs : INSTAGRAM_SIM_USERS.serverError).then((r) => ['realtime', r.status] as const);
      return app.rest(CREATORS, { body: {}, key }).then((r) => ['search', r.status] as const);
    });
    const answers = await Promise.all(calls);
    const searches = answers.filter(([what]) => what === 'search').map(([, status]) => status);
    // The platform fails them all: 500 and refunded, or 403 once the searches have spent the units.
    const fetches = answers.filter(([what]) => what === 'realtime').map(([, status]) => status);
    expect(fetches.every((status) => status === 500 || status === 403)).toBe(true);
    expect(fetches.filter((status) => status === 500).length).toBeGreaterThan(0);
    expect(searches.filter((s) => s === 200)).toHaveLength(10);
    expect(searches.filter((s) => s === 403)).toHaveLength(searches.length - 10);
    expect(await used(accountId)).toBe(1_000);
  });

  it('a call holding units itself does not wait on another: two roots that cannot both be paid settle at once', async () => {
    const { accountId, keys: [key] } = await account(100);
    const started = performance.now();
    const answer = await app.graphql('{ creators(first: 1) { totalCount } videos(first: 1) { totalCount } }', undefined, key);
    const codes = (answer.body.errors ?? []).map((e: { extensions: { code: string } }) => e.extensions.code);
    expect(codes).toEqual(['QUOTA_EXHAUSTED']);
    expect(answer.body.extensions.cost).toMatchObject({ requested: 200, charged: 100, remaining: 0 });
    // Far below the 20 s a wait on its own units would last.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await used(accountId)).toBe(100);
  });

  it('a waiting call whose client leaves is charged nothing', async () => {
    const { accountId, keys: [key] } = await account(100);
    const hanging = realtime(key, INSTAGRAM_SIM_USERS.hangs);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const controller = new AbortController();
    const waiting = Promise.resolve(
      app.server.fetch(`http://test${CREATORS}`, { method: 'POST', headers: { authorization: key, 'content-type': 'application/json' }, body: '{}', signal: controller.signal }),
    ).catch(() => null);
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    await waiting;
    expect((await hanging).status).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await used(accountId)).toBe(0);
  });
});

import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueKey } from '../src/store/accounts.js';
import { INSTAGRAM_SIM_USERS, type InstagramSimulator, startInstagramSimulator } from '../src/upstreams/instagram/simulator.js';
import { loadCatalog } from './support/catalog.js';
import { freePort } from './support/private-servers.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { createTestStore, type TestStore } from './support/store.js';

// SIGTERM as an orchestrator sends it during a rolling restart. Two server processes share one
// PostgreSQL database, so this needs TEST_DATABASE_URL (the embedded store is one process's).

const postgres = process.env.TEST_DATABASE_URL;
if (!postgres) console.log('shutdown.test.ts: skipped, two server processes need a shared PostgreSQL (TEST_DATABASE_URL)');

const SEARCH = '/api/v1/search/twitter/user';

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One GET of a realtime page on a fresh connection. */
function getRealtime(url: string, key: string, userId: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const path = `/api/v1/instagram/realtime/user/medias?user_id=${userId}`;
    const req = httpRequest(`${url}${path}`, { agent: false, headers: { authorization: key } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * One POST on a fresh connection (no keep-alive). A stopped server refuses it; one that closes its
 * listening socket resets the connections the kernel had queued but the server never accepted
 * (`notAccepted`): neither has read the request, so both are safe to send elsewhere.
 */
function post(url: string, key: string, body = '{"page_size": 3}'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${SEARCH}`, { method: 'POST', agent: false, headers: { authorization: key, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET') Object.assign(error, { notAccepted: true });
      reject(error);
    });
    req.end(body);
  });
}


/** The answer of a request cut short by the shutdown grace: 503 in the envelope, with Retry-After. */
function expectRetryLater(answer: { status: number; body: string; headers: Record<string, string | string[] | undefined> }): void {
  expect(answer.status).toBe(503);
  expect(JSON.parse(answer.body)).toMatchObject({ success: false, code: 503 });
  expect(answer.headers['retry-after']).toMatch(/^\d+$/);
}

describe.skipIf(!postgres)('graceful shutdown', () => {
  let store: TestStore;
  let key: string;
  let accountId: string;
  const servers: ServerProcess[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const server = await startServerProcess({ DATABASE_URL: store.databaseUrl!, ...env });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    store = await createTestStore();
    await loadCatalog(store.db);
    accountId = await createAccount(store.db, { plan: 'pro', ratePerSecond: 100_000 });
    key = (await issueKey(store.db, accountId)).key;
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    await store?.close();
  });

  it('restarting one of two servers under steady load fails no request', { timeout: 90_000 }, async () => {
    const quotaUsed = async () => Number((await store.db.selectFrom('accounts').select('quota_used').where('id', '=', accountId).executeTakeFirstOrThrow()).quota_used);
    const before = await quotaUsed();
    const portA = await freePort();
    let a = await start({ PORT: String(portA) });
    const b = await start();
    const urls = [a.url, b.url];
    const statuses: number[] = [];
    let refusedThenRetried = 0;
    let running = true;
    let turn = 0;
    // A client that knows both instances and retries elsewhere when one refuses the connection.
    const loops = Array.from({ length: 8 }, async () => {
      while (running) {
        const first = turn++ % 2;
        for (let attempt = 0; ; attempt++) {
          try {
            statuses.push((await post(urls[(first + attempt) % 2], key)).status);
            break;
          } catch (error) {
            if (!(error as { notAccepted?: boolean }).notAccepted || attempt >= 5) throw error;
            refusedThenRetried += 1;
          }
        }
      }
    });

    await sleep(1_000);
    expect(await a.stop()).toBe(0);
    expect(a.output()).toMatch(/shutting down/);
    await sleep(300);
    a = await start({ PORT: String(portA) });
    await sleep(1_500);
    running = false;
    await Promise.all(loops);

    expect(statuses.length).toBeGreaterThan(50);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(refusedThenRetried).toBeGreaterThan(0);
    expect(b.exited()).toBe(false);
    // A running server keeps its unsold quota lease until the account has been idle for a second;
    // only once every lease is back does quota_used hold exactly what was sold.
    const leasesOpen = async () => (await store.db.selectFrom('quota_leases').select('id').where('account_id', '=', accountId).execute()).length;
    for (let waited = 0; (await leasesOpen()) > 0 && waited < 15_000; waited += 100) await sleep(100);
    expect(await leasesOpen()).toBe(0);
    // Every answered request was charged once, and a refused one never: no work was done twice.
    expect((await quotaUsed()) - before).toBe(statuses.length * 100);
  });

  it('lets a request in flight finish within the grace and answers 503 past it, exiting 0 both times', { timeout: 60_000 }, async () => {
    const locker = new pg.Client({ connectionString: store.databaseUrl });
    await locker.connect();
    const used = async () => Number((await locker.query('SELECT quota_used FROM accounts WHERE id = $1', [accountId])).rows[0].quota_used);
    try {
      // Within the grace: the search waits on a lock that is released 300 ms after SIGTERM.
      const patient = await start({ SHUTDOWN_GRACE_MS: '3000' });
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE creators IN ACCESS EXCLUSIVE MODE');
      const finishing = post(patient.url, key);
      await sleep(300);
      const stopping = patient.stop();
      await sleep(300);
      await locker.query('COMMIT');
      expect((await finishing).status).toBe(200);
      expect(await stopping).toBe(0);

      // Past the grace: the lock is held, the request is answered 503 and refunded.
      const hurried = await start({ SHUTDOWN_GRACE_MS: '500' });
      const before = await used();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE creators IN ACCESS EXCLUSIVE MODE');
      const cut = post(hurried.url, key);
      await sleep(300);
      const stoppedAt = performance.now();
      const exiting = hurried.stop();
      expectRetryLater(await cut);
      expect(performance.now() - stoppedAt).toBeLessThan(3_000);
      expect(await exiting).toBe(0);
      await locker.query('COMMIT');
      expect(await used()).toBe(before);
    } finally {
      await locker.end();
    }
  });

  it('answers a realtime call still waiting on the photo platform 503 past the grace, refunded, and exits without waiting for the platform', { timeout: 60_000 }, async () => {
    const sim: InstagramSimulator = await startInstagramSimulator();
    try {
      const used = async () => Number((await store.db.selectFrom('accounts').select('quota_used').where('id', '=', accountId).executeTakeFirstOrThrow()).quota_used);
      const hurried = await start({ SHUTDOWN_GRACE_MS: '500', INSTAGRAM_UPSTREAM_URL: sim.url, UPSTREAM_TIMEOUT_MS: '30000' });
      const before = await used();
      const cut = getRealtime(hurried.url, key, INSTAGRAM_SIM_USERS.hangs);
      for (let waited = 0; sim.requestCount() === 0 && waited < 5_000; waited += 20) await sleep(20);
      const stoppedAt = performance.now();
      const exiting = hurried.stop();
      expectRetryLater(await cut);
      expect(performance.now() - stoppedAt).toBeLessThan(2_000);
      expect(await exiting).toBe(0);
      expect(performance.now() - stoppedAt).toBeLessThan(5_000);
      expect(hurried.output()).toMatch(/"route":"realtime[^"]*","status":503/);
      expect(await used()).toBe(before);
    } finally {
      await sim.close();
    }
  });
});

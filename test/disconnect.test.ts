import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueKey } from '../src/store/accounts.js';
import { createTestApp, type TestApp } from './support/app.js';
import { loadCatalog } from './support/catalog.js';

// A client that goes away (its timeout fired, it was cancelled, its process stopped) must not
// keep working on the server: its statements are cancelled, its in-flight slot is free at once
// and it pays nothing. A search is made slow by a lock another session holds on the table.
// PostgreSQL only: the embedded store has one connection and no second session to hold a lock.

const postgres = process.env.TEST_DATABASE_URL;
if (!postgres) console.log('disconnect.test.ts: skipped, it needs TEST_DATABASE_URL (a lock held by a second session)');

describe.skipIf(!postgres)('a client that disconnects', () => {
  let app: TestApp;
  let server: Server;
  let url: string;
  let locker: pg.Client;
  let observer: pg.Client;

  beforeAll(async () => {
    app = await createTestApp();
    await loadCatalog(app.store.db);
    server = createServer(app.server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    locker = new pg.Client({ connectionString: app.store.databaseUrl });
    observer = new pg.Client({ connectionString: app.store.databaseUrl });
    await locker.connect();
    await observer.connect();
  });
  afterAll(async () => {
    await locker?.end();
    await observer?.end();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await app?.close();
  });

  /** Statements of the service waiting for the lock on creators. */
  async function waitingOnLock(): Promise<number> {
    const { rows } = await observer.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
      [(locker as unknown as { processID: number }).processID],
    );
    return rows[0].n;
  }

  async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > timeoutMs) throw new Error('timed out');
      await sleep(50);
    }
  }

  const ACCOUNT_SHARE = 8;
  const search = (key: string, signal?: AbortSignal) =>
    fetch(`${url}/api/v1/search/twitter/user`, {
      method: 'POST',
      headers: { authorization: key, 'content-type': 'application/json' },
      body: '{"page_size": 3}',
      signal,
    });

  it('cancels its statements, frees its slot at once and refunds it', { timeout: 60_000 }, async () => {
    // The trial plan allows 4 requests in flight.
    const accountId = await createAccount(app.store.db, { plan: 'trial' });
    const { key } = await issueKey(app.store.db, accountId);
    const used = async () =>
      Number((await observer.query('SELECT quota_used FROM accounts WHERE id = $1', [accountId])).rows[0].quota_used);

    await locker.query('BEGIN');
    await locker.query('LOCK TABLE creators IN ACCESS EXCLUSIVE MODE');
    const gone = Array.from({ length: 4 }, () => new AbortController());
    const abandoned = gone.map((controller) => search(key, controller.signal).catch((error: Error) => error.name));
    // Each search runs its page and its count at once: 8 statements, of which the account's share
    // of the pool (8 of its 10 connections, src/store/connect.ts) wait on the lock.
    await until(async () => (await used()) === 400 && (await waitingOnLock()) === ACCOUNT_SHARE);

    for (const controller of gone) controller.abort();
    expect(await Promise.all(abandoned)).toEqual(Array(4).fill('AbortError'));
    // Nobody waits on the lock for them any more, though the lock is still held.
    await until(async () => (await waitingOnLock()) === 0, 5_000);
    await until(async () => (await used()) === 0, 5_000);

    // The four slots are free for the next four calls at once: admitted, not 429.
    const next = Array.from({ length: 4 }, () => search(key));
    await until(async () => (await waitingOnLock()) === ACCOUNT_SHARE);
    await locker.query('COMMIT');
    const answers = await Promise.all(next);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await used()).toBe(400);
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Logger } from '../../src/observability/log.js';
import { createAccount, issueKey, KEY_CHANGES_CHANNEL, rotateKey, setKeyStatus } from '../../src/store/accounts.js';
import { openStore } from '../../src/store/connect.js';
import { listenPostgres } from '../../src/store/notifications.js';
import { createTestStore, type TestStore } from '../support/store.js';

// Key changes written by anyone straight to the table (no forgetKeys in this process) reach the
// key cache through LISTEN/NOTIFY, on PostgreSQL and on the embedded store alike.

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };
const PROPAGATION_MS = 500;
let store: TestStore;
let app: App | null = null;

afterEach(async () => {
  await app?.close();
  app = null;
  await store?.close();
});

async function start(keyCacheMs: number, wrap: (store: TestStore) => TestStore = (s) => s): Promise<App> {
  store = await createTestStore();
  const config = { ...loadConfig({}), searchIndex: false, keyCacheMs };
  app = await createApp(config, { store: wrap(store), log: quiet, instagram: null });
  return app;
}

const status = async (key: string) => (await app!.server.fetch('http://test/api/ping', { headers: { authorization: key } })).status;

/** Polls with `key` until it gets `wanted`; how long that took. */
async function until(key: string, wanted: number, limitMs = 3_000): Promise<number> {
  const started = performance.now();
  while ((await status(key)) !== wanted) {
    if (performance.now() - started > limitMs) return Infinity;
    await sleep(10);
  }
  return performance.now() - started;
}

async function newKey() {
  return issueKey(store.db, await createAccount(store.db, { plan: 'pro', ratePerSecond: 10_000 }));
}

describe('key changes reach the key cache at once', () => {
  it('disable, enable, rotate, delete, a raw UPDATE and a TRUNCATE, with keys cached for a minute', async () => {
    await start(60_000);
    const issued = await newKey();
    const other = await newKey();
    expect(await status(issued.key)).toBe(200);
    expect(await status(other.key)).toBe(200);

    await setKeyStatus(store.db, issued.id, 'disabled');
    expect(await until(issued.key, 401)).toBeLessThan(PROPAGATION_MS);
    // The refusal was cached too, and is dropped as soon.
    await setKeyStatus(store.db, issued.id, 'active');
    expect(await until(issued.key, 200)).toBeLessThan(PROPAGATION_MS);
    const rotated = (await rotateKey(store.db, issued.id))!;
    expect(await until(issued.key, 401)).toBeLessThan(PROPAGATION_MS);
    expect(await status(rotated.key)).toBe(200);
    await setKeyStatus(store.db, issued.id, 'deleted');
    expect(await until(rotated.key, 401)).toBeLessThan(PROPAGATION_MS);

    await sql`UPDATE api_keys SET status = 'disabled' WHERE id = ${other.id}`.execute(store.db);
    expect(await until(other.key, 401)).toBeLessThan(PROPAGATION_MS);
    await sql`UPDATE api_keys SET status = 'active' WHERE id = ${other.id}`.execute(store.db);
    expect(await until(other.key, 200)).toBeLessThan(PROPAGATION_MS);
    await sql`TRUNCATE api_keys`.execute(store.db);
    expect(await until(other.key, 401)).toBeLessThan(PROPAGATION_MS);
  });

  it('with the notification session unreachable, the process keeps serving, retries with backoff, and KEY_CACHE_MS bounds a change', async () => {
    const errors: Error[] = [];
    const KEY_CACHE_MS = 300;
    await start(KEY_CACHE_MS, (real) => ({
      ...real,
      // Nothing listens on port 1: every attempt is refused.
      listen: (channel, handlers) =>
        listenPostgres({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 500 }, channel, handlers, {
          onError: (error) => errors.push(error),
          backoffMs: 50,
          maxBackoffMs: 200,
        }),
    }));
    const issued = await newKey();
    expect(await status(issued.key)).toBe(200);
    await setKeyStatus(store.db, issued.id, 'disabled');
    const ms = await until(issued.key, 401);
    expect(ms).toBeLessThan(KEY_CACHE_MS + 700);
    await sleep(500);
    // One report per attempt, spaced by a growing backoff: a handful in a second, not hundreds.
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(errors.length).toBeLessThan(20);
  });

  it.runIf(process.env.TEST_DATABASE_URL)('behind a transaction pooler, no LISTEN is attempted: its session would not last, and KEY_CACHE_MS bounds a change', async () => {
    store = await createTestStore();
    const pooled = await openStore({ databaseUrl: store.databaseUrl, transactionPooler: true });
    try {
      expect(await pooled.listen(KEY_CHANGES_CHANNEL, { message: () => {}, listening: () => {} })).toBeNull();
    } finally {
      await pooled.close();
    }
  });
});

import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, RequestAbortedError, type Store, type StoreOptions } from '../src/store/connect.js';
import type { Database } from '../src/store/database.js';
import { isDatabaseUnavailable } from '../src/store/errors.js';
import { createTestStore, type TestStore } from './support/store.js';

// Who gets a pool's next connection (src/store/connection-gate.ts): each account within its share,
// and while the pool is full, the account holding the fewest; work without an account first.

const SLEEP_MS = 250;

describe.runIf(Boolean(process.env.TEST_DATABASE_URL))("the pool's connections across accounts", () => {
  let test: TestStore;
  const opened: Store[] = [];

  beforeAll(async () => {
    test = await createTestStore();
  });
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
    await test?.close();
  });

  /** A store of its own on the test's database, with every connection of its pool open. */
  async function open(options: Partial<StoreOptions> & { poolSize: number }): Promise<Store> {
    const store = await openStore({ databaseUrl: test.databaseUrl!, ...options });
    opened.push(store);
    await Promise.all(Array.from({ length: options.poolSize }, () => sql`SELECT pg_sleep(0.05)`.execute(store.db)));
    return store;
  }
  const as = (store: Store, tenant: string | undefined, signal = new AbortController().signal) => store.cancellable(signal, () => tenant).db;
  const sleep = (db: Kysely<Database>, ms = SLEEP_MS) => sql`SELECT pg_sleep(${ms / 1000})`.execute(db);
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** How long `work` took, in ms. */
  const timed = async (work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  /** Statements of others running now, as the server sees them. */
  const sleepsRunning = async (db: Kysely<Database>) =>
    Number(
      (
        await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND state = 'active' AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()`.execute(db)
      ).rows[0]!.n,
    );

  it("serves a light account's statement, and work without one, at the next free connection, not after the heavy accounts' line", async () => {
    // Four accounts within their share (8 of 10 each) keep 30 statements each asked: 120 in line
    // for ten connections, three seconds of them. First come, first served, the light account's
    // statement waited for the 22 asked before it: three statements' time.
    const store = await open({ poolSize: 10, connectTimeoutMs: 20_000 });
    const heavy = ['a', 'b', 'c', 'e'].flatMap((tenant) => Array.from({ length: 30 }, () => sleep(as(store, tenant))));
    const heavyMs = timed(() => Promise.all(heavy));
    await pause(100);
    const [lightMs, systemMs] = await Promise.all([timed(() => sql`SELECT 1`.execute(as(store, 'd'))), timed(() => sql`SELECT 1`.execute(store.db))]);
    console.log(`light account: ${Math.round(lightMs)} ms, no account: ${Math.round(systemMs)} ms, heavy line: ${Math.round(await heavyMs)} ms`);
    expect(lightMs).toBeLessThan(2 * SLEEP_MS);
    expect(systemMs).toBeLessThan(2 * SLEEP_MS);
    expect(await heavyMs).toBeGreaterThan(10 * SLEEP_MS);
  });

  it('still holds one account alone to all but a fifth of the pool', async () => {
    const store = await open({ poolSize: 10, connectTimeoutMs: 20_000 });
    const heavy = Array.from({ length: 20 }, () => sleep(as(store, 'a')));
    await pause(100);
    expect(store.poolStats()).toMatchObject({ total: 10, idle: 2, waiting: 12 });
    let running = 0;
    expect(await timed(async () => (running = await sleepsRunning(as(store, 'b'))))).toBeLessThan(SLEEP_MS);
    expect(running).toBe(8);
    await Promise.all(heavy);
  });

  it('drops a waiter whose request was aborted from the line at once, and its slot is not lost', async () => {
    const store = await open({ poolSize: 10, connectTimeoutMs: 20_000 });
    const heavy = ['a', 'b'].flatMap((tenant) => Array.from({ length: 10 }, () => sleep(as(store, tenant))));
    await pause(100);
    const client = new AbortController();
    const waiting = sql`SELECT 1`.execute(as(store, 'c', client.signal));
    const outcome = waiting.then(
      () => 'answered',
      (error: unknown) => error,
    );
    await pause(20);
    expect(store.poolStats()!.waiting).toBe(11);
    const abortedAt = performance.now();
    client.abort();
    expect(await outcome).toBeInstanceOf(RequestAbortedError);
    expect(performance.now() - abortedAt).toBeLessThan(50);
    expect(store.poolStats()!.waiting).toBe(10);
    await Promise.all(heavy);
    // Every slot came back: c alone gets its whole share at once.
    expect(await timed(() => Promise.all(Array.from({ length: 8 }, () => sleep(as(store, 'c')))))).toBeLessThan(2 * SLEEP_MS);
    expect(store.poolStats()!.waiting).toBe(0);
  });

  it('ends a wait past the connect timeout with the error read as an unavailable database (503)', async () => {
    const store = await open({ poolSize: 4, connectTimeoutMs: 300 });
    const heavy = Promise.allSettled(['a', 'b'].flatMap((tenant) => Array.from({ length: 3 }, () => sleep(as(store, tenant), 1_500))));
    await pause(50);
    for (const db of [as(store, 'd'), store.db]) {
      const started = performance.now();
      const error = await sql`SELECT 1`.execute(db).then(
        () => null,
        (error: unknown) => error as Error,
      );
      expect(error?.message).toBe('timeout exceeded when trying to connect');
      expect(isDatabaseUnavailable(error)).toBe(true);
      expect(performance.now() - started).toBeGreaterThan(250);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    // The statements past the four connections timed out too; the four ran.
    const settled = await heavy;
    expect(settled.filter((result) => result.status === 'fulfilled')).toHaveLength(4);
  });
});

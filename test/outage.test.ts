import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';
import { timeKeyChange } from './support/key-changes.js';
import { spawnServerProcess, startServerProcess, type ServerProcess } from './support/server-process.js';
import { binArgs } from './support/bin.js';
import {
  freePort,
  postgresBinaries,
  redisServerInstalled,
  startPrivateCluster,
  startPrivateRedis,
  type PrivateCluster,
  type PrivateRedis,
} from './support/private-servers.js';

// What an operator does to a running service: restart its PostgreSQL, lose its Redis. The service
// runs as a real process over a database (and Redis) of this test's own, under steady load.

const SEARCH = '/api/v1/search/twitter/user';
// Clusters of the test's own, so both CI passes would run the same thing: it runs in the
// PostgreSQL pass (TEST_DATABASE_URL set) only.
const bindir = process.env.TEST_DATABASE_URL ? await postgresBinaries() : null;

interface Outcome {
  at: number;
  status: number;
  ms: number;
  body: any;
  retryAfter: string | null;
}

/** `clients` loops searching until stopped; every answer is recorded. */
function load(url: string, key: string, clients: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      const started = performance.now();
      try {
        const response = await fetch(`${url}${SEARCH}`, {
          method: 'POST',
          headers: { authorization: key, 'content-type': 'application/json' },
          body: JSON.stringify({ page_size: 5 }),
          signal: AbortSignal.timeout(20_000),
        });
        const body = await response.json();
        outcomes.push({ at: started, status: response.status, ms: performance.now() - started, body, retryAfter: response.headers.get('retry-after') });
      } catch (error) {
        outcomes.push({ at: started, status: 0, ms: performance.now() - started, body: String(error), retryAfter: null });
      }
    }
  });
  return {
    outcomes,
    since: (t: number) => outcomes.filter((o) => o.at >= t),
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (await check().catch(() => false)) return performance.now() - started;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function quotaUsed(databaseUrl: string, key: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT a.quota_used FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.prefix = $1`,
      [key.slice(0, 10)],
    );
    return Number(rows[0].quota_used);
  } finally {
    await client.end();
  }
}

// Once with the one search thread, once with the index split over two (SEARCH_PARTITIONS): each
// partition's thread keeps its own connections and must come back on its own.
describe.skipIf(!bindir).each([1, 2])('a PostgreSQL restart under load (%i search partitions)', (partitions) => {
  let cluster: PrivateCluster;
  let server: ServerProcess;
  let key: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    cluster = await startPrivateCluster(bindir!);
    env = { DATABASE_URL: cluster.url };
    expect((await runCli(['seed', '--demo'], env)).code).toBe(0);
    key = (await runCli(['keys', 'create', '--plan', 'pro', '--rate', '100000'], env)).stdout.trim();
    server = await startServerProcess({ ...env, DB_CONNECT_TIMEOUT_MS: '1000', STATEMENT_TIMEOUT_MS: '5000', SEARCH_PARTITIONS: String(partitions) });
    // The index loaded before the outage (seen once under CI's load: the outage cut its first load
    // short, so the thread had not yet logged it, and the check below is of a thread that did).
    await until('/readyz 200 before the outage', async () => (await fetch(`${server.url}/readyz`)).status === 200, 60_000);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await cluster?.destroy();
  });

  it('answers 503 quickly during the outage, recovers on its own, and charges exactly the successes', { timeout: 120_000 }, async () => {
    const before = await quotaUsed(cluster.url, key);
    const traffic = load(server.url, key, 8);
    await sleep(1_500);

    const stoppedAt = performance.now();
    await cluster.stop();
    await sleep(3_000);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    const duringOutage = traffic.since(performance.now() - 2_500);

    await cluster.start();
    const startedAt = performance.now();
    const readyAfterMs = await until('/readyz 200', async () => (await fetch(`${server.url}/readyz`)).status === 200, 15_000);
    await until('a search to succeed again', async () => traffic.since(performance.now() - 200).some((o) => o.status === 200), 15_000);
    const recoveredAfterMs = performance.now() - startedAt;
    await sleep(1_000);
    await traffic.stop();

    // The process survived every broken connection.
    expect(server.exited()).toBe(false);
    // So did the search index's own threads: they reconnected, none was replaced.
    expect(server.output().split('search index loaded').length - 1).toBeGreaterThanOrEqual(partitions);
    expect(server.output()).not.toContain('search thread');
    // A feed that fails at every poll (twice a second) is one warning per thread, and one line when back.
    const feedWarnings = server.output().split('reading the change feed failed').length - 1;
    expect(feedWarnings).toBeGreaterThanOrEqual(1);
    expect(feedWarnings).toBeLessThanOrEqual(partitions);
    expect(server.output().split('reading the change feed again').length - 1).toBe(feedWarnings);
    // During the outage: 503 envelopes with Retry-After, each answered fast.
    expect(duringOutage.length).toBeGreaterThan(20);
    for (const outcome of duringOutage) {
      expect(outcome.status, JSON.stringify(outcome)).toBe(503);
      expect(outcome.body).toMatchObject({ success: false, code: 503 });
      expect(outcome.retryAfter).toMatch(/^\d+$/);
      expect(outcome.ms).toBeLessThan(2_500);
    }
    // Before and after: only successes or 503s; never a 500, never a hang.
    for (const outcome of traffic.outcomes) expect([200, 503], JSON.stringify(outcome).slice(0, 300)).toContain(outcome.status);
    // Every search answered before the stop succeeded (one still running when it came may not).
    const answeredBefore = traffic.outcomes.filter((o) => o.at + o.ms < stoppedAt);
    expect(answeredBefore.length).toBeGreaterThan(8);
    expect(answeredBefore.filter((o) => o.status !== 200)).toEqual([]);
    expect(readyAfterMs).toBeLessThan(10_000);
    expect(recoveredAfterMs).toBeLessThan(10_000);

    // Exact quota: 100 units per 200, nothing for the failures (refunds owed during the outage
    // are written once the database is back).
    const successes = traffic.outcomes.filter((o) => o.status === 200).length;
    await until('the owed refunds to be written', async () => (await quotaUsed(cluster.url, key)) - before === successes * 100, 15_000);

    // Every in-flight slot came back: the pro plan's 16 at once are admitted.
    const burst = await Promise.all(
      Array.from({ length: 16 }, () =>
        fetch(`${server.url}${SEARCH}`, { method: 'POST', headers: { authorization: key, 'content-type': 'application/json' }, body: '{}' }),
      ),
    );
    expect(burst.map((r) => r.status)).toEqual(Array(16).fill(200));

    // The key-change notifications are back too: a key disabled by the CLI stops within 0.5 s.
    await until('the notification session to be back', () => listening(cluster.url), 15_000);
    const created = JSON.parse((await runCli(['keys', 'create', '--plan', 'pro', '--rate', '100000', '--json'], env)).stdout) as { id: string; key: string };
    const { ms } = await timeKeyChange(server.url, created.key, 401, () => runCli(['keys', 'disable', created.id], env));
    expect(ms).toBeLessThan(500);
    expect(server.output()).not.toMatch(/Unhandled|uncaught/i);
  });
});

async function listening(databaseUrl: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'creator-data-listen'`);
    return rows.length > 0;
  } finally {
    await client.end();
  }
}

describe.skipIf(!bindir || !redisServerInstalled())('Redis going away while REDIS_URL is set', () => {
  let cluster: PrivateCluster;
  let redis: PrivateRedis;
  let server: ServerProcess;
  let trialKey: string;

  beforeAll(async () => {
    cluster = await startPrivateCluster(bindir!);
    redis = await startPrivateRedis();
    const env = { DATABASE_URL: cluster.url };
    expect((await runCli(['migrate'], env)).code).toBe(0);
    trialKey = (await runCli(['keys', 'create', '--plan', 'trial'], env)).stdout.trim();
    server = await startServerProcess({ ...env, REDIS_URL: redis.url });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await redis?.stop();
    await cluster?.destroy();
  });

  const ping = () => fetch(`${server.url}/api/ping`, { headers: { authorization: trialKey } });
  /**
   * The trial plan's burst is 10 at 5 per second: a volley of 14 admits 10, plus one per 200 ms it
   * takes (a slow machine spreads the volley), and refuses the rest.
   */
  async function volley(): Promise<number[]> {
    const started = performance.now();
    const statuses = (await Promise.all(Array.from({ length: 14 }, () => ping()))).map((r) => r.status).sort();
    const refilled = Math.ceil(((performance.now() - started) / 1000) * 5);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(10 + refilled);
    return statuses;
  }

  it('keeps enforcing the plan per process while Redis is down, and shares limits again once it is back', { timeout: 60_000 }, async () => {
    const fresh = await volley();
    expect(fresh.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(fresh.filter((s) => s === 429).length).toBeGreaterThan(0);
    const inspect = new Redis(redis.url);
    expect((await inspect.keys('cds:limit:*')).length).toBeGreaterThan(0);
    inspect.disconnect();

    await redis.stop();
    await sleep(2_500);
    const started = performance.now();
    const whileDown = await volley();
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(whileDown.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(whileDown.filter((s) => s === 200).length).toBeLessThanOrEqual(10);
    expect(whileDown.every((s) => s === 200 || s === 429)).toBe(true);

    await redis.start();
    const back = new Redis(redis.url);
    await until('limits shared through Redis again', async () => (await ping()).status !== 500 && (await back.keys('cds:limit:*')).length > 0, 20_000);
    back.disconnect();
    expect(server.exited()).toBe(false);
  });
});

describe.skipIf(!bindir)('PostgreSQL away', () => {
  let cluster: PrivateCluster;
  let env: Record<string, string>;

  beforeAll(async () => {
    cluster = await startPrivateCluster(bindir!);
    env = { DATABASE_URL: cluster.url };
    expect((await runCli(['migrate'], env)).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await cluster?.destroy();
  });

  it('a ping with its key still cached answers 503 with Retry-After, not a 200 without its quota', { timeout: 60_000 }, async () => {
    const key = (await runCli(['keys', 'create', '--plan', 'pro'], env)).stdout.trim();
    // The key stays known through the outage: only the quota cannot be read.
    const server = await startServerProcess({ ...env, KEY_CACHE_MS: '600000', DB_CONNECT_TIMEOUT_MS: '1000', SEARCH_INDEX: 'off' });
    try {
      const ping = () => fetch(`${server.url}/api/ping`, { headers: { authorization: key } });
      const before = await ping();
      expect(before.status).toBe(200);
      expect(before.headers.get('x-quota-remaining')).toMatch(/^\d+$/);

      await cluster.stop();
      const during = await ping();
      expect(await during.json()).toMatchObject({ success: false, code: 503 });
      expect(during.status).toBe(503);
      expect(during.headers.get('retry-after')).toMatch(/^\d+$/);

      await cluster.start();
      const after = await until('a ping to succeed again', async () => (await ping()).status === 200, 15_000).then(ping);
      expect(after.headers.get('x-quota-remaining')).toMatch(/^\d+$/);
      expect(after.headers.get('x-quota-cost')).toBe('0');
    } finally {
      await cluster.start().catch(() => {});
      await server.stop();
    }
  });

  it('refunds owed when the process is killed during the outage are written by the next start, once', { timeout: 90_000 }, async () => {
    const key = (await runCli(['keys', 'create', '--plan', 'pro', '--rate', '100000'], env)).stdout.trim();
    const dataDir = mkdtempSync(join(tmpdir(), 'outage-refunds-'));
    // Every call reserves its own units, then reads the database: the calls running when it goes
    // away have paid, fail, and are owed their units back.
    const serverEnv = { ...env, DATA_DIR: dataDir, QUOTA_LEASE_UNITS: '0', SEARCH_INDEX: 'off', DB_CONNECT_TIMEOUT_MS: '1000' };
    const journal = join(dataDir, 'refunds-owed');
    let server = await startServerProcess(serverEnv);
    try {
      const before = await quotaUsed(cluster.url, key);
      const traffic = load(server.url, key, 8);
      await sleep(1_000);
      // The searches that follow pay, then wait on the table, and are running when the database goes.
      const locker = new pg.Client({ connectionString: cluster.url });
      locker.on('error', () => {});
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE creators IN ACCESS EXCLUSIVE MODE');
      // Paid and not answered: what the quota took less what the answers so far paid for (read
      // after it, so a call answered in between is not counted as waiting). Calls already past the
      // table when it was locked are answered and do not count, as a count of answers taken at the
      // lock did: then the database could go while the next calls were still paying, owing nothing.
      const waiting = async () => {
        const paid = (await quotaUsed(cluster.url, key)) - before;
        return paid / 100 - traffic.outcomes.filter((o) => o.status === 200).length;
      };
      await until('8 calls paid and waiting', async () => (await waiting()) >= 8, 10_000);
      // At once: in a fast stop the locker's backend could end its transaction before the waiting
      // ones got their signal, and they would run and answer, owing nothing.
      await cluster.stop('immediate');
      await until('a refund owed on disk', async () => readdirSync(journal).some((name) => name.startsWith('owed-')), 10_000);
      await traffic.stop();
      expect(traffic.outcomes.every((o) => o.status === 200 || o.status === 503), JSON.stringify(traffic.outcomes.find((o) => o.status !== 200 && o.status !== 503))).toBe(true);
      const successes = traffic.outcomes.filter((o) => o.status === 200).length;
      expect(successes).toBeGreaterThan(0);
      await server.kill();

      await cluster.start();
      server = await startServerProcess(serverEnv);
      await until('the owed refunds to be written', async () => (await quotaUsed(cluster.url, key)) - before === successes * 100, 20_000);
      await until('the journal to be empty', async () => readdirSync(journal).every((name) => !name.startsWith('owed-')), 10_000);
      await sleep(500);
      expect((await quotaUsed(cluster.url, key)) - before).toBe(successes * 100);
    } finally {
      await cluster.start().catch(() => {});
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('serve started while it is away listens, is alive and not ready, and becomes ready once it is back', { timeout: 90_000 }, async () => {
    await cluster.stop();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // A password in the URL must reach no log line.
    const withPassword = cluster.url.replace('postgres@', 'postgres:hunter2@');
    const server = spawnServerProcess({ DATABASE_URL: withPassword, PORT: String(port) });
    try {
      await until('/healthz 200 while the database is away', async () => (await fetch(`${url}/healthz`)).status === 200, 20_000);
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(503);
      const search = await fetch(`${url}${SEARCH}`, { method: 'POST', headers: { authorization: 'cds_x', 'content-type': 'application/json' }, body: '{}' });
      expect(search.status).toBe(503);
      expect(search.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await search.json()).toMatchObject({ success: false, code: 503 });
      // Retrying past a few rounds of its backoff, still alive.
      await sleep(4_000);
      expect(server.exited()).toBe(false);
      // One told to stop while it waits exits 0.
      const waiting = spawnServerProcess({ DATABASE_URL: cluster.url, PORT: String(await freePort()) });
      await until('the second server to wait', async () => /database unavailable/.test(waiting.output()), 20_000);
      expect(await waiting.stop()).toBe(0);

      await cluster.start();
      await until('/readyz 200 once the database is back', async () => (await fetch(`${url}/readyz`)).status === 200, 30_000);
      expect(server.output()).toContain(`listening on ${url}`);
      const lines = server.output().split('\n').filter((line) => line.startsWith('{'));
      const warnings = lines.map((line) => JSON.parse(line)).filter((line) => /database unavailable/.test(line.message));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 'warn', error: expect.stringContaining('ECONNREFUSED') });
      expect(server.output()).not.toContain('hunter2');
      expect(server.output()).not.toMatch(/\n\s+at /);
      expect(await server.stop()).toBe(0);
    } finally {
      await cluster.start().catch(() => {});
      await server.stop();
    }
  });

  it('serve waiting for a server that comes back without its database stops waiting: one line, exit code 1', { timeout: 60_000 }, async () => {
    await cluster.stop();
    const port = await freePort();
    const missing = new URL(cluster.url);
    missing.pathname = '/no_such_db';
    missing.password = 'hunter2';
    const server = spawnServerProcess({ DATABASE_URL: missing.href, PORT: String(port) });
    try {
      await until('serve to wait', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200, 20_000);
      await cluster.start();
      expect(await server.exit).toBe(1);
      const lines = server.output().trimEnd().split('\n');
      expect(lines, server.output()).toHaveLength(2);
      expect(JSON.parse(lines[0])).toMatchObject({ level: 'warn', message: expect.stringContaining('database unavailable at start') });
      missing.password = '';
      expect(lines[1]).toBe(`creator-data: cannot use the database at ${missing.href}: database "no_such_db" does not exist`);
      expect(server.output()).not.toContain('hunter2');
      // The port it opened while waiting is closed with it.
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      await cluster.start().catch(() => {});
      await server.stop();
    }
  });

  it('import cut short by a restart ends with one line and exit code 1, and a second run loads it all', { timeout: 90_000 }, async () => {
    const lines = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => JSON.stringify({ user_id: `restart${from + i}`, username: `restart${from + i}`, follower_count: i })).join('\n') + '\n';
    const child = spawn(process.execPath, binArgs(['import', 'creators', '-']), { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // The import may end (the database gone) before the rest of the input is written: that write
    // then meets a closed pipe, which is the import's answer, not the test's failure.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
    // A first batch loads while the rest of the input is still to come; then the server restarts.
    child.stdin.write(lines(0, 12_000));
    await sleep(3_000);
    await cluster.stop();
    await cluster.start();
    child.stdin.end(lines(12_000, 12_000));
    expect(await exit).toBe(1);
    const said = stderr.trim().split('\n').filter((line) => !line.startsWith('import creators:'));
    expect(said, stderr).toHaveLength(1);
    expect(said[0]).toMatch(/^creator-data: the database is unavailable \(.+\); running the import again is safe/);
    expect(stderr).not.toMatch(/\n\s+at /);

    const again = await runCli(['import', 'creators', '-'], env, lines(0, 24_000));
    expect(again.code, again.stderr).toBe(0);
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM creators WHERE user_id LIKE 'restart%'`).finally(() => client.end());
    expect(rows[0].n).toBe(24_000);
  });
});

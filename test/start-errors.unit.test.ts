import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { databaseMisconfiguration, isDatabaseUnavailable, printableDatabaseUrl } from '../src/store/errors.js';
import { expectOneLineExit1, runToEnd, SECRET } from './support/command-exit.js';
import { freePort } from './support/private-servers.js';
import { spawnServerProcess } from './support/server-process.js';

// A setting that can never work ends any command at start with one line and exit code 1; a
// database that is not up yet is waited for by `serve` (test/outage.test.ts has its return). Every
// command runs as a real process, as an operator would start it, on the embedded store or a
// database URL of its own: the same whatever store the run is given (a database the server
// refuses: test/start-database-errors.test.ts).

describe('a setting that can never work', { timeout: 60_000 }, () => {
  it.each([
    ['a port out of range', `postgres://postgres:${SECRET}@127.0.0.1:99999/postgres`, /^creator-data: DATABASE_URL is not a valid URL/],
    ['an unclosed IPv6 host', `postgres://postgres:${SECRET}@[::1/postgres`, /^creator-data: DATABASE_URL is not a valid URL/],
    ['no scheme', `postgres:${SECRET}@127.0.0.1/postgres`, /^creator-data: DATABASE_URL must start with postgres:\/\//],
    ['a stray % in the password', `postgres://postgres:${SECRET}%zz@127.0.0.1/postgres`, /^creator-data: DATABASE_URL is not a valid URL: a % /],
    ['an unreadable root certificate', `postgres://postgres:${SECRET}@127.0.0.1/postgres?sslmode=verify-full&sslrootcert=/nonexistent/root.crt`, /^creator-data: DATABASE_URL: the sslrootcert file \/nonexistent\/root.crt cannot be read \(ENOENT\)$/],
  ])('DATABASE_URL with %s: one line, exit code 1, for serve and migrate', async (_what, url, said) => {
    for (const command of ['serve', 'migrate']) expect(expectOneLineExit1(await runToEnd([command], { DATABASE_URL: url }))).toMatch(said);
  });

  it('a malformed DATABASE_READ_URL or REDIS_URL, or a PORT that is not a number, likewise', async () => {
    const read = await runToEnd(['serve'], { DATABASE_URL: `postgres://postgres@127.0.0.1:1/postgres`, DATABASE_READ_URL: `postgres://postgres:${SECRET}@127.0.0.1:99999/x` });
    expect(expectOneLineExit1(read)).toMatch(/^creator-data: DATABASE_READ_URL is not a valid URL/);
    const redis = await runToEnd(['serve'], { DATA_DIR: 'memory://', REDIS_URL: `redis://:${SECRET}@127.0.0.1:99999` });
    expect(expectOneLineExit1(redis)).toMatch(/^creator-data: REDIS_URL is not a valid URL/);
    expect(expectOneLineExit1(await runToEnd(['serve'], { DATA_DIR: 'memory://', PORT: 'eighty' }))).toBe('creator-data: PORT must be an integer from 0 to 65535');
  });

  it('a PORT or METRICS_PORT another process listens on: one line naming it, exit code 1, nothing left running', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      // A platform URL of its own: the built-in simulator's warning would be a second line.
      const dataDir = join(mkdtempSync(join(tmpdir(), 'port-taken-')), 'data');
      const quiet = { DATA_DIR: dataDir, INSTAGRAM_UPSTREAM_URL: 'http://127.0.0.1:1' };
      for (const command of ['serve', 'start']) {
        const served = expectOneLineExit1(await runToEnd([command], { ...quiet, PORT: String(port) }));
        expect(served).toBe(`creator-data: cannot listen on 127.0.0.1:${port}: another process listens there (PORT, HOST, METRICS_PORT, METRICS_HOST)`);
        const metrics = expectOneLineExit1(await runToEnd([command], { ...quiet, METRICS_PORT: String(port) }));
        expect(metrics).toBe(`creator-data: cannot listen on 127.0.0.1:${port}: another process listens there (PORT, HOST, METRICS_PORT, METRICS_HOST)`);
      }
      // Found before any work of starting (a store, migrations, the demo set, an index to load).
      expect(existsSync(dataDir)).toBe(false);
      rmSync(dirname(dataDir), { recursive: true });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it.each([
    ['DB_POOL_SIZE', '0', 'DB_POOL_SIZE must be an integer from 1 to 1000'],
    ['DB_CONNECT_TIMEOUT_MS', '0', 'DB_CONNECT_TIMEOUT_MS must be a whole number of milliseconds from 50 to 2147483647'],
    ['SEARCH_POLL_MS', '99999999999', 'SEARCH_POLL_MS must be a whole number of milliseconds from 10 to 2147483647'],
    ['STATEMENT_TIMEOUT_MS', '99999999999', 'STATEMENT_TIMEOUT_MS must be a whole number of milliseconds from 100 to 2147483647'],
    ['UPSTREAM_TIMEOUT_MS', '0', 'UPSTREAM_TIMEOUT_MS must be a whole number of milliseconds from 100 to 2147483647'],
    ['GRAPHQL_MAX_UNITS', '99999999', 'GRAPHQL_MAX_UNITS must be an integer from 100 to 10000'],
    ['GRAPHQL_MAX_NODES', '50001', 'GRAPHQL_MAX_NODES must be an integer from 100 to 50000'],
    ['MAX_BODY_BYTES', '0', 'MAX_BODY_BYTES must be an integer from 16384 to 268435456'],
    ['PORT', '99999', 'PORT must be an integer from 0 to 65535'],
    ['METRICS_PORT', '70000', 'METRICS_PORT must be an integer from 0 to 65535'],
    ['LOG_LEVEL', 'verbose', 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent'],
    ['INSTAGRAM_UPSTREAM_URL', 'ftp://x', 'INSTAGRAM_UPSTREAM_URL must be an http:// or https:// URL'],
    ['TWITCH_API_URL', 'http://127.0.0.1:1', 'TWITCH_API_URL is set without TWITCH_CLIENT_ID and TWITCH_TOKEN: the live-stream collector needs all three'],
    ['TWITCH_CLIENT_ID', 'c', 'TWITCH_CLIENT_ID is set without TWITCH_API_URL and TWITCH_TOKEN: the live-stream collector needs all three'],
    ['TWITCH_TOKEN', SECRET, 'TWITCH_TOKEN is set without TWITCH_API_URL and TWITCH_CLIENT_ID: the live-stream collector needs all three'],
    ['ADMIN_TOKEN', SECRET, 'ADMIN_TOKEN must be at least 32 characters'],
    ['ROW_CACHE_ROWS', '1000000000000', 'ROW_CACHE_ROWS must be an integer from 0 to 1000000'],
    ['QUOTA_LEASE_UNITS', '1000001', 'QUOTA_LEASE_UNITS must be an integer from 0 to 1000000'],
    ['QUOTA_LEASE_FLOOR', '9007199254740991', 'QUOTA_LEASE_FLOOR must be an integer from 1 to 1000000'],
    ['HEAP_GROWTH_PERCENT', '5000', "HEAP_GROWTH_PERCENT must be 0 (V8's own choice) or an integer from 10 to 300"],
  ])('%s=%s: one line naming it, exit code 1', async (name, value, said) => {
    const ended = await runToEnd(['serve'], { DATA_DIR: 'memory://', TWITCH_CLIENT_ID: '', TWITCH_TOKEN: '', [name]: value });
    expect(expectOneLineExit1(ended)).toBe(`creator-data: ${said}`);
  });

  it('a DATA_DIR or REFUND_JOURNAL_DIR that cannot be created: one line naming it, exit code 1', async () => {
    for (const command of ['serve', 'migrate']) {
      const data = expectOneLineExit1(await runToEnd([command], { DATABASE_URL: '', DATA_DIR: '/dev/null/x' }));
      expect(data).toBe('creator-data: DATA_DIR: cannot create the folder /dev/null/x (ENOTDIR: a part of its path is a file)');
    }
    const journal = expectOneLineExit1(await runToEnd(['serve'], { DATABASE_URL: '', DATA_DIR: 'memory://', REFUND_JOURNAL_DIR: '/dev/null/x' }));
    expect(journal).toBe('creator-data: REFUND_JOURNAL_DIR: cannot create the folder /dev/null/x (ENOTDIR: a part of its path is a file)');
  });

  it('a SEARCH_SNAPSHOT_DIR that cannot be created, with the index on: one line naming it, exit code 1', async () => {
    const index = { DATABASE_URL: '', DATA_DIR: 'memory://', SEARCH_INDEX: 'on' };
    const file = expectOneLineExit1(await runToEnd(['serve'], { ...index, SEARCH_SNAPSHOT_DIR: '/dev/null/x' }));
    expect(file).toBe('creator-data: SEARCH_SNAPSHOT_DIR: cannot create the folder /dev/null/x (ENOTDIR: a part of its path is a file)');
    // Its default is in DATA_DIR: a DATA_DIR that cannot be created is named as such.
    const data = expectOneLineExit1(await runToEnd(['serve'], { ...index, DATA_DIR: '/dev/null/x' }));
    expect(data).toBe('creator-data: DATA_DIR: cannot create the folder /dev/null/x (ENOTDIR: a part of its path is a file)');
  });

  it.runIf(existsSync('/proc/self'))('a folder setting in /proc: one line, at once, where creating it would hang for ever', async () => {
    for (const [name, command] of [['DATA_DIR', 'migrate'], ['DATA_DIR', 'serve'], ['SEARCH_SNAPSHOT_DIR', 'serve'], ['REFUND_JOURNAL_DIR', 'serve']]) {
      const ended = await runToEnd([command], { DATABASE_URL: '', DATA_DIR: 'memory://', SEARCH_INDEX: 'on', [name]: '/proc/x' }, 5_000);
      expect(expectOneLineExit1(ended)).toBe(`creator-data: ${name}: cannot create the folder /proc/x (it is in /proc, where no folder can be made)`);
    }
  });

  it('a HOST or METRICS_HOST that does not resolve is named, not blamed on the database', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'host-unresolved-')), 'data');
    const quiet = { DATA_DIR: dataDir, INSTAGRAM_UPSTREAM_URL: 'http://127.0.0.1:1' };
    for (const port of ['8089', '0']) {
      const host = expectOneLineExit1(await runToEnd(['serve'], { ...quiet, HOST: 'nosuchhost.invalid', PORT: port }));
      expect(host).toMatch(new RegExp(`^creator-data: cannot listen on nosuchhost\\.invalid:${port}: getaddrinfo E\\w+ nosuchhost\\.invalid \\(HOST\\)$`));
    }
    const metrics = expectOneLineExit1(await runToEnd(['serve'], { ...quiet, METRICS_HOST: 'nosuchhost.invalid', METRICS_PORT: '0' }));
    expect(metrics).toMatch(/^creator-data: cannot listen on nosuchhost\.invalid:0: getaddrinfo E\w+ nosuchhost\.invalid \(METRICS_HOST\)$/);
    // Found before any work of starting, as a port in use is, whether the port is given or any free one.
    expect(existsSync(dataDir)).toBe(false);
    rmSync(dirname(dataDir), { recursive: true });
  });

  it('a database host that does not resolve: one line naming it, exit code 1', async () => {
    const line = expectOneLineExit1(await runToEnd(['serve'], { DATABASE_URL: `postgres://postgres:${SECRET}@no-such-host.invalid:5432/postgres` }));
    expect(line).toMatch(/^creator-data: cannot use the database at postgres:\/\/postgres@no-such-host\.invalid:5432\/postgres: getaddrinfo ENOTFOUND no-such-host\.invalid$/);
  });
});

describe('a database not up yet', { timeout: 60_000 }, () => {
  // Nothing listens on port 1: what a PostgreSQL still starting (or restarting) looks like.
  const away = `postgres://postgres:${SECRET}@127.0.0.1:1/postgres`;

  it('is waited for by serve: alive, not ready, one warning without the password, and SIGTERM exits 0', async () => {
    const port = await freePort();
    const server = spawnServerProcess({ DATABASE_URL: away, PORT: String(port), SEARCH_INDEX: 'off', REDIS_URL: '' });
    try {
      const url = `http://127.0.0.1:${port}`;
      for (let tries = 0; tries < 100 && !/database unavailable/.test(server.output()); tries++) await sleep(100);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect((await fetch(`${url}/readyz`)).status).toBe(503);
      // Past a few rounds of its backoff (1 s, 2 s), still there.
      await sleep(3_500);
      expect(server.exited(), server.output()).toBe(false);
      expect(await server.stop()).toBe(0);
      const warnings = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line))
        .filter((line) => /database unavailable/.test(line.message));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 'warn', error: expect.stringContaining('ECONNREFUSED') });
      expect(server.output()).not.toContain(SECRET);
      expect(server.output()).not.toMatch(/\n\s+at /);
    } finally {
      await server.stop();
    }
  });

  it('ends any other command with its "unavailable" line, as before', async () => {
    const line = expectOneLineExit1(await runToEnd(['migrate'], { DATABASE_URL: away }));
    expect(line).toBe('creator-data: the database is unavailable (connect ECONNREFUSED 127.0.0.1:1)');
  });

  it('a Redis host that does not resolve is not fatal: limits stay in the process, as while Redis is down', async () => {
    const server = spawnServerProcess({ DATA_DIR: 'memory://', REDIS_URL: `redis://:${SECRET}@no-such-host.invalid:6379`, SEARCH_INDEX: 'off' });
    try {
      // As long as startServerProcess waits for any server: 15 s was not enough with the machine's cores busy.
      for (let tries = 0; tries < 300 && !/listening on/.test(server.output()); tries++) await sleep(100);
      expect(server.output()).toMatch(/listening on http/);
      expect(server.output()).toMatch(/rate limits: Redis not answering/);
      expect(server.output()).not.toContain(SECRET);
      expect(server.output()).not.toMatch(/\n\s+at /);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe('which database errors are for good', () => {
  const failure = (code: string, message = `failed: ${code}`) => Object.assign(new Error(message), { code });

  it('a refusal of the URL is, an outage is not (and stays a 503 while running)', () => {
    for (const code of ['3D000', '28000', '28P01', '42501', 'ENOTFOUND', 'SELF_SIGNED_CERT_IN_CHAIN', 'ERR_TLS_CERT_ALTNAME_INVALID']) {
      expect(databaseMisconfiguration(new Error('wrapped', { cause: failure(code) })), code).toBe(`failed: ${code}`);
    }
    expect(databaseMisconfiguration(new Error('The server does not support SSL connections'))).not.toBeNull();
    for (const code of ['ECONNREFUSED', 'ETIMEDOUT', 'EAI_AGAIN', '57P03', '57P01', '53300', '08006']) {
      expect(databaseMisconfiguration(failure(code)), code).toBeNull();
      expect(isDatabaseUnavailable(failure(code)), code).toBe(true);
    }
    expect(databaseMisconfiguration(new Error('timeout exceeded when trying to connect'))).toBeNull();
  });

  it('a URL is printed without its password, secret parameters or fragment', () => {
    expect(printableDatabaseUrl('postgres://app:pw%23x@db:5432/main?sslmode=verify-full&password=p2&sslpassword=p3#frag')).toBe(
      'postgres://app@db:5432/main?sslmode=verify-full',
    );
    expect(printableDatabaseUrl('postgres://app:hunter2@db:5432/main?application_name=hunter2')).toBe('postgres://app@db:5432/main?application_name=***');
    expect(printableDatabaseUrl('postgres://[::1')).toBe('(a URL that does not parse)');
  });
});

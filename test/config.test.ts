import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BODY_BYTES_MIN, CONTRACT_MAX_OPERATION_NODES, CONTRACT_MAX_OPERATION_UNITS, loadConfig, MAX_TIMER_MS } from '../src/config.js';
import { CLIENT_TIMEOUTS } from '../src/app.js';
import { SearchRows } from '../src/search/row-cache.js';
import { createTestApp } from './support/app.js';

// A setting that can never work is refused by loadConfig, naming the variable (the CLI prints that
// one line and exits 1: test/start-errors.unit.test.ts); a value within its range is taken as it is.

const refused = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (error) {
    return (error as Error).message;
  }
  return null;
};

describe('numeric settings have the range they can work in', () => {
  it.each([
    ['PORT', ['-1', '65536', '99999', '80.5', 'eighty'], ['0', '65535'], 'PORT must be an integer from 0 to 65535'],
    ['METRICS_PORT', ['70000', '-1'], ['0', '9464'], 'METRICS_PORT must be an integer from 0 to 65535'],
    ['DB_POOL_SIZE', ['0', '1001', '-3'], ['1', '1000'], 'DB_POOL_SIZE must be an integer from 1 to 1000'],
    ['DB_CONNECT_TIMEOUT_MS', ['0', '49', '2147483648'], ['50', '2147483647'], 'DB_CONNECT_TIMEOUT_MS must be a whole number of milliseconds from 50 to 2147483647'],
    ['STATEMENT_TIMEOUT_MS', ['0', '99', '99999999999'], ['100', '2147483647'], 'STATEMENT_TIMEOUT_MS must be a whole number of milliseconds from 100 to 2147483647'],
    ['SEARCH_POLL_MS', ['0', '9', '99999999999'], ['10', '2147483647'], 'SEARCH_POLL_MS must be a whole number of milliseconds from 10 to 2147483647'],
    ['UPSTREAM_TIMEOUT_MS', ['0', '99', '2147483648'], ['100', '30000'], 'UPSTREAM_TIMEOUT_MS must be a whole number of milliseconds from 100 to 2147483647'],
    ['SHUTDOWN_GRACE_MS', ['-1', '2147483648'], ['0', '2147483647'], 'SHUTDOWN_GRACE_MS must be a whole number of milliseconds from 0 to 2147483647'],
    ['HTTP_KEEP_ALIVE_MS', ['0', '999', '2147483648'], ['1000', '65000', '600000'], 'HTTP_KEEP_ALIVE_MS must be a whole number of milliseconds from 1000 to 2147483647'],
    ['KEY_CACHE_MS', ['2147483648'], ['0', '600000'], 'KEY_CACHE_MS must be a whole number of milliseconds from 0 to 2147483647'],
    ['KEYLESS_CPU_BURST_MS', ['0', '2147483648'], ['1', '2000'], 'KEYLESS_CPU_BURST_MS must be a whole number of milliseconds from 1 to 2147483647'],
    ['KEYLESS_CPU_MS_PER_S', ['0', '1001'], ['1', '1000'], 'KEYLESS_CPU_MS_PER_S must be an integer from 1 to 1000'],
    ['SEARCH_SNAPSHOT_EVERY_MS', ['1', '999', '2147483648', 'soon'], ['0', '1000', '2147483647'], 'SEARCH_SNAPSHOT_EVERY_MS must be 0 (no periodic write) or a whole number of milliseconds from 1000 to 2147483647'],
    ['GRAPHQL_MAX_UNITS', ['0', '99', '10001', '99999999'], ['100', '10000'], 'GRAPHQL_MAX_UNITS must be an integer from 100 to 10000'],
    ['GRAPHQL_MAX_NODES', ['0', '50001'], ['100', '50000'], 'GRAPHQL_MAX_NODES must be an integer from 100 to 50000'],
    ['MAX_BODY_BYTES', ['0', '1023', '16383', '268435457'], ['16384', '65536', '268435456'], 'MAX_BODY_BYTES must be an integer from 16384 to 268435456'],
    // Each cache's admission filter is allocated up front at about 2 bytes a row: 10^12 threw a RangeError at start.
    ['ROW_CACHE_ROWS', ['-1', '1.5', 'many', '1000001', '1000000000000'], ['0', '50', '10000', '1000000'], 'ROW_CACHE_ROWS must be an integer from 0 to 1000000'],
    // The floor counts leases, not units: units × floor is what must remain, and at 2000 × 9007199254740991
    // it overflowed PostgreSQL's bigint, every keyed call a 500. A floor of 0 would lease an account's last units.
    ['QUOTA_LEASE_UNITS', ['-1', '1.5', '1000001', '9007199254740991'], ['0', '100', '2000', '1000000'], 'QUOTA_LEASE_UNITS must be an integer from 0 to 1000000'],
    ['QUOTA_LEASE_FLOOR', ['0', '-1', '1000001', '9007199254740991'], ['1', '5', '1000', '1000000'], 'QUOTA_LEASE_FLOOR must be an integer from 1 to 1000000'],
    // V8's own growth factors run from 1.1 to 4.0; a C int past that (99999999999) was taken silently.
    ['HEAP_GROWTH_PERCENT', ['1', '9', '301', '5000', '99999999999', '-1', '40.5'], ['0', '10', '40', '300'], "HEAP_GROWTH_PERCENT must be 0 (V8's own choice) or an integer from 10 to 300"],
  ])('%s', (name, bad, good, message) => {
    for (const value of bad) expect(refused({ [name]: value }), value).toBe(message);
    for (const value of good) expect(refused({ [name]: value }), value).toBeNull();
  });

  it('timers stop where Node can still wait, and the GraphQL bounds at the contract', () => {
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
    expect(CONTRACT_MAX_OPERATION_UNITS).toBe(10_000);
    expect(CONTRACT_MAX_OPERATION_NODES).toBe(50_000);
    const defaults = loadConfig({});
    expect([defaults.maxOperationUnits, defaults.maxOperationNodes, defaults.poolSize, defaults.connectTimeoutMs]).toEqual([10_000, 50_000, 10, 2_000]);
    expect(loadConfig({ SEARCH_SNAPSHOT_EVERY_MS: '0' }).searchSnapshotEveryMs).toBe(0);
    // The served process and listen()'s own default keep idle connections alike, past a 60 s load balancer.
    expect([defaults.httpKeepAliveMs, CLIENT_TIMEOUTS.keepAliveMs]).toEqual([65_000, 65_000]);
  });
});

describe('ROW_CACHE_ROWS', () => {
  it('0 keeps the caches off in effect (a row at most), every read still right; the most allocates a few MiB up front', async () => {
    const off = new SearchRows<{ id: string }, { id: string }, { id: string }, { id: string }>(loadConfig({ ROW_CACHE_ROWS: '0' }).rowCacheRows);
    let loads = 0;
    const load = async (keys: string[]) => (loads++, keys.map((id) => ({ id })));
    for (let round = 0; round < 3; round++) {
      for (const id of ['a', 'b', 'c']) expect(await off.videos.read([id], load, (row) => row.id)).toEqual([{ id }]);
    }
    expect(loads).toBe(9);
    const before = process.memoryUsage().arrayBuffers;
    const most = new SearchRows(loadConfig({ ROW_CACHE_ROWS: '1000000' }).rowCacheRows);
    most.creators('twitter');
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 2 ** 20);
  });
});

describe.runIf(existsSync('/proc/self'))('folder settings', () => {
  it("a folder in /proc, or reached through a link into it, is refused at once: Node's mkdir loops for ever there", () => {
    for (const [name, value] of [
      ['DATA_DIR', '/proc/x'],
      ['SEARCH_SNAPSHOT_DIR', '/proc/x/y'],
      ['SEARCH_SNAPSHOT_DIR', '/proc'],
      ['REFUND_JOURNAL_DIR', '/dev/fd/x'],
    ]) {
      expect(refused({ DATA_DIR: 'memory://', [name]: value }), value).toBe(`${name}: cannot create the folder ${value} (it is in /proc, where no folder can be made)`);
    }
    // The default folders beside DATA_DIR are checked too; DATA_DIR is named first.
    expect(refused({ DATA_DIR: '/proc/self/x' })).toBe('DATA_DIR: cannot create the folder /proc/self/x (it is in /proc, where no folder can be made)');
    expect(refused({ DATA_DIR: 'memory://', SEARCH_SNAPSHOT_DIR: 'off', REFUND_JOURNAL_DIR: 'off' })).toBeNull();
    expect(refused({ DATA_DIR: '/dev/null/x' })).toBeNull();
  });
});

describe('settings with a set of values', () => {
  it('LOG_LEVEL is one of pino levels', () => {
    expect(loadConfig({}).logLevel).toBe('info');
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) expect(refused({ LOG_LEVEL: level })).toBeNull();
    for (const level of ['verbose', 'INFO', 'warning']) {
      expect(refused({ LOG_LEVEL: level })).toBe('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent');
    }
  });

  it('the platform URLs are http(s) URLs, never repeated in the message', () => {
    for (const name of ['INSTAGRAM_UPSTREAM_URL', 'TWITCH_API_URL']) {
      for (const url of ['notaurl', 'ftp://x', 'file:///etc/passwd', 'postgres://user:s3cret@h/db']) {
        const message = refused({ [name]: url, TWITCH_CLIENT_ID: 'id', TWITCH_TOKEN: 'token' });
        expect(message, url).toBe(`${name} must be an http:// or https:// URL`);
      }
    }
    expect(loadConfig({ INSTAGRAM_UPSTREAM_URL: 'https://feed.example/' }).instagramUpstreamUrl).toBe('https://feed.example/');
  });

  it('TWITCH_API_URL needs TWITCH_CLIENT_ID and TWITCH_TOKEN', () => {
    const url = 'http://127.0.0.1:9000';
    expect(refused({ TWITCH_API_URL: url })).toBe('TWITCH_API_URL is set without TWITCH_CLIENT_ID and TWITCH_TOKEN: the live-stream collector needs all three');
    expect(refused({ TWITCH_API_URL: url, TWITCH_TOKEN: 't' })).toBe('TWITCH_API_URL is set without TWITCH_CLIENT_ID: the live-stream collector needs all three');
    expect(refused({ TWITCH_API_URL: url, TWITCH_CLIENT_ID: 'c', TWITCH_TOKEN: ' ' })).toBe('TWITCH_API_URL is set without TWITCH_TOKEN: the live-stream collector needs all three');
    expect(loadConfig({ TWITCH_API_URL: url, TWITCH_CLIENT_ID: 'c', TWITCH_TOKEN: 't' }).twitch).toEqual({ apiUrl: url, clientId: 'c', token: 't' });
    // Without any of the three the collector is off (the contract's default).
    expect(loadConfig({ TWITCH_CLIENT_ID: ' ', TWITCH_TOKEN: '' }).twitch).toBeUndefined();
  });

  it('TWITCH_CLIENT_ID or TWITCH_TOKEN without TWITCH_API_URL is refused, not left unused', () => {
    expect(refused({ TWITCH_CLIENT_ID: 'c' })).toBe('TWITCH_CLIENT_ID is set without TWITCH_API_URL and TWITCH_TOKEN: the live-stream collector needs all three');
    expect(refused({ TWITCH_TOKEN: 't' })).toBe('TWITCH_TOKEN is set without TWITCH_API_URL and TWITCH_CLIENT_ID: the live-stream collector needs all three');
    expect(refused({ TWITCH_CLIENT_ID: 'c', TWITCH_TOKEN: 't', TWITCH_API_URL: ' ' })).toBe(
      'TWITCH_CLIENT_ID and TWITCH_TOKEN are set without TWITCH_API_URL: the live-stream collector needs all three',
    );
  });

  it('ADMIN_TOKEN is at least 32 characters, as OFFSET_SECRET, and never printed', () => {
    expect(refused({ ADMIN_TOKEN: 'a' })).toBe('ADMIN_TOKEN must be at least 32 characters');
    expect(refused({ ADMIN_TOKEN: 'x'.repeat(31) })).toBe('ADMIN_TOKEN must be at least 32 characters');
    expect(loadConfig({ ADMIN_TOKEN: 'x'.repeat(32) }).adminToken).toBe('x'.repeat(32));
    expect(loadConfig({ ADMIN_TOKEN: '' }).adminToken).toBeUndefined();
  });

  it('METRICS_HOST is loopback unless set: metrics have no key', () => {
    expect(loadConfig({ HOST: '0.0.0.0', METRICS_PORT: '9464' }).metricsHost).toBe('127.0.0.1');
    expect(loadConfig({ METRICS_HOST: '0.0.0.0' }).metricsHost).toBe('0.0.0.0');
  });
});

describe('the smallest MAX_BODY_BYTES', () => {
  it('lets the largest valid search body through, every list and text at its limit', { timeout: 60_000 }, async () => {
    const app = await createTestApp({ maxBodyBytes: BODY_BYTES_MIN });
    try {
      // A hundred category ids of ten digits each, that exist.
      const categoryIds = Array.from({ length: 100 }, (_, i) => 2_147_483_647 - i);
      await app.store.db
        .insertInto('categories')
        .values([{ id: 1, parent_id: null, level: 1, name: 'Top' }, ...categoryIds.map((id) => ({ id, parent_id: 1, level: 2, name: `c${id}` }))])
        .execute();
      const metric = 99_999_999_999_999_999.99;
      // Each character of the query escaped: 6 bytes for one of its 200.
      const query = `"${'\\u00e9'.repeat(200)}"`;
      const metrics = ['avg_engagement_rate', 'avg_comment_count', 'avg_like_count', 'avg_play_count'];
      const audience = {
        follower_count_min: 0,
        follower_count_max: Number.MAX_SAFE_INTEGER,
        ...Object.fromEntries(metrics.flatMap((name) => [[`${name}_min`, 0], [`${name}_max`, metric]])),
        recent_month_publish_count_min: 0,
        recent_month_publish_count_max: 2_147_483_647,
        gender: 1,
        locations: Array.from({ length: 250 }, () => 'US'),
        create_at_start: '2026-01-01T00:00:00.000Z',
        create_at_end: '2026-12-31T23:59:59.999Z',
        page: 1,
        page_size: 100,
      };
      const creator = {
        ...audience,
        category_ids: categoryIds,
        languages: Array.from({ length: 200 }, () => 'en'),
        has_email: 1,
        verified: 1,
        sort_by: 'follower_count',
        avg_engagement_count_min: 0,
        avg_engagement_count_max: metric,
        avg_video_engagement_rate_min: 0,
        avg_video_engagement_rate_max: metric,
        retweet_ratio_max: metric,
      };
      const video = { ...audience, categorys: categoryIds, video_type: 2 };
      for (const [path, body] of [
        ['/api/v1/search/twitter/user', creator],
        ['/api/v1/search/youtube/video', video],
      ] as const) {
        const text = `{"query":${query},${JSON.stringify(body).slice(1)}`;
        expect(Buffer.byteLength(text)).toBeLessThan(BODY_BYTES_MIN / 2);
        const answer = await app.rest(path, { body: text });
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      }
    } finally {
      await app.close();
    }
  });
});

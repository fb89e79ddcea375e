import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createLogger } from '../src/observability/log.js';
import { createInstagramClient } from '../src/upstreams/instagram/client.js';
import { INSTAGRAM_SIM_USERS, startInstagramSimulator } from '../src/upstreams/instagram/simulator.js';
import { createTestApp, type TestApp } from './support/app.js';
import { loadCatalog } from './support/catalog.js';
import { freePort } from './support/private-servers.js';
import { startServerProcess } from './support/server-process.js';

// What an operator reads: one JSON log line per request, and Prometheus metrics.

let app: TestApp;
let key: string;
const lines: Record<string, any>[] = [];

beforeAll(async () => {
  app = await createTestApp({ adminToken: 'admin-secret-token' });
  await loadCatalog(app.store.db);
  key = await app.newKey({ plan: 'pro', ratePerSecond: 10_000 });
  app.services.log = createLogger({ write: (line: string) => lines.push(JSON.parse(line)) } as unknown as NodeJS.WritableStream);
});
afterAll(() => app?.close());

const search = (init: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {}) =>
  app.rest('/api/v1/search/twitter/user', { key: init.key === undefined ? key : init.key, body: init.body ?? { page_size: 2 }, headers: init.headers });
const requestLines = () => lines.filter((line) => line.message === 'request');

describe('request logs', () => {
  it('writes one JSON line per request with its id, route, status, duration, account and units, never the key', async () => {
    lines.length = 0;
    const ok = await search({ headers: { 'x-request-id': 'client-chosen-id.1' } });
    const bad = await search({ body: { gender: 9 } });
    const anonymous = await search({ key: null });
    const gql = await app.graphql('{ creators(first: 1) { totalCount } videos(first: 1) { totalCount } }', undefined, key);

    expect(ok.headers.get('x-request-id')).toBe('client-chosen-id.1');
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const logged = requestLines();
    expect(logged.map((line) => [line.route, line.status, line.units])).toEqual([
      ['search.creators', 200, 100],
      ['search.creators', 400, 0],
      ['search.creators', 401, 0],
      ['graphql', 200, 200],
    ]);
    expect(logged.map((line) => line.requestId)).toEqual([ok, bad, anonymous, gql].map((r) => r.headers.get('x-request-id')));
    for (const line of logged) {
      expect(line.level).toBe('info');
      expect(typeof line.time).toBe('string');
      expect(line.durationMs).toBeGreaterThanOrEqual(0);
    }
    expect(logged[0].accountId).toMatch(/^acct_/);
    expect(logged[2].accountId).toBeUndefined();
    expect(JSON.stringify(lines)).not.toContain(key);
    expect(JSON.stringify(lines)).not.toContain(key.slice(4));
  });

  it('logs and counts a request whose client left as 499, not as the 503 no one received', async () => {
    const server = createServer(app.server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      lines.length = 0;
      for (const path of ['/api/v1/search/twitter/user', '/graphql']) {
        const outgoing = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', authorization: key } });
        outgoing.on('error', () => {});
        // Half a body, then gone: the door is waiting for the rest.
        outgoing.write('{"page": ');
        await sleep(100);
        outgoing.destroy();
      }
      for (let waited = 0; requestLines().length < 2 && waited < 5_000; waited += 50) await sleep(50);
      expect(requestLines().map((line) => [line.route, line.status, line.units])).toEqual([
        ['search.creators', 499, 0],
        ['graphql', 499, 0],
      ]);
      // Nor is a body cut short a database outage.
      expect(lines.filter((line) => line.level !== 'info')).toEqual([]);
      const text = await app.services.metrics.registry.metrics();
      expect(text).toMatch(/http_requests_total\{endpoint="search\.creators",status="499"\} 1/);
      expect(text).not.toMatch(/http_requests_total\{[^}]*status="503"\}/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('replaces a request id that is not a short token, so a client cannot inject into the log', async () => {
    const response = await search({ headers: { 'x-request-id': `${'x'.repeat(100)}` } });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("logs a 500's cause and an upstream failure with the id the client was answered with, REST and GraphQL, and tells the client neither", async () => {
    // Bugs' 500s (the app runs its searches on SQL): a column the rows need, gone (a null for a
    // non-null field, once answered as the caller's 400), and a table, gone (a statement that fails).
    await sql`alter table videos rename column title to title_gone`.execute(app.store.db);
    await sql`alter table live_streams rename to live_streams_gone`.execute(app.store.db);
    const sim = await startInstagramSimulator();
    try {
      lines.length = 0;
      const rest = await app.rest('/api/v1/search/youtube/video', { key, body: {}, headers: { 'x-request-id': 'ticket-500.rest' } });
      const gql = await app.graphql('{ videos(first: 1) { totalCount nodes { title } } }', undefined, key);
      const statement = await app.graphql('{ liveStreams(first: 1) { totalCount } }', undefined, key);
      expect(rest.status).toBe(500);
      expect(rest.body).toEqual({ success: false, code: 500, message: 'Internal Server Error' });
      for (const answer of [gql, statement]) {
        expect(answer.body.errors.map((error: any) => [error.message, error.extensions.code])).toEqual([['Internal Server Error', 'INTERNAL']]);
        expect(answer.body.extensions.cost.charged).toBe(0);
      }
      expect(JSON.stringify([rest.body.message, gql.body.errors, statement.body.errors].map(String))).not.toMatch(/gone|column|relation|at \//);
      const failures = lines.filter((line) => line.message === 'request failed');
      expect(failures.map((line) => [line.level, line.requestId])).toEqual([
        ['error', 'ticket-500.rest'],
        ['error', gql.headers.get('x-request-id')],
        ['error', statement.headers.get('x-request-id')],
      ]);
      expect(failures.map((line) => /Video\.title/.test(line.error))).toEqual([true, true, false]);
      expect(failures[2].error).toContain('live_streams');

      // The platform failing for an account: a warning naming the request, the client a retryable 500.
      app.services.instagram = createInstagramClient({ baseUrl: sim.url, timeoutMs: 2_000 });
      lines.length = 0;
      const params = new URLSearchParams({ user_id: INSTAGRAM_SIM_USERS.serverError });
      const realtime = await app.rest(`/api/v1/instagram/realtime/user/medias?${params}`, { key, headers: { 'x-request-id': 'ticket-upstream' } });
      expect(realtime.status).toBe(500);
      expect(lines.filter((line) => line.message === 'upstream unavailable').map((line) => [line.level, line.requestId])).toEqual([['warn', 'ticket-upstream']]);
    } finally {
      app.services.instagram = undefined;
      await sim.close();
      await sql`alter table videos rename column title_gone to title`.execute(app.store.db);
      await sql`alter table live_streams_gone rename to live_streams`.execute(app.store.db);
    }
  });

  it('redacts credential-named fields if one is ever passed to the logger', () => {
    const captured: string[] = [];
    const log = createLogger({ write: (line: string) => captured.push(line) } as unknown as NodeJS.WritableStream);
    log.warn('oops', { authorization: key, nested: { key } });
    expect(captured.join('')).not.toContain(key);
    expect(captured.join('')).toContain('[redacted]');
  });
});

describe('metrics', () => {
  it('counts requests by endpoint and status, units charged, and the process itself', async () => {
    await search();
    await search({ body: { gender: 9 } });
    const text = await app.services.metrics.registry.metrics();
    expect(text).toMatch(/http_requests_total\{endpoint="search\.creators",status="200"\} [1-9]/);
    expect(text).toMatch(/http_requests_total\{endpoint="search\.creators",status="400"\} [1-9]/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0\.1",endpoint="search\.creators"\}/);
    expect(text).toMatch(/quota_units_charged_total\{endpoint="search\.creators"\} [1-9]\d{2}/);
    expect(text).toMatch(/process_resident_memory_bytes \d+/);
    expect(text).toMatch(/nodejs_heap_size_used_bytes \d+/);
    if (app.store.kind === 'postgres') expect(text).toMatch(/db_pool_connections\{state="total"\} \d+/);
  });

  it('serves /metrics on the main port only with the admin token', async () => {
    expect((await app.rest('/metrics', { key: null })).status).toBe(401);
    expect((await app.rest('/metrics', { key })).status).toBe(401);
    const response = await app.server.fetch('http://test/metrics', { headers: { authorization: 'Admin admin-secret-token' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/http_requests_total/);
  });

  it('keeps no per-request state once requests are answered (work registry, in-flight slots)', async () => {
    await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? search() : app.rest('/api/ping', { key }))));
    expect(app.services.work.size).toBe(0);
  });
});

describe('metrics on a port of their own', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cds-metrics-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves /metrics on METRICS_PORT without a key, with the upstream breaker and nothing else', { timeout: 60_000 }, async () => {
    const metricsPort = await freePort();
    const env: Record<string, string> = process.env.TEST_DATABASE_URL ? { DATABASE_URL: app.store.databaseUrl! } : { DATA_DIR: dataDir, DATABASE_URL: '' };
    // The server on every address; the metrics, which have no key, stay on loopback (METRICS_HOST unset).
    const server = await startServerProcess({ ...env, HOST: '0.0.0.0', METRICS_PORT: String(metricsPort), METRICS_HOST: '' });
    try {
      await expect.poll(() => server.output(), { timeout: 5_000 }).toContain(`metrics on http://127.0.0.1:${metricsPort}/metrics`);
      await fetch(`${server.url}/api/ping`);
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toMatch(/http_requests_total\{endpoint="ping",status="401"\} 1/);
      expect(text).toMatch(/upstream_breaker_state\{upstream="instagram"\} 0/);
      expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
      // Not on the main port: there it would need the admin token, and there is none.
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

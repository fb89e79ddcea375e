import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp, listen, type Listening } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Logger } from '../src/observability/log.js';
import { createAccount, issueKey } from '../src/store/accounts.js';
import { createTestStore } from './support/store.js';

// Requests Node's HTTP parser refuses before the front door sees them still get the contract's
// error envelope (§7), not a bare status line, and echo nothing of what was sent.

let app: App;
let store: Awaited<ReturnType<typeof createTestStore>>;
let listening: Listening;
let port: number;
const logged: string[] = [];

beforeAll(async () => {
  const log: Logger = { info: (m) => void logged.push(m), warn: (m) => void logged.push(m), error: (m) => void logged.push(m) };
  app = await createApp({ ...loadConfig({}), searchIndex: false, searchSnapshotDir: undefined }, { store: (store = await createTestStore()), log, instagram: null });
  listening = await listen(app, 0, '127.0.0.1');
  port = Number(new URL(listening.url).port);
}, 60_000);
afterAll(async () => {
  await listening?.close(0);
  await app?.close();
});

/**
 * Sends raw bytes on a fresh connection; the whole answer once the server closes it. A request the
 * server answers after I/O must say `Connection: close` and keep the socket open (`halfClose`
 * false): Node drops a half-closed connection's pending answer.
 */
function raw(bytes: string, halfClose = true): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => (halfClose ? socket.end(bytes) : socket.write(bytes)));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

function parse(answer: string): { status: number; headers: string; body: unknown } {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(body) };
}

describe('requests the HTTP parser refuses', () => {
  const secret = 'cds_live_secretsecretsecret';

  it('headers past 16 KB: a 400 envelope naming headers, the key not echoed', async () => {
    const answer = await raw(`GET /api/v1/live HTTP/1.1\r\nHost: x\r\nAuthorization: ${secret}\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`);
    const { status, headers, body } = parse(answer);
    expect(status).toBe(400);
    expect(headers).toContain('content-type: application/json');
    expect(body).toEqual({ success: false, code: 400, message: 'Bad Request', errors: [{ field: 'headers', message: 'the request headers exceed 16 KB' }] });
    expect(answer).not.toContain(secret);
    expect(logged.join('\n')).not.toContain(secret);
  });

  it('a malformed request line: a 400 envelope naming the request', async () => {
    const { status, body } = parse(await raw(`NOT HTTP AT ALL\r\nAuthorization: ${secret}\r\n\r\n`));
    expect(status).toBe(400);
    expect(body).toEqual({ success: false, code: 400, message: 'Bad Request', errors: [{ field: 'request', message: 'is not a well-formed HTTP request' }] });
  });

  it('headers not sent in time: a 408 envelope, once the header timeout has passed', async () => {
    const slow = await listen(app, 0, '127.0.0.1', { headersMs: 300, requestMs: 30_000, keepAliveMs: 65_000 });
    try {
      const started = Date.now();
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(slow.url).port), '127.0.0.1', () => socket.write(`GET /api/ping HTTP/1.1\r\nHost: x\r\nAuthorization: ${secret}\r\n`));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
        socket.on('error', reject);
      });
      const waited = Date.now() - started;
      const { status, body } = parse(answer);
      expect(status).toBe(408);
      expect(body).toEqual({ success: false, code: 408, message: 'Request Timeout: the request was not received in time' });
      expect(answer).not.toContain(secret);
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(waited).toBeLessThan(5_000);
    } finally {
      await slow.close(0);
    }
  });

  it('leaves well-formed requests alone', async () => {
    const { status, body } = parse(await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok' });
  });
});

describe('several Authorization headers', () => {
  it('are refused with 401 whichever comes first, where Node alone would serve the first key', async () => {
    const { key } = await issueKey(store.db, await createAccount(store.db, { plan: 'pro' }));
    const { key: other } = await issueKey(store.db, await createAccount(store.db, { plan: 'pro' }));
    const ping = (headers: string) => raw(`GET /api/ping HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`, false).then(parse);
    expect((await ping(`Authorization: ${key}\r\n`)).status).toBe(200);
    for (const headers of [`Authorization: ${key}\r\nAuthorization: cds_bad\r\n`, `authorization: ${key}\r\nAUTHORIZATION: ${other}\r\n`, `Authorization: ${key}\r\nAuthorization: ${key}\r\n`]) {
      const { status, body } = await ping(headers);
      expect(status).toBe(401);
      expect(body).toEqual({ success: false, code: 401, message: 'Unauthorized: send one Authorization header with one API key' });
    }
  });
});

describe('a request target in absolute form', () => {
  it('is routed by its path and query, as HTTP/1.1 requires', async () => {
    const { key } = await issueKey(store.db, await createAccount(store.db, { plan: 'pro' }));
    const { status, body } = parse(await raw(`GET http://127.0.0.1:${port}/api/ping?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${key}\r\nConnection: close\r\n\r\n`, false));
    expect(status).toBe(200);
    expect(body).toMatchObject({ success: true, code: 200, message: 'pong' });
  });
});

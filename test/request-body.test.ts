import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './support/app.js';
import { loadCatalog } from './support/catalog.js';

// Request bodies have a byte limit (MAX_BODY_BYTES) on both doors, also when a client sends no
// Content-Length (chunked): the answer comes once the limit is passed, not after the whole body
// has been buffered. Over a real HTTP server, as a client would send it.

const MAX = 64 * 1024;
// Far more than the loopback socket buffers hold (several MB each way), which the client fills
// before the answer can reach it.
const HOSTILE_BYTES = 256 * 1024 * 1024;

let app: TestApp;
let server: Server;
let port: number;
let key: string;

beforeAll(async () => {
  app = await createTestApp({ maxBodyBytes: MAX });
  await loadCatalog(app.store.db);
  key = await app.newKey({ plan: 'pro', quota: 1000 });
  server = createServer(app.server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
}, 60_000);
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await app?.close();
});

/**
 * POSTs `body` chunked (no Content-Length), then, if `endless`, keeps sending filler until the
 * answer arrives or HOSTILE_BYTES were sent. Resolves with the answer and the bytes sent by then.
 */
async function postChunked(path: string, body: string, endless: boolean): Promise<{ status: number; text: string; sentBeforeAnswer: number }> {
  const outgoing = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'content-type': 'application/json', authorization: key } });
  let sent = 0;
  let sentBeforeAnswer = -1;
  const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
    outgoing.on('response', (response) => {
      sentBeforeAnswer = sent;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.on('error', (error) => (sentBeforeAnswer === -1 ? reject(error) : undefined));
  });
  const write = async (chunk: string) => {
    sent += Buffer.byteLength(chunk);
    if (!outgoing.write(chunk)) await Promise.race([once(outgoing, 'drain'), answered]);
  };
  await write(body);
  if (endless) {
    const filler = ' '.repeat(64 * 1024);
    while (sentBeforeAnswer === -1 && sent < HOSTILE_BYTES && !outgoing.destroyed) await write(filler);
  }
  if (!outgoing.destroyed) outgoing.end();
  const answer = await answered;
  outgoing.destroy();
  return { ...answer, sentBeforeAnswer };
}

describe('request bodies without a Content-Length', () => {
  it('serves a chunked body within the limit on both doors', async () => {
    const rest = await postChunked('/api/v1/search/twitter/user', JSON.stringify({ page: 1 }), false);
    expect(rest.status).toBe(200);
    expect(JSON.parse(rest.text)).toMatchObject({ success: true });
    const graphql = await postChunked('/graphql', JSON.stringify({ query: '{ viewer { plan } }' }), false);
    expect(graphql.status).toBe(200);
    expect(JSON.parse(graphql.text)).toEqual({ data: { viewer: { plan: 'pro' } }, extensions: { cost: { requested: 0, charged: 0, remaining: 900 } } });
  });

  it('refuses an endless REST body once it passes the limit, naming the field', async () => {
    const answer = await postChunked('/api/v1/search/twitter/user', '{"page": 1, "x": "', true);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ success: false, code: 400 });
    expect(answer.text).toContain(`must not exceed ${MAX} bytes`);
    expect(answer.sentBeforeAnswer).toBeLessThan(HOSTILE_BYTES / 4);
  });

  it('refuses an endless GraphQL body with 413 once it passes the limit', async () => {
    const answer = await postChunked('/graphql', '{"query": "{ viewer { plan } }", "x": "', true);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.text).errors[0]).toMatchObject({ message: `request body must not exceed ${MAX} bytes`, extensions: { code: 'BAD_REQUEST' } });
    expect(answer.sentBeforeAnswer).toBeLessThan(HOSTILE_BYTES / 4);
  });

  it('hands the rarer body types to the parsers yoga chose, within the same limit', async () => {
    const post = (body: string) =>
      app.server.fetch('http://test/graphql', { method: 'POST', headers: { 'content-type': 'application/graphql', authorization: key }, body });
    const small = await post('{ viewer { plan } }');
    expect(small.status).toBe(200);
    expect(await small.json()).toEqual({ data: { viewer: { plan: 'pro' } }, extensions: { cost: { requested: 0, charged: 0, remaining: expect.any(Number) } } });
    expect((await post(`{ viewer { plan } } # ${'x'.repeat(MAX)}`)).status).toBe(413);
  });

  it('answers a body type no parser reads with 415 and an error saying what to send', async () => {
    for (const authorization of [key, null]) {
      const answer = await app.server.fetch('http://test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'text/plain', accept: 'application/json', ...(authorization ? { authorization } : {}) },
        body: '{"query": "{ viewer { plan } }"}',
      });
      expect(answer.status).toBe(415);
      const body = await answer.json();
      expect(body.errors[0].extensions.code).toBe('BAD_REQUEST');
      expect(body.errors[0].message).toContain('send it as application/json');
    }
  });

  it('still answers invalid and non-object GraphQL JSON with 400', async () => {
    const invalid = await postChunked('/graphql', '{"query": ', false);
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.text).errors[0].extensions.code).toBe('BAD_REQUEST');
    const scalar = await postChunked('/graphql', '42', false);
    expect(scalar.status).toBe(400);
  });
});

// How a body is sent (media type, charset, content coding), as both doors read it: REST answers
// the contract's 400 naming the header, /graphql a 415.
describe('the way a request body is sent', () => {
  it('reads a media type in any case as the same type on both doors (RFC 9110)', async () => {
    const headers = { 'content-type': 'APPLICATION/JSON; Charset=UTF-8', accept: 'application/json', authorization: key };
    const graphql = await app.server.fetch('http://test/graphql', { method: 'POST', headers, body: '{"query": "{ viewer { plan } }"}' });
    expect(graphql.status).toBe(200);
    expect((await graphql.json()).data).toEqual({ viewer: { plan: 'pro' } });
    const graphqlString = await app.server.fetch('http://test/graphql', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'Application/GraphQL' },
      body: '{ viewer { plan } }',
    });
    expect(graphqlString.status).toBe(200);
    const rest = await app.server.fetch('http://test/api/v1/search/twitter/user', { method: 'POST', headers, body: '{"page_size": 1}' });
    expect(rest.status).toBe(200);
  });

  it('refuses a body under any content coding but identity: it is not decoded', async () => {
    const post = (path: string, contentEncoding: string, body: string | Uint8Array) =>
      app.server.fetch(`http://test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': contentEncoding, accept: 'application/json', authorization: key },
        body,
      });
    const query = '{"query": "{ viewer { plan } }"}';
    // A header that lies (br over a plain body) is refused as well: the body is not what it says.
    for (const [contentEncoding, body] of [['gzip', gzipSync(query)], ['DEFLATE', query], ['br', query], ['identity, gzip', query]] as const) {
      const graphql = await post('/graphql', contentEncoding, body);
      expect(graphql.status, contentEncoding).toBe(415);
      const { errors } = await graphql.json();
      expect(errors[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST', fields: [{ field: 'Content-Encoding' }] } });
      const rest = await post('/api/v1/search/twitter/user', contentEncoding, body === query ? '{}' : gzipSync('{}'));
      expect(rest.status, contentEncoding).toBe(400);
      expect(await rest.json()).toEqual({
        success: false,
        code: 400,
        message: 'Bad Request',
        errors: [{ field: 'Content-Encoding', message: expect.stringContaining('identity') }],
      });
    }
    for (const path of ['/graphql', '/api/v1/search/twitter/user']) expect((await post(path, 'Identity', path === '/graphql' ? query : '{}')).status).toBe(200);
  });

  it('refuses a charset other than UTF-8, the one JSON is exchanged in (RFC 8259)', async () => {
    const post = (path: string, contentType: string, body: string | Uint8Array) =>
      app.server.fetch(`http://test${path}`, { method: 'POST', headers: { 'content-type': contentType, accept: 'application/json', authorization: key }, body });
    const query = '{"query": "{ viewer { plan } }"}';
    const utf16 = (text: string) => new Uint8Array(Buffer.from(text, 'utf16le'));
    for (const contentType of ['application/json; charset=utf-16', 'application/json; charset="UTF-16LE"', 'application/json;charset=latin1']) {
      const graphql = await post('/graphql', contentType, utf16(query));
      expect(graphql.status, contentType).toBe(415);
      expect((await graphql.json()).errors[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST', fields: [{ field: 'Content-Type' }] } });
      const rest = await post('/api/v1/search/twitter/user', contentType, utf16('{}'));
      expect(rest.status, contentType).toBe(400);
      expect((await rest.json()).errors).toEqual([{ field: 'Content-Type', message: expect.stringContaining('utf-8') }]);
    }
    for (const contentType of ['application/json; charset=UTF-8', 'application/json; charset="utf8"', 'application/json; boundary=x']) {
      expect((await post('/graphql', contentType, query)).status, contentType).toBe(200);
    }
  });
});

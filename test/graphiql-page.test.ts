import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHIQL_DEFAULT_QUERY } from '../src/http/graphql.js';
import { createTestApp, type TestApp } from './support/app.js';

// The GraphiQL page without a browser (test/e2e/graphiql.ts drives it in Chromium where there
// is one): its package is loaded on the first request for the page, not at start.

describe('the GraphiQL page', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app?.close());

  it('is served at /graphql to a browser, with our title, example query and key header, and no CDN', async () => {
    for (let n = 0; n < 2; n++) {
      const response = await app.server.fetch('http://test/graphql', { headers: { accept: 'text/html' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      const html = await response.text();
      expect(html).toContain('<title>creator-data GraphQL</title>');
      expect(html).toContain(JSON.stringify(GRAPHIQL_DEFAULT_QUERY).slice(1, 60));
      expect(html).toContain('your API key');
      expect(html).not.toMatch(/<script[^>]+src="https?:\/\//);
    }
  });

  it('is rendered once, sent gzipped to a browser that takes it, and kept by the browser through its ETag', async () => {
    const load = (headers: Record<string, string>) => app.server.fetch('http://test/graphql', { headers: { accept: 'text/html', ...headers } });
    const plain = await load({});
    const html = await plain.text();
    const etag = plain.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);

    const cpuMs: number[] = [];
    for (let n = 0; n < 20; n++) {
      const started = process.cpuUsage();
      const zipped = await load({ 'accept-encoding': 'gzip, deflate, br' });
      expect(zipped.headers.get('content-encoding')).toBe('gzip');
      const bytes = Buffer.from(await zipped.arrayBuffer());
      const used = process.cpuUsage(started);
      cpuMs.push((used.user + used.system) / 1000);
      expect(bytes.length).toBeLessThan(html.length / 3);
      if (n === 0) expect(gunzipSync(bytes).toString('utf8')).toBe(html);
    }
    // Rendered at every load before: ~100 ms of CPU each, 9 MB sent. The median load, so that a
    // collection of the test process's heap (other test files share it) falling in one load does not count.
    expect(cpuMs.sort((a, b) => a - b)[10]).toBeLessThan(20);

    const again = await load({ 'if-none-match': etag! });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('answers HEAD as GET for the page, and never runs an operation for a HEAD', async () => {
    const page = await app.server.fetch('http://test/graphql', { method: 'HEAD', headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const key = await app.newKey({ plan: 'pro', quota: 1000 });
    const query = await app.server.fetch(`http://test/graphql?query=${encodeURIComponent('{ creators(first: 1) { totalCount } }')}`, {
      method: 'HEAD',
      headers: { accept: 'application/json', authorization: key },
    });
    expect(query.status).toBe(405);
    expect((await app.graphql('{ viewer { quotaRemaining } }', {}, key)).body.data.viewer.quotaRemaining).toBe(1000);
  });
});

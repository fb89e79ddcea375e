import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHIQL_DEFAULT_QUERY } from '../src/http/graphql.js';
import { createTestApp, type TestApp } from './support/app.js';

// The GraphiQL page without a browser (test/e2e/graphiql.test.ts drives it in Chromium where there
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
});

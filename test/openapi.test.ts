import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiTypes } from '../scripts/openapi-types.mjs';
import { endpoints } from '../src/access/endpoints.js';
import { creatorSearchBody } from '../src/inputs/creators.js';
import { decodeRestInput, toSnake } from '../src/rest/codecs.js';
import { openApiJson } from '../src/rest/openapi.js';
import { restRoutes } from '../src/rest/routes.js';
import { createTestApp, type TestApp } from './support/app.js';

const committed = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
const document = JSON.parse(openApiJson());
const operationOf = (path: string, method: string) => document.paths[path][method.toLowerCase()];
const bodySchemaOf = (path: string) => operationOf(path, 'POST').requestBody.content['application/json'].schema;

describe('openapi.json', () => {
  it('matches the document the code builds (run `npm run openapi` after changing a route, an input or an item)', () => {
    expect(openApiJson()).toBe(committed('openapi.json'));
  });

  it("src/client/api-types.ts matches the types generated from it (run `npm run openapi`)", async () => {
    expect(await openApiTypes(openApiJson())).toBe(committed('src/client/api-types.ts'));
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every REST route and ping, nothing else, each with its quota cost', () => {
    const documented = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods as object).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual([...restRoutes.map((r) => `${r.method} ${r.path}`), 'GET /api/ping'].sort());
    for (const { method, path, endpoint } of [...restRoutes, { method: 'GET', path: '/api/ping', endpoint: 'ping' as const }]) {
      const operation = operationOf(path, method);
      const cost = endpoints[endpoint].cost;
      expect(operation['x-quota-cost'], path).toBe(cost);
      expect(operation.description, path).toContain(cost === 0 ? 'costs no quota units' : `Costs ${cost} quota unit`);
    }
  });

  it('names the raw-key header scheme for every operation', () => {
    expect(document.components.securitySchemes.ApiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
    expect(document.security).toEqual([{ ApiKey: [] }]);
  });

  it('lists the statuses each operation can answer; 429 and 503 carry Retry-After, every answer X-Request-Id', () => {
    const statuses = (path: string, method: string) => Object.keys(operationOf(path, method).responses);
    for (const route of restRoutes) {
      const expected = ['200', '400', '401', '403', '429', '500', '503'];
      if (route.endpoint === 'realtime.medias') expected.push('404');
      expect(statuses(route.path, route.method).sort(), route.path).toEqual(expected.sort());
    }
    expect(statuses('/api/ping', 'GET').sort()).toEqual(['200', '401', '429', '500', '503']);
    const { responses } = document.components;
    expect(responses.TooManyRequests.headers['Retry-After']).toBeDefined();
    expect(responses.ServiceUnavailable.headers['Retry-After']).toBeDefined();
    expect(document.components.headers['Retry-After'].required).toBe(true);
    for (const response of Object.values<any>(responses)) expect(response.headers['X-Request-Id']).toBeDefined();
    expect(responses.Unauthorized.headers['X-Quota-Remaining']).toBeUndefined();
  });

  it('describes request fields as the wire takes them: snake_case, integer codes, lowercase enums', () => {
    const body = bodySchemaOf('/api/v1/search/twitter/user');
    expect(Object.keys(body.properties)).toEqual(Object.keys(creatorSearchBody.shape).map(toSnake));
    expect(body.additionalProperties).toBe(false);
    const firstOption = (schema: any) => schema.anyOf?.[0] ?? schema;
    expect(firstOption(body.properties.gender)).toMatchObject({ type: 'integer', enum: [0, 1, 2] });
    expect(firstOption(body.properties.verified)).toMatchObject({ type: 'integer', enum: [0, 1] });
    expect(firstOption(body.properties.sort_by)).toMatchObject({ type: 'string', enum: ['relevance', 'follower_count', 'engagement_rate'] });
    expect(firstOption(bodySchemaOf('/api/v1/search/youtube/video').properties.video_type)).toMatchObject({ enum: [1, 2] });
    const parameters = operationOf('/api/v1/instagram/realtime/user/medias', 'GET').parameters;
    expect(parameters.map((p: any) => [p.name, p.in, p.required])).toEqual([
      ['user_id', 'query', true],
      ['offset', 'query', false],
    ]);
  });

  it('request schemas and the service agree on what each field accepts', () => {
    const ajv = new Ajv2020({ strict: false });
    const samples: [string, Record<string, unknown>][] = [
      ['/api/v1/search/twitter/user', { gender: 2, verified: 1, has_email: 0, sort_by: 'engagement_rate', locations: ['US'], page: 2, page_size: 50 }],
      ['/api/v1/search/twitter/user', { gender: 'female' }],
      ['/api/v1/search/twitter/user', { gender: 3 }],
      ['/api/v1/search/twitter/user', { verified: true }],
      ['/api/v1/search/twitter/user', { sort_by: 'FOLLOWER_COUNT' }],
      ['/api/v1/search/twitter/user', { followerCountMin: 1 }],
      ['/api/v1/search/twitter/user', { page_size: 101 }],
      ['/api/v1/search/twitter/user', { query: null, gender: null, category_ids: [100] }],
      ['/api/v1/search/youtube/video', { video_type: 2, categorys: [1, 2] }],
      ['/api/v1/search/youtube/video', { video_type: 0 }],
      ['/api/v1/search/youtube/video', { sort_by: 'relevance' }],
      ['/api/v1/twitch/search/live', { type: 'live', first: 100, language: 'en' }],
      ['/api/v1/twitch/search/live', { type: 'LIVE' }],
      ['/api/v1/twitch/search/live', { first: 0 }],
    ];
    for (const [path, body] of samples) {
      const route = restRoutes.find((r) => r.path === path)!;
      let serviceAccepts = true;
      try {
        decodeRestInput(route.input, body);
      } catch {
        serviceAccepts = false;
      }
      expect(ajv.validate(bodySchemaOf(path), body), `${path} ${JSON.stringify(body)}`).toBe(serviceAccepts);
    }
  });
});

describe('the API description served by the service', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await createTestApp();
  });
  afterAll(() => app?.close());

  const get = (path: string, init: RequestInit = {}) => app.server.fetch(`http://test${path}`, init);

  it('serves openapi.json at /api/openapi.json without a key, charging nothing', async () => {
    const key = await app.newKey({ plan: 'trial' });
    const before = (await app.rest('/api/ping', { key })).headers.get('x-quota-remaining');
    const response = await get('/api/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.text()).toBe(committed('openapi.json'));
    const withKey = await get('/api/openapi.json', { headers: { authorization: key } });
    expect(withKey.status).toBe(200);
    expect((await app.rest('/api/ping', { key })).headers.get('x-quota-remaining')).toBe(before);
  });

  it('answers other methods on /api/openapi.json like any unknown route: 404 in the envelope', async () => {
    const response = await get('/api/openapi.json', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ success: false, code: 404, message: 'Not Found' });
  });

  it('serves /docs and every asset it loads from the service itself, pointing at /api/openapi.json', async () => {
    const response = await get('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    expect(html).toContain("url: '/api/openapi.json'");
    expect(html).toContain('validatorUrl: null');
    expect(html).not.toMatch(/https?:\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    const packageDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    for (const asset of assets) {
      expect(asset).toMatch(/^\/docs\/[\w.-]+$/);
      const served = await get(asset);
      expect(served.status, asset).toBe(200);
      expect(Buffer.from(await served.arrayBuffer()).equals(readFileSync(join(packageDir, asset.slice('/docs/'.length)))), asset).toBe(true);
    }
  });

  it('serves no other file under /docs/', async () => {
    for (const path of ['/docs/package.json', '/docs/swagger-ui-bundle.js.map', '/docs/..%2Fpackage.json', '/docs/%2e%2e/%2e%2e/package.json']) {
      expect((await get(path)).status, path).toBe(404);
    }
  });
});

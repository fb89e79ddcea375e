import { buildClientSchema, getIntrospectionQuery, printSchema, lexicographicSortSchema } from 'graphql';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printSchemaSDL } from '../src/schema/index.js';
import { MAX_DOCUMENT_TOKENS, MAX_SELECTED_FIELDS } from '../src/schema/limits.js';
import { createTestApp, type TestApp } from './support/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await createTestApp();
});
afterAll(() => app?.close());

/** The option sets GraphiQL 3+/4 and graphql-codegen send. */
const graphiqlOptions = {
  descriptions: true,
  directiveIsRepeatable: true,
  specifiedByUrl: true,
  inputValueDeprecation: true,
  schemaDescription: true,
};

describe('introspection, as GraphiQL, graphql-codegen and Apollo tools send it', () => {
  it.each([
    ['the default options', {}],
    ["GraphiQL's options", graphiqlOptions],
  ])('answers the standard introspection query with %s, without a key', async (_name, options) => {
    const response = await app.graphql(getIntrospectionQuery(options), undefined, null);
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    // The answer is a whole schema: a client rebuilds exactly what the server serves.
    const rebuilt = buildClientSchema(response.body.data);
    expect(`${printSchema(lexicographicSortSchema(rebuilt))}\n`).toBe(printSchemaSDL());
  });

  it('answers the introspection query with a key too, and charges nothing', async () => {
    const key = await app.newKey();
    const before = await app.graphql('{ viewer { quotaUsed } }', undefined, key);
    const response = await app.graphql(getIntrospectionQuery(graphiqlOptions), undefined, key);
    expect(response.status).toBe(200);
    expect(response.body.data.__schema.queryType.name).toBe('Query');
    const after = await app.graphql('{ viewer { quotaUsed } }', undefined, key);
    expect(after.body.data.viewer.quotaUsed).toBe(before.body.data.viewer.quotaUsed);
  });
});

describe('hostile introspection stays bounded', () => {
  it('refuses a document that asks for the schema under many aliases', async () => {
    const aliases = Array.from({ length: 50 }, (_, i) => `s${i}: __schema { types { name } }`).join(' ');
    const response = await app.graphql(`{ ${aliases} }`, undefined, null);
    expect(response.body.errors[0].message).toMatch(/__schema or __type at most 2 times/);
    expect(response.body.data).toBeUndefined();
  });

  it('refuses ofType chains deeper than any real type needs', async () => {
    const chain = (depth: number): string => (depth === 0 ? 'name' : `ofType { ${chain(depth - 1)} }`);
    const ok = await app.graphql(`{ __type(name: "Query") { fields { type { ${chain(9)} } } } }`, undefined, null);
    expect(ok.body.errors).toBeUndefined();
    const deep = await app.graphql(`{ __type(name: "Query") { fields { type { ${chain(40)} } } } }`, undefined, null);
    expect(deep.body.errors[0].message).toMatch(/ofType at most 12 levels/);
  });

  it('refuses fields/type cycles (graphql-js MaxIntrospectionDepthRule)', async () => {
    const response = await app.graphql('{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }', undefined, null);
    expect(response.body.errors?.length).toBeGreaterThan(0);
    expect(response.body.data).toBeUndefined();
  });

  it('refuses a fragment that multiplies introspection fields past the budget', async () => {
    // Each level doubles the fields through two spreads of the fragment below it.
    const levels = 12;
    const fragments = Array.from({ length: levels }, (_, i) =>
      i === levels - 1 ? `fragment F${i} on __Type { name kind }` : `fragment F${i} on __Type { a: ofType { ...F${i + 1} } b: ofType { ...F${i + 1} } }`,
    ).join('\n');
    const response = await app.graphql(`{ __type(name: "Query") { ...F0 } }\n${fragments}`, undefined, null);
    expect(response.body.errors.map((e: { message: string }) => e.message).join(' ')).toMatch(/at most 2000 introspection fields/);
  });
});

describe('data beside introspection', () => {
  it('still needs a key and keeps the data limits', async () => {
    const mixed = '{ creators(first: 1) { totalCount } __schema { queryType { name } } }';
    expect((await app.graphql(mixed, undefined, null)).status).toBe(401);
    const answered = await app.graphql(mixed);
    expect(answered.body.errors).toBeUndefined();
    expect(answered.body.data.__schema.queryType.name).toBe('Query');
    const many = Array.from({ length: 11 }, (_, i) => `a${i}: viewer { plan }`).join(' ');
    expect((await app.graphql(`{ ${many} __schema { queryType { name } } }`)).body.errors[0].message).toBe('Bad Request: query an operation may select at most 10 root fields');
  });
});

describe('an operation over any of our bounds', () => {
  const aliases = (count: number, field: string) => Array.from({ length: count }, (_, i) => `a${i}: ${field}`).join(' ');
  const nested = (levels: number, first = 1, leaf = 'nodes { title }') => `{ videos(first: ${first}) ${'{ nodes { channel { videos(first: 100) '.repeat(levels)}{ ${leaf} }${' } } }'.repeat(levels)} }`;
  const bounds: [string, string, string][] = [
    ['root fields', `{ ${aliases(11, 'viewer { plan }')} }`, 'an operation may select at most 10 root fields'],
    ['depth', nested(3), 'an operation may nest at most 8 levels deep'],
    ['fields', `{ ${aliases(MAX_SELECTED_FIELDS + 1, '__typename')} }`, `an operation may select at most ${MAX_SELECTED_FIELDS} fields`],
    ['introspection roots', `{ ${aliases(3, '__schema { queryType { name } }')} }`, 'an operation may ask for __schema or __type at most 2 times'],
    ['brackets', `{ viewer ${'{ plan '.repeat(70)}${'}'.repeat(70)} }`, 'nests brackets more than 64 levels deep'],
    ['tokens', `{ ${aliases(MAX_DOCUMENT_TOKENS / 3 + 10, '__typename')} }`, `has more than ${MAX_DOCUMENT_TOKENS} tokens`],
    ['price', nested(2, 100, 'totalCount'), 'the operation is priced at 10200 units, over the bound of 10000 units per operation'],
  ];

  it.each(bounds)('is a 400 naming query under either media type, as the price bound is (%s)', async (_bound, query, said) => {
    const key = await app.newKey();
    for (const accept of ['application/json', 'application/graphql-response+json']) {
      const response = await app.server.fetch('http://test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: key },
        body: JSON.stringify({ query }),
      });
      const body = await response.json();
      expect([response.status, body.errors], accept).toEqual([400, [expect.objectContaining({ message: `Bad Request: query ${said}`, extensions: { code: 'BAD_REQUEST', fields: [{ field: 'query', message: said }] } })]]);
    }
  });
});

describe('documents nested past any real operation', () => {
  const n = 3_000;
  const documents: [string, string][] = [
    ['input objects', `{ creators(first: 1, filter: ${'{query: '.repeat(n)}"x"${'}'.repeat(n)}) { totalCount } }`],
    ['lists', `{ creators(first: 1, filter: {locations: ${'['.repeat(n)}"US"${']'.repeat(n)}}) { totalCount } }`],
    ['selections', `{ viewer ${'{ plan '.repeat(n)}${'}'.repeat(n)} }`],
    ['introspection', `{ __schema ${'{ types '.repeat(n)}${'}'.repeat(n)} }`],
    ['closers first', `${'}'.repeat(n)} { creators(first: 1, filter: ${'{query: '.repeat(n)}"x"${'}'.repeat(n)}) { totalCount } }`],
  ];

  it.each(documents)('are a 400 naming query, with a key or without one (%s)', async (_shape, document) => {
    const key = await app.newKey();
    for (const who of [key, null]) {
      const { body } = await app.graphql(document, undefined, who);
      // A stack overflow in the parser answered INTERNAL before.
      expect(body.errors, `${who ? 'with' : 'without'} a key`).toEqual([
        expect.objectContaining({ extensions: { code: 'BAD_REQUEST', fields: [{ field: 'query', message: 'nests brackets more than 64 levels deep' }] } }),
      ]);
    }
  });

  it('count brackets only outside strings and comments', async () => {
    const key = await app.newKey();
    const brackets = '{['.repeat(100);
    const document = `# ${brackets}\n{ a: creators(first: 1, filter: {query: "${brackets}"}) { totalCount } b: creators(first: 1, filter: {query: """${brackets}"""}) { totalCount } }`;
    const { body } = await app.graphql(document, undefined, key);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ a: { totalCount: 0 }, b: { totalCount: 0 } });
  });
});

describe('documents large enough to cost the server before any key is checked', () => {
  const aliases = (count: number, field: string, from = 0) => Array.from({ length: count }, (_, i) => `a${from + i}: ${field}`).join(' ');

  it('are refused past MAX_DOCUMENT_TOKENS while parsing, with a key or without one', async () => {
    const document = `{ ${aliases(MAX_DOCUMENT_TOKENS / 3 + 10, '__typename')} }`;
    for (const who of [await app.newKey(), null]) {
      const { body } = await app.graphql(document, undefined, who);
      expect(body.errors).toEqual([
        expect.objectContaining({ extensions: { code: 'BAD_REQUEST', fields: [{ field: 'query', message: `has more than ${MAX_DOCUMENT_TOKENS} tokens` }] } }),
      ]);
    }
  });

  it("meet our bounds before graphql's rules that compare pairs of fields", async () => {
    // 900 selections of one response key (within the token bound): the overlapping-fields rule compares every pair.
    const document = `{ ${Array.from({ length: 900 }, () => 'a: categories(level: 1) { name }').join(' ')} }`;
    const key = await app.newKey();
    const cpuMs = { keyed: [] as number[], keyless: [] as number[] };
    for (const who of [null, key, null, key, null, key]) {
      const started = process.cpuUsage();
      const { body } = await app.graphql(document, undefined, who);
      const used = process.cpuUsage(started);
      // Without a key the answer is a 401 (decisions §4), but the document was validated first.
      expect(body.errors).toContainEqual(
        expect.objectContaining({ message: who ? `Bad Request: query an operation may select at most ${MAX_SELECTED_FIELDS} fields` : 'Unauthorized: missing Authorization header' }),
      );
      cpuMs[who ? 'keyed' : 'keyless'].push((used.user + used.system) / 1000);
    }
    // 0.2–0.4 s each with graphql's rules run first; ours alone take a few ms. The median of three,
    // so that a collection of the test process's heap (other test files share it) does not count.
    for (const tries of Object.values(cpuMs)) expect(tries.sort((a, b) => a - b)[1]).toBeLessThan(100);
  });

  it('are not all kept: distinct large documents sent without a key leave the heap as it was', async () => {
    // Each ~40 KB, ~9,000 tokens: within the token bound, refused by the field bound, and a tree of
    // ~3 MB each that yoga's default cache (1,024 documents of any size) kept for an hour.
    // Measured after full collections: what is kept, not garbage a starved collector left behind
    // (under the whole suite's load the heap ran 160 MB over with nothing kept).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 200; i++) {
      const { body } = await app.graphql(`{ ${aliases(2_900, '__typename', i * 3_000)} }`, undefined, null);
      expect(body.errors?.[0]?.message).toBe(`Bad Request: query an operation may select at most ${MAX_SELECTED_FIELDS} fields`);
    }
    gc();
    const grownMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
    expect(grownMb).toBeLessThan(60);
  });
});

describe('work without a key shares a CPU budget', () => {
  let budgeted: TestApp;
  beforeAll(async () => {
    // A budget so small that one uncached introspection spends it for seconds.
    budgeted = await createTestApp({ keylessCpuMsPerSecond: 1, keylessCpuBurstMs: 1 });
  });
  afterAll(() => budgeted?.close());

  it("answers the tools' standard introspection from a cache, other keyless introspection 429 past the budget, and keyed work as ever", async () => {
    const standard = getIntrospectionQuery(graphiqlOptions);
    expect((await budgeted.graphql(standard, undefined, null)).body.errors).toBeUndefined();
    // The budget is spent now; the same query again is served from the cache, as often as asked.
    for (let n = 0; n < 3; n++) {
      const again = await budgeted.graphql(standard, undefined, null);
      expect(again.status).toBe(200);
      expect(again.body.data.__schema.queryType.name).toBe('Query');
    }
    const nested = await budgeted.graphql('{ __schema { types { name fields { name type { name fields { name } } } } } }', undefined, null);
    expect(nested.status).toBe(429);
    expect(Number(nested.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(nested.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'RATE_LIMITED' } })]);

    const key = await budgeted.newKey();
    const data = await budgeted.graphql('{ creators(first: 1) { totalCount } }', undefined, key);
    expect(data.status).toBe(200);
    expect(data.body.errors).toBeUndefined();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/observability/log.js';
import { createTestApp, type TestApp } from './support/app.js';

// The audit trail of key administration: every admin mutation that changed something writes one
// `admin` log line (action, key, account, a new account's settings), and nothing else does.

const TOKEN = 'audit-admin-token';
const ADMIN = `Admin ${TOKEN}`;
let app: TestApp;
const lines: Record<string, any>[] = [];
/** Every line of the file's tests, for the check that no secret reached one. */
const everything: string[] = [];
/** Every raw key the mutations handed out: none may reach a log line. */
const secrets: string[] = [];

beforeAll(async () => {
  app = await createTestApp({ adminToken: TOKEN });
  const write = (line: string) => {
    everything.push(line);
    lines.push(JSON.parse(line));
  };
  app.services.log = createLogger({ write } as unknown as NodeJS.WritableStream);
});
afterAll(() => app?.close());

const adminLines = () => lines.filter((line) => line.message === 'admin');
/** An audit line without pino's own fields: what the mutation said, and nothing more. */
const said = ({ level, time, pid, message, ...rest }: Record<string, any>) => {
  expect([level, typeof time, typeof pid, message]).toEqual(['info', 'string', 'number', 'admin']);
  return rest;
};

const CREATE = 'mutation($input: AdminNewKeyInput!) { adminCreateKey(input: $input) { id accountId key } }';
const ROTATE = 'mutation($id: String!) { adminRotateKey(id: $id) { id accountId key } }';
const status = (name: string) => `mutation($id: String!) { ${name}(id: $id) }`;

/** Runs one admin operation and returns its answer and the audit lines it wrote. */
async function run(query: string, variables: Record<string, unknown>, authorization: string | null = ADMIN) {
  lines.length = 0;
  const answer = await app.graphql(query, variables, authorization);
  const data = answer.body.data ?? {};
  for (const value of Object.values(data)) if (value && typeof value === 'object' && 'key' in value) secrets.push((value as { key: string }).key);
  // Each line names its request, the X-Request-Id the operator's client was answered with.
  const audit = adminLines().map(({ requestId, ...line }) => {
    expect(requestId).toBe(answer.headers.get('x-request-id'));
    return line;
  });
  return { ...answer, audit };
}

async function newIssuedKey(input: Record<string, unknown> = {}) {
  const created = await run(CREATE, { input });
  expect(created.body.errors).toBeUndefined();
  return created.body.data.adminCreateKey as { id: string; accountId: string; key: string };
}

describe('the audit line of each admin mutation', () => {
  it('key.create with a new account: the key, the account and the settings given', async () => {
    const created = await run(CREATE, { input: { plan: 'pro', quota: 300, rate: 7, expires: '2030-01-01' } });
    expect(created.body.errors).toBeUndefined();
    const issued = created.body.data.adminCreateKey;
    expect(created.audit.map(said)).toEqual([
      {
        action: 'key.create',
        keyId: issued.id,
        accountId: issued.accountId,
        accountCreated: true,
        settings: { plan: 'pro', quota: 300, rate: 7, expires: '2030-01-01T00:00:00.000Z' },
      },
    ]);
    // The request line follows, as for any request.
    expect(lines.filter((line) => line.message === 'request').map((line) => line.status)).toEqual([200]);
  });

  it('key.create with defaults: a new account, no settings given', async () => {
    const created = await run(CREATE, { input: {} });
    const issued = created.body.data.adminCreateKey;
    expect(created.audit.map(said)).toEqual([{ action: 'key.create', keyId: issued.id, accountId: issued.accountId, accountCreated: true, settings: {} }]);
  });

  it('key.create on an existing account: no settings, the account not created', async () => {
    const first = await newIssuedKey({ plan: 'trial' });
    const second = await run(CREATE, { input: { account: first.accountId } });
    const issued = second.body.data.adminCreateKey;
    expect(issued.accountId).toBe(first.accountId);
    expect(second.audit.map(said)).toEqual([{ action: 'key.create', keyId: issued.id, accountId: first.accountId, accountCreated: false }]);
  });

  it('key.rotate, key.disable, key.enable and key.delete: the key and its account', async () => {
    const issued = await newIssuedKey({ plan: 'pro' });
    const rotated = await run(ROTATE, { id: issued.id });
    expect(rotated.body.data.adminRotateKey.id).toBe(issued.id);
    expect(rotated.audit.map(said)).toEqual([{ action: 'key.rotate', keyId: issued.id, accountId: issued.accountId }]);
    for (const [name, action] of [
      ['adminDisableKey', 'key.disable'],
      ['adminEnableKey', 'key.enable'],
      ['adminDeleteKey', 'key.delete'],
    ]) {
      const changed = await run(status(name), { id: issued.id });
      expect(changed.body.data[name], name).toBe(true);
      expect(changed.audit.map(said), name).toEqual([{ action, keyId: issued.id, accountId: issued.accountId }]);
    }
  });

  it('several mutations in one operation: one line each, in the order they ran', async () => {
    const issued = await newIssuedKey();
    const both = await run('mutation($id: String!) { off: adminDisableKey(id: $id) on: adminEnableKey(id: $id) }', { id: issued.id });
    expect(both.body.data).toEqual({ off: true, on: true });
    expect(both.audit.map(said)).toEqual([
      { action: 'key.disable', keyId: issued.id, accountId: issued.accountId },
      { action: 'key.enable', keyId: issued.id, accountId: issued.accountId },
    ]);
  });
});

describe('refused or failed mutations write no audit line', () => {
  it('without the admin token: none, an API key, a wrong token (401)', async () => {
    const issued = await newIssuedKey();
    for (const authorization of [null, 'Admin wrong', TOKEN, issued.key]) {
      for (const [query, variables] of [
        [CREATE, { input: {} }],
        [ROTATE, { id: issued.id }],
        [status('adminDisableKey'), { id: issued.id }],
        [status('adminDeleteKey'), { id: issued.id }],
      ] as const) {
        const refused = await run(query, variables, authorization);
        expect(refused.status).toBe(401);
        expect(refused.audit).toEqual([]);
        expect(lines.map((line) => [line.message, line.status])).toEqual([['request', 401]]);
      }
    }
  });

  it('bad input, an unknown plan, account or key, a deleted key (400, 404)', async () => {
    const existing = await newIssuedKey();
    const deleted = await newIssuedKey();
    expect((await run(status('adminDeleteKey'), { id: deleted.id })).audit).toHaveLength(1);
    const attempts: [string, Record<string, unknown>, string][] = [
      [CREATE, { input: { quota: -1 } }, 'BAD_REQUEST'],
      [CREATE, { input: { rate: 0 } }, 'BAD_REQUEST'],
      [CREATE, { input: { expires: 'someday' } }, 'BAD_REQUEST'],
      [CREATE, { input: { plan: 'gold' } }, 'BAD_REQUEST'],
      [CREATE, { input: { account: existing.accountId, plan: 'pro' } }, 'BAD_REQUEST'],
      [CREATE, { input: { account: 'acct_nobody' } }, 'NOT_FOUND'],
      [ROTATE, { id: 'key_nobody' }, 'NOT_FOUND'],
      [ROTATE, { id: deleted.id }, 'NOT_FOUND'],
      [status('adminDisableKey'), { id: 'key_nobody' }, 'NOT_FOUND'],
      [status('adminEnableKey'), { id: deleted.id }, 'NOT_FOUND'],
      [status('adminDeleteKey'), { id: deleted.id }, 'NOT_FOUND'],
    ];
    for (const [query, variables, code] of attempts) {
      const refused = await run(query, variables);
      expect(refused.body.errors?.[0]?.extensions?.code, JSON.stringify(variables)).toBe(code);
      expect(refused.audit, JSON.stringify(variables)).toEqual([]);
    }
  });

  it('a mutation that does not validate', async () => {
    const invalid = await run('mutation { adminDisableKey }', {});
    expect(invalid.body.errors[0].message).toMatch(/argument "id"/);
    expect(invalid.audit).toEqual([]);
  });
});

describe('secrets', () => {
  it('no log line of this file holds a raw key the mutations handed out, nor the admin token', async () => {
    // A create and a rotate of its own, so that the check stands when this test runs alone.
    const issued = await newIssuedKey({ plan: 'pro' });
    await run(ROTATE, { id: issued.id });
    expect(secrets.length).toBeGreaterThanOrEqual(2);
    expect(everything.filter((line) => line.includes('"message":"admin"')).length).toBeGreaterThanOrEqual(2);
    const text = everything.join('\n');
    for (const secret of [...secrets, TOKEN]) {
      expect(text).not.toContain(secret);
      // Without its `cds_` prefix too: a line that held the key under another name would show it.
      expect(text).not.toContain(secret.replace(/^cds_/, ''));
    }
  });
});

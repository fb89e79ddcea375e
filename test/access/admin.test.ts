import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

const ADMIN = 'Admin s3cret-admin-token';
let admin: TestApp;
let plain: TestApp;

beforeAll(async () => {
  admin = await createTestApp({ adminToken: 's3cret-admin-token' });
  plain = await createTestApp();
});
afterAll(async () => {
  await admin?.close();
  await plain?.close();
});

const create = `mutation($input: AdminNewKeyInput!) { adminCreateKey(input: $input) { id accountId key } }`;

describe('administration over GraphQL', () => {
  it('does not exist in the schema without ADMIN_TOKEN', async () => {
    const { body } = await plain.graphql('{ __schema { mutationType { name } queryType { fields { name } } } }', {}, null);
    expect(body.data.__schema.mutationType).toBeNull();
    expect(body.data.__schema.queryType.fields.map((f: { name: string }) => f.name)).not.toContain('adminUsage');
    const attempt = await plain.graphql(create, { input: {} }, ADMIN);
    expect(attempt.body.data).toBeUndefined();
    expect(attempt.body.errors[0].message).toMatch(/Unknown type "AdminNewKeyInput"|mutation/);
  });

  it('needs Authorization: Admin <token>; a key or a wrong token is 401', async () => {
    for (const header of [null, 'Admin wrong', 's3cret-admin-token', await admin.newKey()]) {
      const { status, body } = await admin.graphql(create, { input: {} }, header);
      expect(status).toBe(401);
      expect(body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
  });

  it('creates accounts and keys, rotates, disables, enables, deletes, and reads usage', async () => {
    const created = await admin.graphql(create, { input: { plan: 'pro', quota: 300 } }, ADMIN);
    expect(created.body.errors).toBeUndefined();
    const issued = created.body.data.adminCreateKey;
    expect(issued.key).toMatch(/^cds_/);
    const search = () => admin.rest('/api/v1/search/twitter/user', { body: {}, key: issued.key });
    expect((await search()).status).toBe(200);

    const usage = await admin.graphql('query($id: String) { adminUsage(accountId: $id) { plan quotaAllowance quotaUsed quotaRemaining } }', { id: issued.accountId }, ADMIN);
    expect(usage.body.data.adminUsage).toEqual([{ plan: 'pro', quotaAllowance: 300, quotaUsed: 100, quotaRemaining: 200 }]);

    const second = await admin.graphql(create, { input: { account: issued.accountId } }, ADMIN);
    expect(second.body.data.adminCreateKey.accountId).toBe(issued.accountId);

    const mutate = (name: string) => admin.graphql(`mutation($id: String!) { ${name}(id: $id) }`, { id: issued.id }, ADMIN);
    expect((await mutate('adminDisableKey')).body.data.adminDisableKey).toBe(true);
    expect((await search()).status).toBe(401);
    expect((await mutate('adminEnableKey')).body.data.adminEnableKey).toBe(true);
    expect((await search()).status).toBe(200);

    const rotated = await admin.graphql('mutation($id: String!) { adminRotateKey(id: $id) { key } }', { id: issued.id }, ADMIN);
    expect((await search()).status).toBe(401);
    expect((await admin.rest('/api/ping', { key: rotated.body.data.adminRotateKey.key })).status).toBe(200);
    expect((await mutate('adminDeleteKey')).body.data.adminDeleteKey).toBe(true);
    expect((await admin.rest('/api/ping', { key: rotated.body.data.adminRotateKey.key })).status).toBe(401);
    const missing = await mutate('adminEnableKey');
    expect(missing.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });

  it('leaves no account without a key when the key cannot be written', async () => {
    const db = admin.store.db;
    const accounts = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM accounts`.execute(db)).rows[0].n);
    const before = await accounts();
    await sql`CREATE FUNCTION refuse_keys() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'keys refused'; END $$`.execute(db);
    await sql`CREATE TRIGGER refuse_keys BEFORE INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION refuse_keys()`.execute(db);
    try {
      const refused = await admin.graphql(create, { input: { plan: 'pro' } }, ADMIN);
      expect(refused.body.errors[0].extensions.code).toBe('INTERNAL');
      expect(JSON.stringify(refused.body)).not.toContain('keys refused');
    } finally {
      await sql`DROP TRIGGER refuse_keys ON api_keys`.execute(db);
      await sql`DROP FUNCTION refuse_keys()`.execute(db);
    }
    expect(await accounts()).toBe(before);
    expect((await admin.graphql(create, { input: { plan: 'pro' } }, ADMIN)).body.data.adminCreateKey.key).toMatch(/^cds_/);
    expect(await accounts()).toBe(before + 1);
  });

  it('validates its input and refuses to mix administration with data fields', async () => {
    const bad = await admin.graphql(create, { input: { quota: -1 } }, ADMIN);
    expect(bad.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    const unknownPlan = await admin.graphql(create, { input: { plan: 'gold' } }, ADMIN);
    expect(unknownPlan.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    // The new account's settings with an existing account were ignored: a key for it, nothing said.
    const existing = (await admin.graphql(create, { input: {} }, ADMIN)).body.data.adminCreateKey.accountId;
    const withAccount = await admin.graphql(create, { input: { account: existing, plan: 'trial', quota: 1 } }, ADMIN);
    expect(withAccount.body.data).toBeNull();
    expect(withAccount.body.errors[0].extensions).toMatchObject({
      code: 'BAD_REQUEST',
      fields: [
        { field: 'input.plan', message: 'sets up a new account, so it cannot go with account' },
        { field: 'input.quota', message: 'sets up a new account, so it cannot go with account' },
      ],
    });
    const mixed = await admin.graphql('{ adminUsage { plan } creators(first: 1) { totalCount } }', {}, ADMIN);
    expect(mixed.body.data).toBeUndefined();
    expect(mixed.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });
});

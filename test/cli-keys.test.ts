import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { findActiveKey, hashKey } from '../src/store/accounts.js';
import { openStore } from '../src/store/connect.js';
import { type CliResult, cliStore, runCli } from './support/cli.js';
import { createEmptyDatabase } from './support/store.js';

// The CLI in its own process against a real store: the test's PostgreSQL database, or an
// embedded folder that the test opens itself once the command has exited.
const store = cliStore('cds-cli-');

/** What every command of this file printed, for the check that a raw key is printed only once. */
const printed: CliResult[] = [];
const cli = async (...args: string[]) => {
  const result = await runCli(args, store.env);
  printed.push(result);
  return result;
};

describe('creator-data keys and usage', { timeout: 120_000 }, () => {
  it('creates, lists, rotates, disables, enables and deletes keys; usage shows the allowance', async () => {
    const created = await cli('keys', 'create', '--plan', 'pro', '--quota', '500', '--rate', '7', '--json');
    expect(created.code, created.stderr).toBe(0);
    const issued = JSON.parse(created.stdout) as { id: string; account_id: string; key: string };
    expect(Object.keys(issued).sort()).toEqual(['account_id', 'id', 'key']);
    expect(issued.key).toMatch(/^cds_[A-Za-z0-9_-]{32}$/);

    const plain = await cli('keys', 'create', '--account', issued.account_id);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/^cds_[A-Za-z0-9_-]{32}\n$/);

    const owner = await store.withDb(({ db }) => findActiveKey(db, hashKey(issued.key)));
    expect(owner).toMatchObject({ keyId: issued.id, accountId: issued.account_id, planId: 'pro', ratePerSecond: 7, burst: 14 });

    const listed = await cli('keys', 'list', '--account', issued.account_id);
    expect(listed.stdout).toContain(issued.id);
    expect(listed.stdout).not.toContain(issued.key);
    expect(JSON.parse(listed.stdout)).toHaveLength(2);
    // One spelling in every JSON the CLI prints: the contract's snake_case.
    expect(Object.keys(JSON.parse(listed.stdout)[0])).toEqual(['id', 'account_id', 'prefix', 'status', 'created_at', 'rotated_at']);

    const usage = await cli('usage', '--account', issued.account_id);
    expect(JSON.parse(usage.stdout)).toEqual({ account_id: issued.account_id, plan: 'pro', quota_allowance: 500, quota_used: 0, quota_remaining: 500, subscription_ends_at: null });

    const rotated = await cli('keys', 'rotate', issued.id);
    const newKey = rotated.stdout.trim();
    expect(newKey).toMatch(/^cds_/);
    expect(newKey).not.toBe(issued.key);
    await store.withDb(async ({ db }) => {
      expect(await findActiveKey(db, hashKey(issued.key))).toBeNull();
      expect(await findActiveKey(db, hashKey(newKey))).not.toBeNull();
    });

    expect((await cli('keys', 'disable', issued.id)).code).toBe(0);
    await store.withDb(async ({ db }) => expect(await findActiveKey(db, hashKey(newKey))).toBeNull());
    expect((await cli('keys', 'enable', issued.id)).code).toBe(0);
    await store.withDb(async ({ db }) => expect(await findActiveKey(db, hashKey(newKey))).not.toBeNull());
    expect((await cli('keys', 'delete', issued.id)).code).toBe(0);
    await store.withDb(async ({ db }) => expect(await findActiveKey(db, hashKey(newKey))).toBeNull());
    expect((await cli('keys', 'enable', issued.id)).code).toBe(2);

    // A raw key is printed once, on stdout, by the command that made it: no other output of list,
    // usage, rotate, disable, enable or delete (nor any stderr) holds it, with or without `cds_`.
    for (const [secret, by] of [
      [issued.key, created],
      [plain.stdout.trim(), plain],
      [newKey, rotated],
    ] as const) {
      expect(printed.filter((result) => result.stderr.includes(secret.slice(4)))).toEqual([]);
      expect(printed.filter((result) => result.stdout.includes(secret.slice(4)))).toEqual([by]);
    }
  });

  it('creates a trial account by default, with a subscription end', async () => {
    const created = await cli('keys', 'create', '--expires', '2030-01-01', '--json');
    const issued = JSON.parse(created.stdout);
    const usage = JSON.parse((await cli('usage', '--account', issued.account_id)).stdout);
    expect(usage).toMatchObject({ plan: 'trial', quota_allowance: 10_000, subscription_ends_at: '2030-01-01T00:00:00.000Z' });
  });

  it('rejects bad flags with exit code 2 and a message naming the flag', async () => {
    // Refused before any store is opened (an embedded folder is not even created), so these run side by side.
    const untouched = join(tmpdir(), `cds-never-${process.pid}-${Date.now()}`);
    const unopened = [['keys', 'create', '--quota', 'lots'], ['keys', 'rotate'], ['keys', 'list', '--bogus'], ['usage', '--bogus'], ['keys', 'nope'], ['keys', 'create', '--bogus']];
    // A word where only flags go ('pro' for '--plan pro') is refused, not ignored into a trial key.
    const strayWords = [['keys', 'create', 'pro'], ['keys', 'list', 'acct_x']];
    const [badQuota, ...refusals] = await Promise.all([
      cli('keys', 'create', '--quota', 'lots'),
      ...unopened.map((args) => runCli(args, { DATABASE_URL: '', DATA_DIR: untouched })),
      ...strayWords.map((args) => runCli(args, { DATABASE_URL: '', DATA_DIR: untouched })),
    ]);
    expect(badQuota.code).toBe(2);
    expect(badQuota.stderr).toContain('--quota');
    unopened.forEach((args, i) => expect(refusals[i].code, args.join(' ')).toBe(2));
    strayWords.forEach((args, i) => {
      const refused = refusals[unopened.length + i];
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toContain(`unexpected argument "${args[2]}"`);
    });
    expect(existsSync(untouched)).toBe(false);

    // These reach the store (one command at a time: the embedded store is locked to one process).
    const badPlan = await cli('keys', 'create', '--plan', 'gold');
    expect(badPlan.code).toBe(2);
    expect(badPlan.stderr).toContain('gold');
    expect((await cli('keys', 'rotate', 'key_nope')).code).toBe(2);
    // An id naming no account is said as `usage` says it, not listed as no keys.
    for (const args of [['keys', 'list', '--account', 'acct_nosuch'], ['usage', '--account', 'acct_nosuch']]) {
      const unknown = await cli(...args);
      expect(unknown, args.join(' ')).toMatchObject({ code: 2, stdout: '', stderr: 'creator-data: no account acct_nosuch\n' });
    }
    // A folder given to import: a clear refusal, no stack trace.
    const folder = await cli('import', 'creators', tmpdir());
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain('EISDIR');
    expect(folder.stderr).not.toMatch(/\n\s+at /);
  });

  it('migrate says which migrations it applied to a new store, then that it is up to date, then that a newer build migrated it', async () => {
    // A new database on the test server, else a new embedded folder.
    const serverUrl = process.env.TEST_DATABASE_URL;
    const database = serverUrl ? await createEmptyDatabase(serverUrl) : null;
    const fresh = database ? null : mkdtempSync(join(tmpdir(), 'cds-migrate-'));
    const env = database ? { DATABASE_URL: database.url, DATA_DIR: '' } : { DATA_DIR: join(fresh!, 'data'), DATABASE_URL: '' };
    try {
      const first = await runCli(['migrate'], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/^applied: \S+/m);
      const again = await runCli(['migrate'], env);
      expect(again.stderr).toContain('already up to date');

      // A deploy rolled back: a newer build migrated the database since (docs/operations.md).
      const store = await openStore(database ? { databaseUrl: database.url } : { dataDir: env.DATA_DIR });
      try {
        await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('2099_01_01_0001_a_newer_build', ${new Date().toISOString()})`.execute(store.db);
      } finally {
        await store.close();
      }
      const older = await runCli(['migrate'], env);
      expect(older.code, older.stderr).toBe(0);
      expect(older.stderr).toBe(
        'creator-data: the database was migrated by a newer build: running on it without migrating (2099_01_01_0001_a_newer_build)\nalready up to date\n',
      );
    } finally {
      if (fresh) rmSync(fresh, { recursive: true, force: true });
      await database?.drop();
    }
  });
});

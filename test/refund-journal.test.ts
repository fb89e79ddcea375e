import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRefundJournal } from '../src/access/refund-journal.js';
import { createRefunds } from '../src/access/refunds.js';
import { createAccount, REFUND_NOTES_KEPT_MS } from '../src/store/accounts.js';
import { openStore, type Store } from '../src/store/connect.js';
import { interval } from '../src/store/values.js';
import { createTestStore, type TestStore } from './support/store.js';

// Refunds owed while the database is away must outlive the process that owes them: a process
// stopped or killed during the outage leaves them in its journal file, and the next start on the
// same database writes them, each once. "Away" is a real connection refused (port 1).

let store: TestStore;
let away: Store;
beforeAll(async () => {
  store = await createTestStore();
  away = await openStore({ databaseUrl: 'postgres://postgres@127.0.0.1:1/away', connectTimeoutMs: 200 });
});
afterAll(async () => {
  await away?.close();
  await store?.close();
});

const noReports = {
  onStillOwed: () => {},
  onExpired: (owed: Map<string, number>) => expect.fail(`refunds expired: ${JSON.stringify([...owed])}`),
  onError: (error: unknown) => expect.fail(String(error)),
};
const owedFiles = (folder: string) => readdirSync(folder).filter((name) => name.startsWith('owed-'));

async function accountUsing(units: number): Promise<string> {
  const id = await createAccount(store.db, { plan: 'pro' });
  await store.db.updateTable('accounts').set({ quota_used: units }).where('id', '=', id).execute();
  return id;
}
async function used(accountId: string): Promise<number> {
  const row = await store.db.selectFrom('accounts').select('quota_used').where('id', '=', accountId).executeTakeFirstOrThrow();
  return Number(row.quota_used);
}
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('refunds owed during an outage', () => {
  it('outlive the process that owed them: the next start on the same database writes them, once', { timeout: 30_000 }, async () => {
    const folder = mkdtempSync(join(tmpdir(), 'refunds-'));
    try {
      const account = await accountUsing(1_000);
      const stillOwed: Map<string, number>[] = [];
      const during = createRefunds(away.db, { ...noReports, journal: openRefundJournal(folder, 'aaaa'), onStillOwed: (owed) => stillOwed.push(owed) });
      await during.refund(account, 100);
      await during.refund(account, 50);
      expect(during.pending()).toBe(150);
      // On disk as soon as owed: a process killed now loses nothing.
      expect(owedFiles(folder)).toHaveLength(1);
      await during.flush();
      expect(stillOwed).toEqual([new Map([[account, 150]])]);
      const [left] = owedFiles(folder);
      const kept = readFileSync(join(folder, left));

      // Another database's refunds in the same folder, and a file no one can read: neither is touched.
      writeFileSync(join(folder, 'owed-bbbb-00000000-0000-0000-0000-000000000000.json'), JSON.stringify([{ id: 'x', accountId: account, units: 7 }]));
      writeFileSync(join(folder, 'owed-aaaa-11111111-1111-1111-1111-111111111111.json'), '{not json');

      const next = createRefunds(store.db, { ...noReports, journal: openRefundJournal(folder, 'aaaa') });
      await until('the refunds taken over to be written', async () => (await used(account)) === 850 && next.pending() === 0);
      expect(owedFiles(folder).sort()).toEqual([
        'owed-aaaa-11111111-1111-1111-1111-111111111111.json',
        'owed-bbbb-00000000-0000-0000-0000-000000000000.json',
      ]);

      // The same file again (a process still running when it was taken, say): nothing given back twice.
      writeFileSync(join(folder, left), kept);
      const again = createRefunds(store.db, { ...noReports, journal: openRefundJournal(folder, 'aaaa') });
      await until('the replayed file to be settled', () => again.pending() === 0 && !owedFiles(folder).includes(left));
      await sleep(200);
      expect(await used(account)).toBe(850);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('a refund owed to an account deleted since is dropped, and the others are written', { timeout: 30_000 }, async () => {
    const folder = mkdtempSync(join(tmpdir(), 'refunds-'));
    try {
      const kept = await accountUsing(500);
      const deleted = await accountUsing(500);
      const during = createRefunds(away.db, { ...noReports, journal: openRefundJournal(folder, 'cccc') });
      await during.refund(kept, 20);
      await during.refund(deleted, 30);
      await store.db.deleteFrom('accounts').where('id', '=', deleted).execute();
      const next = createRefunds(store.db, { ...noReports, journal: openRefundJournal(folder, 'cccc') });
      await until('the refunds to be settled', () => next.pending() === 0);
      expect(await used(kept)).toBe(480);
      expect(owedFiles(folder)).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('without a journal, a refund the database takes is written at once and nothing stays owed', { timeout: 30_000 }, async () => {
    const account = await accountUsing(300);
    const refunds = createRefunds(store.db, noReports);
    await refunds.refund(account, 100);
    expect(refunds.pending()).toBe(0);
    expect(await used(account)).toBe(200);
  });

  it('one a journal held longer than written refunds are recorded is reported, not written; the rest is', { timeout: 30_000 }, async () => {
    // Its id may have been written and pruned since (REFUND_NOTES_KEPT_MS): writing it could refund twice.
    const folder = mkdtempSync(join(tmpdir(), 'refunds-'));
    try {
      const account = await accountUsing(1_000);
      const day = 24 * 60 * 60_000;
      writeFileSync(
        join(folder, 'owed-dddd-22222222-2222-2222-2222-222222222222.json'),
        JSON.stringify([
          { id: 'owed-long-ago', accountId: account, units: 70, owedAt: Date.now() - REFUND_NOTES_KEPT_MS - day },
          { id: 'owed-last-week', accountId: account, units: 30, owedAt: Date.now() - 7 * day },
          { id: 'owed-by-an-older-build', accountId: account, units: 5 },
        ]),
      );
      const expired: Map<string, number>[] = [];
      const next = createRefunds(store.db, { ...noReports, onExpired: (owed) => expired.push(owed), journal: openRefundJournal(folder, 'dddd') });
      await until('the refunds to be settled', () => next.pending() === 0 && owedFiles(folder).length === 0);
      expect(await used(account)).toBe(965);
      expect(expired).toEqual([new Map([[account, 70]])]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('forget the ids of refunds written longer ago than they are kept, when refunds are next written', { timeout: 30_000 }, async () => {
    const account = await accountUsing(1_000);
    const noted = (id: string, writtenAgoMs: number) =>
      sql`INSERT INTO quota_refunds (id, account_id, units, written_at) VALUES (${id}, ${account}, 1, now() - ${interval(writtenAgoMs)})`.execute(store.db);
    await noted('written-long-ago', REFUND_NOTES_KEPT_MS + 60_000);
    await noted('written-lately', REFUND_NOTES_KEPT_MS - 60 * 60_000);
    const notes = async () => (await store.db.selectFrom('quota_refunds').select('id').where('account_id', '=', account).execute()).map((row) => row.id).sort();
    expect(await notes()).toEqual(['written-lately', 'written-long-ago']);

    // A refund owed while the database was away, written once it is back.
    const folder = mkdtempSync(join(tmpdir(), 'refunds-'));
    try {
      const during = createRefunds(away.db, { ...noReports, journal: openRefundJournal(folder, 'eeee') });
      await during.refund(account, 10);
      await during.flush();
      const next = createRefunds(store.db, { ...noReports, journal: openRefundJournal(folder, 'eeee') });
      await until('the refund to be written', async () => next.pending() === 0 && (await used(account)) === 990);
      await until('the old id to be forgotten', async () => !(await notes()).includes('written-long-ago'));
      const left = await notes();
      expect(left).toContain('written-lately');
      expect(left).toHaveLength(2);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

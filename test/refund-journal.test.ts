import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRefundJournal } from '../src/access/refund-journal.js';
import { createRefunds } from '../src/access/refunds.js';
import { createAccount } from '../src/store/accounts.js';
import { openStore, type Store } from '../src/store/connect.js';
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

const noReports = { onStillOwed: () => {}, onError: (error: unknown) => expect.fail(String(error)) };
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
});

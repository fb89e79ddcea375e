import { randomUUID } from 'node:crypto';
import { accessSync, closeSync, constants, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { OwedRefund } from '../store/accounts.js';

// Refunds owed while the database is away live in memory and, so that a process stopped or killed
// during the outage does not keep the caller's units, in a file of this process's own in the
// journal folder. The next process to start there on the same database takes over the files it
// finds (their owners stopped); each refund carries an id the database notes when it writes it, so one taken over
// from a process still running is still written once.

export interface RefundJournal {
  /** The refunds in the files other processes left, whose files are removed: this process owes them now. */
  takeOver(): OwedRefund[];
  /** Makes this process's file hold `owed` (written whole, then renamed over the old one); none: no file. */
  save(owed: readonly OwedRefund[]): void;
}

/** `database` names the database the refunds are owed in: files of another one are not taken over. */
export function openRefundJournal(folder: string, database: string): RefundJournal {
  mkdirSync(folder, { recursive: true });
  // Written only while the database is away: a folder that cannot take the file is found now, not then.
  accessSync(folder, constants.W_OK);
  const ours = new RegExp(`^owed-${database}-[0-9a-f-]+\\.json$`);
  const own = `owed-${database}-${randomUUID()}.json`;
  let saved = false;
  return {
    takeOver() {
      const taken: OwedRefund[] = [];
      for (const name of readdirSync(folder)) {
        if (!ours.test(name) || name === own) continue;
        const path = join(folder, name);
        const entries = readEntries(path);
        // A file that cannot be read is left for an operator, never dropped.
        if (entries === null) continue;
        taken.push(...entries);
        rmSync(path, { force: true });
      }
      return taken;
    },
    save(owed) {
      const path = join(folder, own);
      if (owed.length === 0) {
        if (saved) rmSync(path, { force: true });
        saved = false;
        return;
      }
      const partial = `${path}.partial`;
      const fd = openSync(partial, 'w');
      try {
        writeSync(fd, JSON.stringify(owed));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(partial, path);
      saved = true;
    },
  };
}

function readEntries(path: string): OwedRefund[] | null {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (!Array.isArray(parsed)) return null;
    const valid = parsed.every(
      (entry) =>
        typeof entry?.id === 'string' &&
        typeof entry.accountId === 'string' &&
        Number.isSafeInteger(entry.units) &&
        entry.units > 0 &&
        (entry.owedAt === undefined || Number.isSafeInteger(entry.owedAt)),
    );
    return valid ? (parsed as OwedRefund[]) : null;
  } catch {
    return null;
  }
}

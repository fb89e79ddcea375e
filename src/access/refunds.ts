import type { Kysely } from 'kysely';
import { refundQuota } from '../store/accounts.js';
import type { Database } from '../store/database.js';

// A refund is owed the moment a reserved call fails, but the failure may be the database itself
// (a restart between the reservation and the refund). Owed units are kept here, summed per
// account, and retried until the database takes them: the caller never pays for the outage.

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 5_000;

export interface Refunds {
  refund(accountId: string, units: number): Promise<void>;
  /** Units owed and not yet written. */
  pending(): number;
  /** One more attempt for everything owed (shutdown); what still fails is reported. */
  flush(): Promise<void>;
}

export function createRefunds(db: Kysely<Database>, onStillOwed: (owed: Map<string, number>, error: unknown) => void): Refunds {
  const owed = new Map<string, number>();
  let timer: NodeJS.Timeout | null = null;
  let delay = FIRST_RETRY_MS;

  const owe = (accountId: string, units: number) => owed.set(accountId, (owed.get(accountId) ?? 0) + units);

  async function retry(): Promise<unknown> {
    let lastError: unknown = null;
    for (const [accountId, units] of [...owed]) {
      try {
        await refundQuota(db, accountId, units);
        // Refunds owed meanwhile were added to the entry: take away only what was written.
        const left = (owed.get(accountId) ?? 0) - units;
        if (left > 0) owed.set(accountId, left);
        else owed.delete(accountId);
      } catch (error) {
        lastError = error;
      }
    }
    return lastError;
  }

  function schedule(): void {
    if (timer) return;
    timer = setTimeout(async () => {
      timer = null;
      const failed = await retry();
      if (owed.size === 0) {
        delay = FIRST_RETRY_MS;
        return;
      }
      if (failed) delay = Math.min(delay * 2, MAX_RETRY_MS);
      schedule();
    }, delay);
    // Owed refunds alone must not keep a finished process alive; close() flushes them.
    timer.unref();
  }

  return {
    async refund(accountId, units) {
      try {
        await refundQuota(db, accountId, units);
      } catch {
        owe(accountId, units);
        schedule();
      }
    },
    pending: () => [...owed.values()].reduce((sum, units) => sum + units, 0),
    async flush() {
      if (timer) clearTimeout(timer);
      timer = null;
      const failed = await retry();
      if (owed.size > 0) onStillOwed(new Map(owed), failed);
    },
  };
}

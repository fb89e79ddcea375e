import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { pruneRefundNotes, REFUND_NOTES_KEPT_MS, refundOwed, refundQuota, type OwedRefund } from '../store/accounts.js';
import type { Database } from '../store/database.js';
import type { RefundJournal } from './refund-journal.js';

// A refund is owed the moment a reserved call fails, but the failure may be the database itself
// (a restart between the reservation and the refund). Owed refunds are kept here and in the
// journal (refund-journal.ts), each under an id, and retried until the database takes them: the
// caller never pays for the outage, nor for the process stopping during it.

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 5_000;
/** Room for the process's clock and the database's to differ when judging a refund's age. */
const CLOCK_MARGIN_MS = 24 * 60 * 60_000;

const unitsByAccount = (refunds: readonly OwedRefund[]) => {
  const byAccount = new Map<string, number>();
  for (const { accountId, units } of refunds) byAccount.set(accountId, (byAccount.get(accountId) ?? 0) + units);
  return byAccount;
};

export interface Refunds {
  refund(accountId: string, units: number): Promise<void>;
  /** Units owed and not yet written. */
  pending(): number;
  /** One more attempt for everything owed (shutdown); what still fails is reported. */
  flush(): Promise<void>;
}

export interface RefundsOptions {
  /** Where owed refunds outlive the process; the refunds found there are taken over at once. */
  journal?: RefundJournal;
  /** Refunds still owed at shutdown, by account (kept in the journal when there is one). */
  onStillOwed(owed: Map<string, number>, error: unknown): void;
  /**
   * Refunds from a journal owed for longer than the database keeps the ids of refunds written
   * (REFUND_NOTES_KEPT_MS), by account: not written, since each may have been; an operator settles them.
   */
  onExpired(owed: Map<string, number>): void;
  /** The journal could not be written (the refunds stay owed in memory), or old ids not pruned. */
  onError(error: unknown): void;
}

export function createRefunds(db: Kysely<Database>, { journal, onStillOwed, onExpired, onError }: RefundsOptions): Refunds {
  const owed = new Map<string, OwedRefund>();
  let timer: NodeJS.Timeout | null = null;
  let delay = FIRST_RETRY_MS;

  const save = () => {
    try {
      journal?.save([...owed.values()]);
    } catch (error) {
      onError(error);
    }
  };

  /** Writes everything owed in one statement; the error, if the database did not take it. */
  async function retry(): Promise<unknown> {
    const oldest = Date.now() - REFUND_NOTES_KEPT_MS + CLOCK_MARGIN_MS;
    const expired = [...owed.values()].filter((refund) => refund.owedAt !== undefined && refund.owedAt < oldest);
    if (expired.length > 0) {
      for (const refund of expired) owed.delete(refund.id);
      save();
      onExpired(unitsByAccount(expired));
    }
    const batch = [...owed.values()];
    if (batch.length === 0) return null;
    try {
      await refundOwed(db, batch);
    } catch (error) {
      return error;
    }
    for (const refund of batch) owed.delete(refund.id);
    save();
    // The ids noted are needed only as long as a journal may hold a refund young enough to write.
    await pruneRefundNotes(db).catch(onError);
    return null;
  }

  function schedule(ms = delay): void {
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
    }, ms);
    // Owed refunds alone must not keep a finished process alive; close() flushes them.
    timer.unref();
  }

  let takenOver: OwedRefund[] = [];
  try {
    takenOver = journal?.takeOver() ?? [];
  } catch (error) {
    onError(error);
  }
  if (takenOver.length > 0) {
    for (const refund of takenOver) owed.set(refund.id, refund);
    save();
    schedule(0);
  }

  return {
    async refund(accountId, units) {
      try {
        await refundQuota(db, accountId, units);
      } catch {
        const id = randomUUID();
        owed.set(id, { id, accountId, units, owedAt: Date.now() });
        save();
        schedule();
      }
    },
    pending: () => [...owed.values()].reduce((sum, refund) => sum + refund.units, 0),
    async flush() {
      if (timer) clearTimeout(timer);
      timer = null;
      const failed = await retry();
      if (owed.size === 0) return;
      onStillOwed(unitsByAccount([...owed.values()]), failed);
    },
  };
}

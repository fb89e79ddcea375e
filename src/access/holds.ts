// Units of an account reserved by calls still running in this process, by the request holding
// them. A call reserves its units before the work and gives them back if the work fails, so while
// a doomed call runs (an upstream that hangs, a client about to leave) its units look spent: a
// call refused for quota then would be told "0 units left" although the units come back a moment
// later. With the holds known, such a call waits for them to settle and tries again
// (src/access/service.ts): a 403 for quota stands only when the calls that held the units kept
// them. Holds of other processes are not seen here (docs/decisions.md).

export class QuotaHolds {
  /** accountId → holder (one request) → units it holds. */
  readonly #held = new Map<string, Map<object, number>>();
  /** accountId → who waits for the account's next release. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** accountId → when its units were last let go, on a clock of releases (see released()). */
  readonly #lastRelease = new Map<string, number>();
  #releases = 0;

  /** Records `units` held by `holder`; the returned function lets them go (once, however often called). */
  hold(accountId: string, holder: object, units: number): () => void {
    let byHolder = this.#held.get(accountId);
    if (!byHolder) this.#held.set(accountId, (byHolder = new Map()));
    byHolder.set(holder, (byHolder.get(holder) ?? 0) + units);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (byHolder.get(holder) ?? 0) - units;
      if (left > 0) byHolder.set(holder, left);
      else byHolder.delete(holder);
      if (byHolder.size === 0 && this.#held.get(accountId) === byHolder) this.#held.delete(accountId);
      this.#lastRelease.delete(accountId);
      this.#lastRelease.set(accountId, ++this.#releases);
      // Oldest first: an account released long ago cannot be between a caller's two looks.
      if (this.#lastRelease.size > 10_000) this.#lastRelease.delete(this.#lastRelease.keys().next().value as string);
      const waiters = this.#waiters.get(accountId);
      if (!waiters) return;
      this.#waiters.delete(accountId);
      for (const wake of waiters) wake();
    };
  }

  /** Whether `holder` holds units of the account itself (such a caller must not wait: two could wait on each other). */
  holds(accountId: string, holder: object): boolean {
    return (this.#held.get(accountId)?.get(holder) ?? 0) > 0;
  }

  /** Units of the account held by requests other than `holder`. */
  heldByOthers(accountId: string, holder: object): number {
    let units = 0;
    for (const [other, held] of this.#held.get(accountId) ?? []) if (other !== holder) units += held;
    return units;
  }

  /**
   * When the account's units were last let go: a caller takes it before asking the database, and
   * if it changed by the time the answer is a refusal, units may have come back since: ask again.
   */
  lastRelease(accountId: string): number {
    return this.#lastRelease.get(accountId) ?? 0;
  }

  /** Resolves at the account's next release, after `ms`, or when `signal` aborts, whichever comes first. */
  released(accountId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let waiters = this.#waiters.get(accountId);
      if (!waiters) this.#waiters.set(accountId, (waiters = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiters.get(accountId) === waiters) this.#waiters.delete(accountId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (signal?.aborted) return done();
      signal?.addEventListener('abort', done, { once: true });
      waiters.add(done);
    });
  }
}

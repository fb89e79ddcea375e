// The index thread's searches, served to their callers in turn. The thread answers one search at a
// time; in arrival order, one account's burst of heavy searches (all eight facets, each without its
// own condition: ~145 ms apiece at 1M creators then) made every other account's 1 ms search wait
// behind all of them, 1.6 s at 16 in flight (npm run bench:fairness). Here each caller (an
// account) has its own line, and the next search is the first of the caller that has had the least
// of the thread's time: a caller arriving waits at most for the search already running, and a busy
// caller gets what is left.
//
// Time is charged after a search ran (its cost is not known before). A caller that comes back
// starts level with the least-served caller waiting, so it can neither bank idle time nor carry
// a debt longer than it takes the others to catch up.

/** Who a search is for; searches with no caller share one line. */
export type Caller = string;
const NOBODY: Caller = '';
const SWEEP_FIRST_AT = 64;

export class FairQueue<Job> {
  /** The callers with searches waiting, each its own first-in first-out line. */
  readonly #waiting = new Map<Caller, Job[]>();
  /** The thread time (ms) each caller has had, on one clock with #level; absent: level. */
  readonly #served = new Map<Caller, number>();
  /** The least time any caller waiting had when a search was last picked: it only grows. */
  #level = 0;
  #sweepAt = SWEEP_FIRST_AT;
  #size = 0;

  /** Callers whose thread time is kept: those waiting and those served lately. */
  get callersKept(): number {
    return this.#served.size;
  }

  /** Searches waiting. */
  get size(): number {
    return this.#size;
  }

  push(job: Job, caller: Caller = NOBODY): void {
    this.#size++;
    const line = this.#waiting.get(caller);
    if (line) {
      line.push(job);
      return;
    }
    this.#waiting.set(caller, [job]);
    if ((this.#served.get(caller) ?? 0) < this.#level) this.#served.set(caller, this.#level);
  }

  /** The next search to run and whom to charge for it, or undefined when none waits. */
  next(): { job: Job; caller: Caller } | undefined {
    let caller: Caller | undefined;
    let least = Infinity;
    for (const waiting of this.#waiting.keys()) {
      const served = this.#served.get(waiting) ?? this.#level;
      if (served < least) {
        least = served;
        caller = waiting;
      }
    }
    if (caller === undefined) return undefined;
    this.#level = least;
    const line = this.#waiting.get(caller)!;
    const job = line.shift()!;
    this.#size--;
    if (line.length === 0) this.#waiting.delete(caller);
    return { job, caller };
  }

  /** Charges `ms` of the thread's time to `caller`. */
  charge(caller: Caller, ms: number): void {
    this.#served.set(caller, (this.#served.get(caller) ?? this.#level) + ms);
    // A caller gone quiet with no debt left is level when it comes back anyway: the map holds the
    // callers recently served, not every account ever seen.
    if (this.#served.size >= this.#sweepAt) {
      for (const [who, served] of this.#served) if (served <= this.#level && !this.#waiting.has(who)) this.#served.delete(who);
      this.#sweepAt = Math.max(SWEEP_FIRST_AT, 2 * this.#served.size);
    }
  }
}

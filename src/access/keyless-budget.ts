import { ApiError } from '../domain/errors.js';

/**
 * The CPU time that work answered without a key (introspection) may take in this process: a
 * bucket of milliseconds, refilled at `msPerSecond` up to `burstMs`, charged with the time each
 * answer took. A key's own rate limit bounds keyed work; without one, a few clients sending
 * introspection documents that nest (2.6 MB answers for 0.3 s of CPU each) took the CPU from every
 * paying client. With this, such traffic gets 429s and at most its share of one core; the
 * standard introspection queries of GraphiQL and codegen are answered from a cache and cost none.
 */
export class KeylessBudget {
  #available: number;
  #refilledAt = performance.now();

  constructor(
    private readonly msPerSecond: number,
    private readonly burstMs: number,
  ) {
    this.#available = burstMs;
  }

  /** Refuses (429) while the budget is spent; the caller then runs its work and reports its time to `spend`. */
  admit(): void {
    this.#refill();
    if (this.#available > 0) return;
    const seconds = Math.max(1, Math.ceil(-this.#available / this.msPerSecond));
    throw new ApiError('RATE_LIMITED', 'Too Many Requests: work without an API key is limited; send your key or retry later', [], {
      'retry-after': String(seconds),
    });
  }

  spend(ms: number): void {
    this.#refill();
    this.#available -= ms;
  }

  #refill(): void {
    const now = performance.now();
    this.#available = Math.min(this.burstMs, this.#available + ((now - this.#refilledAt) / 1000) * this.msPerSecond);
    this.#refilledAt = now;
  }
}

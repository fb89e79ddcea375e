import { UpstreamUnavailableError, type UpstreamName } from './errors.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** The span over which calls and failures are counted. */
  windowMs?: number;
  /** Fewer calls than this in the window never open the circuit. */
  minimumCalls?: number;
  /** The share of failed calls in the window that opens the circuit. */
  failureRate?: number;
  /**
   * Failures must come from at least this many different keys (accounts): one account the
   * upstream fails on, asked for again and again, is that account's problem, not an outage.
   */
  minimumFailingKeys?: number;
  /** How long the circuit stays open before one trial call is let through. */
  cooldownMs?: number;
  /** How long a key that just failed fails fast without calling the upstream again. */
  negativeCacheMs?: number;
  /** Keys remembered at most in the negative cache (the oldest go first). */
  negativeCacheSize?: number;
  /** Errors that say nothing about the upstream's health (a 404, say) return false. */
  isFailure?: (error: unknown) => boolean;
  now?: () => number;
}

const BUCKETS = 10;

interface Bucket {
  start: number;
  calls: number;
  failures: number;
  /** Distinct failing keys, capped: only "at least minimumFailingKeys" matters. */
  failingKeys: Set<string>;
}

/**
 * A failure-rate circuit breaker with a per-key negative cache. It opens when, over the last
 * `windowMs`, at least `minimumCalls` calls were made, at least `failureRate` of them failed, and
 * the failures came from at least `minimumFailingKeys` keys; then callers get an answer at once and
 * the upstream is not hammered while it recovers. A key whose call failed fails fast for
 * `negativeCacheMs`, so one caller retrying a broken account neither loads the upstream nor fills
 * the window with failures of one account.
 */
export class CircuitBreaker {
  readonly #upstream: UpstreamName;
  readonly #options: Required<Omit<CircuitBreakerOptions, 'isFailure' | 'now'>>;
  readonly #isFailure: (error: unknown) => boolean;
  readonly #now: () => number;
  #buckets: Bucket[] = [];
  #openedAt: number | null = null;
  #trialInFlight = false;
  readonly #recentFailures = new Map<string, number>();

  constructor(upstream: UpstreamName, options: CircuitBreakerOptions = {}) {
    this.#upstream = upstream;
    this.#options = {
      windowMs: options.windowMs ?? 30_000,
      minimumCalls: options.minimumCalls ?? 10,
      failureRate: options.failureRate ?? 0.5,
      minimumFailingKeys: options.minimumFailingKeys ?? 3,
      cooldownMs: options.cooldownMs ?? 30_000,
      negativeCacheMs: options.negativeCacheMs ?? 10_000,
      negativeCacheSize: options.negativeCacheSize ?? 10_000,
    };
    this.#isFailure = options.isFailure ?? (() => true);
    this.#now = options.now ?? (() => performance.now());
  }

  get state(): BreakerState {
    if (this.#openedAt === null) return 'closed';
    return this.#now() - this.#openedAt >= this.#options.cooldownMs ? 'half-open' : 'open';
  }

  /** Keys in the negative cache (to check that it stays bounded). */
  get cachedFailures(): number {
    return this.#recentFailures.size;
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const failedAt = this.#recentFailures.get(key);
    if (failedAt !== undefined) {
      if (this.#now() - failedAt < this.#options.negativeCacheMs) {
        throw new UpstreamUnavailableError(this.#upstream, 'recent-failure', 'this account failed moments ago');
      }
      this.#recentFailures.delete(key);
    }
    const state = this.state;
    if (state === 'open' || (state === 'half-open' && this.#trialInFlight)) {
      throw new UpstreamUnavailableError(this.#upstream, 'circuit-open', 'failing fast while the upstream is failing');
    }
    const isTrial = state === 'half-open';
    if (isTrial) this.#trialInFlight = true;
    try {
      const result = await task();
      this.#record(key, false, isTrial);
      return result;
    } catch (error) {
      this.#record(key, this.#isFailure(error), isTrial);
      throw error;
    } finally {
      if (isTrial) this.#trialInFlight = false;
    }
  }

  #record(key: string, failed: boolean, isTrial: boolean): void {
    const now = this.#now();
    if (failed) this.#rememberFailure(key, now);
    if (isTrial) {
      // The trial decides alone: a healthy answer closes the circuit on a clean slate.
      if (failed) this.#openedAt = now;
      else this.#reset();
      return;
    }
    const bucket = this.#currentBucket(now);
    bucket.calls += 1;
    if (!failed) return;
    bucket.failures += 1;
    if (bucket.failingKeys.size < this.#options.minimumFailingKeys) bucket.failingKeys.add(key);
    if (this.#openedAt === null && this.#shouldOpen(now)) this.#openedAt = now;
  }

  #shouldOpen(now: number): boolean {
    const live = this.#buckets.filter((bucket) => now - bucket.start < this.#options.windowMs);
    const calls = live.reduce((sum, bucket) => sum + bucket.calls, 0);
    const failures = live.reduce((sum, bucket) => sum + bucket.failures, 0);
    const keys = new Set(live.flatMap((bucket) => [...bucket.failingKeys]));
    return calls >= this.#options.minimumCalls && failures >= calls * this.#options.failureRate && keys.size >= this.#options.minimumFailingKeys;
  }

  #currentBucket(now: number): Bucket {
    const width = this.#options.windowMs / BUCKETS;
    const last = this.#buckets.at(-1);
    if (last && now - last.start < width) return last;
    const bucket: Bucket = { start: now, calls: 0, failures: 0, failingKeys: new Set() };
    this.#buckets = [...this.#buckets.filter((b) => now - b.start < this.#options.windowMs), bucket];
    return bucket;
  }

  #rememberFailure(key: string, now: number): void {
    this.#recentFailures.delete(key);
    this.#recentFailures.set(key, now);
    // A Map iterates in insertion order: the first entry is the oldest.
    while (this.#recentFailures.size > this.#options.negativeCacheSize) {
      this.#recentFailures.delete(this.#recentFailures.keys().next().value as string);
    }
  }

  #reset(): void {
    this.#openedAt = null;
    this.#buckets = [];
  }
}

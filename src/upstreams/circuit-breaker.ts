import { UpstreamCallCancelledError, UpstreamUnavailableError, type UpstreamName } from './errors.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** The span over which failures and successes are counted. */
  windowMs?: number;
  /**
   * The share of the distinct keys seen in the window (served, or failed after being served) that
   * failed after being served, at or above which the circuit opens.
   */
  failureRate?: number;
  /** At least this many distinct keys must have failed after being served for the circuit to open. */
  minimumFailingKeys?: number;
  /** How long the circuit stays open before one trial call is let through. */
  cooldownMs?: number;
  /** How long a key that just failed fails fast without calling the upstream again. */
  negativeCacheMs?: number;
  /** Keys remembered at most, in the negative cache and among the keys served (the oldest go first). */
  negativeCacheSize?: number;
  /** Errors that say nothing about the upstream's health (a 404, a 400) return false. */
  isFailure?: (error: unknown) => boolean;
  now?: () => number;
}

/**
 * A circuit breaker whose outage signal callers cannot forge, with a per-key negative cache.
 *
 * Only a key (an account) that the upstream served on its last call, and that now fails, counts
 * against the upstream: accounts the upstream always fails on, or that a caller invents, are that
 * caller's problem however often they are asked for, and no caller can make another's healthy
 * account fail. The circuit opens when, over the last `windowMs`, at least `minimumFailingKeys`
 * such keys failed and they are at least `failureRate` of the distinct keys that were either served
 * or failed so in that window (keys, not calls: retries weigh nothing, and neither do refusals).
 * A platform down for everyone fails every account being read, so the circuit opens as soon as a
 * few of them are asked again; then callers get an answer at once and the upstream is not hammered
 * while it recovers. A key whose call failed fails fast for `negativeCacheMs`.
 */
export class CircuitBreaker {
  readonly #upstream: UpstreamName;
  readonly #options: Required<Omit<CircuitBreakerOptions, 'isFailure' | 'now'>>;
  readonly #isFailure: (error: unknown) => boolean;
  readonly #now: () => number;
  #openedAt: number | null = null;
  #trialInFlight = false;
  readonly #recentFailures = new Map<string, number>();
  /** Keys whose last call succeeded, with its time: the only keys whose failure counts. */
  readonly #served = new Map<string, number>();
  /** Keys that failed right after being served, with the time of the failure. */
  readonly #regressions = new Map<string, number>();

  constructor(upstream: UpstreamName, options: CircuitBreakerOptions = {}) {
    this.#upstream = upstream;
    this.#options = {
      windowMs: options.windowMs ?? 30_000,
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
      this.#record(key, 'success', isTrial);
      return result;
    } catch (error) {
      // Cut off by its caller: no answer, so nothing learnt about the key or the upstream.
      if (error instanceof UpstreamCallCancelledError) throw error;
      this.#record(key, this.#isFailure(error) ? 'failure' : 'neutral', isTrial);
      throw error;
    } finally {
      if (isTrial) this.#trialInFlight = false;
    }
  }

  #record(key: string, outcome: 'success' | 'failure' | 'neutral', isTrial: boolean): void {
    const now = this.#now();
    if (outcome !== 'failure') {
      // A neutral answer (a 404, a 400) says nothing about the key, but any answer ends a trial
      // well: the upstream is up.
      if (outcome === 'success') remember(this.#served, key, now, this.#options.negativeCacheSize);
      if (isTrial) this.#close();
      return;
    }
    const wasServed = this.#served.delete(key);
    remember(this.#recentFailures, key, now, this.#options.negativeCacheSize);
    // A key never served failing again proves nothing: on a trial it leaves the circuit half-open
    // for the next call, rather than reopening it for a whole cool-down.
    if (!wasServed) return;
    remember(this.#regressions, key, now, this.#options.negativeCacheSize);
    if (isTrial || (this.#openedAt === null && this.#shouldOpen(now))) this.#openedAt = now;
  }

  #shouldOpen(now: number): boolean {
    const since = now - this.#options.windowMs;
    // Both maps are in time order (remember() moves a key to the end), oldest first.
    for (const [key, at] of this.#regressions) {
      if (at > since) break;
      this.#regressions.delete(key);
    }
    const failing = this.#regressions.size;
    if (failing < this.#options.minimumFailingKeys) return false;
    let served = 0;
    for (const [key, at] of this.#served) if (at > since && !this.#regressions.has(key)) served += 1;
    return failing >= this.#options.failureRate * (failing + served);
  }

  #close(): void {
    // The trial decides alone: a healthy answer closes the circuit on a clean slate.
    this.#openedAt = null;
    this.#regressions.clear();
  }
}

/** Sets key to value as the newest entry, dropping the oldest beyond `size` (a Map iterates in insertion order). */
function remember(map: Map<string, number>, key: string, value: number, size: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > size) map.delete(map.keys().next().value as string);
}

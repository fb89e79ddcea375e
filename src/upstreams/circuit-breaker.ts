import { UpstreamUnavailableError, type UpstreamName } from './errors.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. */
  failureThreshold?: number;
  /** How long the circuit stays open before one trial call is let through. */
  cooldownMs?: number;
  /** Errors that say nothing about the upstream's health (a 404, say) return false. */
  isFailure?: (error: unknown) => boolean;
}

/**
 * Fails fast while an upstream is known to be down, so callers get an answer at once and the
 * upstream is not hammered while it recovers.
 */
export class CircuitBreaker {
  readonly #upstream: UpstreamName;
  readonly #failureThreshold: number;
  readonly #cooldownMs: number;
  readonly #isFailure: (error: unknown) => boolean;
  #consecutiveFailures = 0;
  #openedAt: number | null = null;
  #trialInFlight = false;

  constructor(upstream: UpstreamName, options: CircuitBreakerOptions = {}) {
    this.#upstream = upstream;
    this.#failureThreshold = options.failureThreshold ?? 5;
    this.#cooldownMs = options.cooldownMs ?? 30_000;
    this.#isFailure = options.isFailure ?? (() => true);
  }

  get state(): BreakerState {
    if (this.#openedAt === null) return 'closed';
    return performance.now() - this.#openedAt >= this.#cooldownMs ? 'half-open' : 'open';
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    const state = this.state;
    if (state === 'open' || (state === 'half-open' && this.#trialInFlight)) {
      throw new UpstreamUnavailableError(this.#upstream, 'circuit-open', 'failing fast after repeated failures');
    }
    const isTrial = state === 'half-open';
    if (isTrial) this.#trialInFlight = true;
    try {
      const result = await task();
      this.#recordHealthy();
      return result;
    } catch (error) {
      if (this.#isFailure(error)) this.#recordFailure(isTrial);
      else this.#recordHealthy();
      throw error;
    } finally {
      if (isTrial) this.#trialInFlight = false;
    }
  }

  // Any answer that is not a failure proves the upstream responsive, even one from a call that
  // started before the circuit opened.
  #recordHealthy(): void {
    this.#consecutiveFailures = 0;
    this.#openedAt = null;
  }

  #recordFailure(isTrial: boolean): void {
    this.#consecutiveFailures += 1;
    const shouldOpen = isTrial || (this.#openedAt === null && this.#consecutiveFailures >= this.#failureThreshold);
    if (shouldOpen) this.#openedAt = performance.now();
  }
}

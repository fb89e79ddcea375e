// Rules shared by the in-process and the Redis limiter.

/** A plan with a zero rate or no slots would refuse forever with a meaningless Retry-After. */
export function checkPolicy(keyId: string, policy: LimitPolicy): void {
  if (typeof keyId !== 'string' || keyId === '') throw new Error('limiter: keyId must be a non-empty string');
  const { ratePerSecond, burst, maxInFlight } = policy;
  if (!(Number.isFinite(ratePerSecond) && ratePerSecond > 0)) {
    throw new Error(`limiter: ratePerSecond must be a positive number, got ${ratePerSecond}`);
  }
  if (!(Number.isInteger(burst) && burst >= 1)) throw new Error(`limiter: burst must be an integer >= 1, got ${burst}`);
  if (!(Number.isInteger(maxInFlight) && maxInFlight >= 1)) {
    throw new Error(`limiter: maxInFlight must be an integer >= 1, got ${maxInFlight}`);
  }
}

/**
 * Whole microseconds until the bucket holds one token again. Rounded down: being early by under a
 * microsecond cannot matter for a whole-second header, while float noise rounded up could add a second.
 */
export function microsUntilToken(tokens: number, ratePerSecond: number): number {
  return Math.max(0, Math.floor(((1 - tokens) * 1_000_000) / ratePerSecond));
}

/** Retry-After is whole seconds and never 0, which clients read as "retry now". */
export function retryAfterSeconds(waitMicros: number): number {
  return Math.max(1, Math.ceil(waitMicros / 1_000_000));
}

export interface LimitPolicy {
  /** Tokens added to the bucket per second. */
  ratePerSecond: number;
  /** Bucket capacity: how many requests may arrive at once after a quiet spell. */
  burst: number;
  /** Requests of one key that may be running at the same time. */
  maxInFlight: number;
}

export type Admission =
  | { ok: true; release: () => Promise<void> }
  | { ok: false; reason: 'rate' | 'in_flight'; retryAfterSeconds: number };

export interface Limiter {
  /**
   * Takes one token and one in-flight slot of `keyId`, both or neither. Rejects with an Error only
   * when the limiter itself fails (Redis unreachable), never to refuse a request.
   */
  acquire(keyId: string, policy: LimitPolicy): Promise<Admission>;
  close(): Promise<void>;
}

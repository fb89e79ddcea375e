import { performance } from 'node:perf_hooks';
import { type Admission, checkPolicy, type Limiter, type LimitPolicy, microsUntilToken, retryAfterSeconds } from './limits-core.js';

// The single-process limiter: plain Maps, no timers (nothing to keep the process alive).

interface Bucket {
  tokens: number;
  /** When `tokens` was last written, in the clock's milliseconds. */
  at: number;
  /** The policy of the last take, to tell later whether the bucket has refilled. */
  burst: number;
  ratePerSecond: number;
}

export interface MemoryLimiter extends Limiter {
  /** How many buckets and in-flight counters are held (to test that memory stays bounded). */
  stats(): { buckets: number; inFlight: number };
}

const MIN_SWEEP_SIZE = 1024;

export function createMemoryLimiter(options: { now?: (() => number) | undefined; minSweepSize?: number } = {}): MemoryLimiter {
  // Monotonic by default: a wall-clock jump backwards must not freeze refills.
  const now = options.now ?? (() => performance.now());
  const minSweepSize = options.minSweepSize ?? MIN_SWEEP_SIZE;
  const buckets = new Map<string, Bucket>();
  const inFlight = new Map<string, number>();
  let sweepAt = minSweepSize;
  let closed = false;

  /** Tokens the bucket holds at `t`, without writing: refused calls leave the state untouched. */
  const tokensAt = (bucket: Bucket, t: number, burst: number, ratePerSecond: number): number => {
    const elapsedMs = Math.max(0, t - bucket.at);
    return Math.min(burst, bucket.tokens + (elapsedMs * ratePerSecond) / 1000);
  };

  /**
   * A full bucket is the same as no bucket, so idle full ones are dropped. Sweeping only when the
   * map has doubled since the last sweep keeps the cost amortised O(1) per new key and the map
   * within twice the keys active in the last refill period.
   */
  const maybeSweep = (t: number): void => {
    if (buckets.size < sweepAt) return;
    for (const [keyId, bucket] of buckets) {
      if (tokensAt(bucket, t, bucket.burst, bucket.ratePerSecond) >= bucket.burst) buckets.delete(keyId);
    }
    sweepAt = Math.max(minSweepSize, buckets.size * 2);
  };

  return {
    async acquire(keyId: string, policy: LimitPolicy): Promise<Admission> {
      if (closed) throw new Error('limiter is closed');
      checkPolicy(keyId, policy);
      const t = now();
      const bucket = buckets.get(keyId);
      const tokens = bucket ? tokensAt(bucket, t, policy.burst, policy.ratePerSecond) : policy.burst;
      if (tokens < 1) {
        return { ok: false, reason: 'rate', retryAfterSeconds: retryAfterSeconds(microsUntilToken(tokens, policy.ratePerSecond)) };
      }
      const running = inFlight.get(keyId) ?? 0;
      if (running >= policy.maxInFlight) return { ok: false, reason: 'in_flight', retryAfterSeconds: 1 };

      const next: Bucket = { tokens: tokens - 1, at: t, burst: policy.burst, ratePerSecond: policy.ratePerSecond };
      buckets.set(keyId, next);
      if (!bucket) maybeSweep(t);
      inFlight.set(keyId, running + 1);

      let released = false;
      const release = async (): Promise<void> => {
        if (released || closed) return;
        released = true;
        const left = (inFlight.get(keyId) ?? 1) - 1;
        if (left > 0) inFlight.set(keyId, left);
        else inFlight.delete(keyId);
      };
      return { ok: true, release };
    },

    async close(): Promise<void> {
      closed = true;
      buckets.clear();
      inFlight.clear();
    },

    stats() {
      return { buckets: buckets.size, inFlight: inFlight.size };
    },
  };
}

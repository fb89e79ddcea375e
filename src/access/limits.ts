import type { Logger } from '../observability/log.js';
import type { Limiter } from './limits-core.js';
import { createMemoryLimiter } from './limits-memory.js';
import { createRedisLimiter } from './limits-redis.js';

// Per-key rate and in-flight limits (docs/contract/decisions.md §4: refused with 429 and a whole-second
// Retry-After). AccessService.admit calls acquire() once per request and keeps the release.

export interface LimiterOptions {
  /** Shares the limits through Redis across processes; without it they live in this process. */
  redisUrl?: string;
  /** In-process clock in milliseconds (tests). Ignored with Redis, which uses its own server time. */
  now?: () => number;
  /** Prefix of every Redis key, so tests and deployments can share one Redis. */
  keyPrefix?: string;
  /** Redis only: how long an unreleased in-flight slot (a crashed process's) keeps counting. */
  slotTtlMs?: number;
  /** Redis only: connect and command timeout, so acquire fails instead of hanging. */
  timeoutMs?: number;
  /** Redis only: connection errors and failed releases, which do not reach a caller. */
  onError?: (error: unknown) => void;
  /** Redis only: told once when the limits fall back to this process's counters and once when they return. */
  log?: Pick<Logger, 'info' | 'warn'>;
  /** Redis only: how often a probe (a write) asks a Redis that stopped answering whether it is back. */
  probeIntervalMs?: number;
}

export const DEFAULT_KEY_PREFIX = 'cds:limit:';
export const DEFAULT_SLOT_TTL_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 500;

/**
 * With Redis, limits are shared by every process; while Redis cannot be reached each process
 * enforces them on its own (so N processes admit up to N times a key's rate) rather than refusing
 * every paying call for an outage of ours, or letting one key run unlimited against the database.
 * Quota is not affected: it is counted in PostgreSQL.
 */
export function createLimiter(options: LimiterOptions = {}): Limiter {
  const local = createMemoryLimiter({ now: options.now });
  if (options.redisUrl === undefined) return local;
  const onError = options.onError ?? (() => {});
  const shared = createRedisLimiter({
    url: options.redisUrl,
    keyPrefix: options.keyPrefix ?? DEFAULT_KEY_PREFIX,
    slotTtlMs: options.slotTtlMs ?? DEFAULT_SLOT_TTL_MS,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    onError,
    // Only the reason: no key id or key name reaches the log.
    onAvailabilityChange: (available, cause) => {
      if (available) options.log?.info('rate limits: Redis answers again; shared counters in use');
      else
        options.log?.warn("rate limits: Redis not answering; each process's own counters in use", {
          reason: cause instanceof Error ? cause.message : String(cause),
        });
    },
    probeIntervalMs: options.probeIntervalMs,
  });
  return {
    async acquire(keyId, policy) {
      if (!shared.available()) return local.acquire(keyId, policy);
      try {
        return await shared.acquire(keyId, policy);
      } catch (error) {
        // The shared limiter now stands aside until Redis takes a probe: only this call waited.
        onError(error);
        return local.acquire(keyId, policy);
      }
    },
    async close() {
      await shared.close();
      await local.close();
    },
  };
}

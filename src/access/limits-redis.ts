import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { type Admission, checkPolicy, type Limiter, type LimitPolicy, retryAfterSeconds } from './limits-core.js';

// The limiter shared by every server process through Redis. Per key id (an opaque id, never the
// API key itself), both keys hash-tagged on it so they stay in one cluster slot:
//   <prefix>{<keyId>}:bucket  hash  tokens (float), at (Redis time, µs)  PEXPIRE = until full + 1 s
//   <prefix>{<keyId>}:slots   zset  member = slot id (uuid), score = slot expiry (Redis time, µs)
// One Lua script refills and takes a token and prunes, counts and adds a slot, atomically, so
// concurrent processes cannot both take the last token or slot. It reads the clock with TIME so
// processes with skewed clocks agree. A slot left by a crashed process is pruned once it expires.

const ACQUIRE_LUA = `
-- Redis < 5 refuses writes after TIME unless effects are replicated; later versions ignore this.
if redis.replicate_commands then redis.replicate_commands() end
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local maxInFlight = tonumber(ARGV[3])
local slotTtlMs = tonumber(ARGV[5])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])

local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
elseif now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000000)
else
  tokens = math.min(burst, tokens)
end
-- Refusals write nothing to the bucket, so frequent refused calls lose no refill to rounding.
if tokens < 1 then
  return {0, 'rate', math.floor((1 - tokens) * 1000000 / rate)}
end

redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= maxInFlight then
  return {0, 'in_flight', 0}
end

tokens = tokens - 1
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
-- A missing bucket reads as full, so it may vanish once it would have refilled anyway.
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
redis.call('ZADD', KEYS[2], now + slotTtlMs * 1000, ARGV[4])
local slotsKeyTtl = slotTtlMs + 1000
if redis.call('PTTL', KEYS[2]) < slotsKeyTtl then
  redis.call('PEXPIRE', KEYS[2], slotsKeyTtl)
end
return {1, 'ok', 0}
`;

type AcquireReply = [admitted: number, reason: string, waitMicros: number];

interface LimiterRedis extends Redis {
  limitAcquire(
    bucketKey: string,
    slotsKey: string,
    ratePerSecond: number,
    burst: number,
    maxInFlight: number,
    slotId: string,
    slotTtlMs: number,
  ): Promise<AcquireReply>;
}

export interface RedisLimiterOptions {
  url: string;
  keyPrefix: string;
  slotTtlMs: number;
  timeoutMs: number;
  onError: (error: unknown) => void;
}

export interface RedisLimiter extends Limiter {
  /**
   * False while Redis is known to be away (between reconnect attempts, or closed): callers need
   * not wait for a command to time out. While connecting a command is tried, bounded by the timeout.
   */
  available(): boolean;
}

export function createRedisLimiter(options: RedisLimiterOptions): RedisLimiter {
  const { keyPrefix, slotTtlMs, onError } = options;
  const redis = new Redis(options.url, {
    connectTimeout: options.timeoutMs,
    // Bounds every command, including one queued while (re)connecting: acquire never hangs.
    commandTimeout: options.timeoutMs,
    // Fail queued commands after one failed reconnect rather than twenty.
    maxRetriesPerRequest: 1,
    // A command cut off by a disconnect may already have run; replaying it could take twice.
    autoResendUnfulfilledCommands: false,
  }) as LimiterRedis;
  // Without a listener ioredis reports every reconnect failure as unhandled; callers see the
  // failure through acquire's rejection.
  redis.on('error', onError);
  redis.defineCommand('limitAcquire', { numberOfKeys: 2, lua: ACQUIRE_LUA });
  let closed = false;

  const keysOf = (keyId: string) => ({
    bucket: `${keyPrefix}{${keyId}}:bucket`,
    slots: `${keyPrefix}{${keyId}}:slots`,
  });

  return {
    available: () => !['reconnecting', 'close', 'end'].includes(redis.status),

    async acquire(keyId: string, policy: LimitPolicy): Promise<Admission> {
      if (closed) throw new Error('limiter is closed');
      checkPolicy(keyId, policy);
      const { bucket, slots } = keysOf(keyId);
      const slotId = randomUUID();
      let reply: AcquireReply;
      try {
        reply = await redis.limitAcquire(bucket, slots, policy.ratePerSecond, policy.burst, policy.maxInFlight, slotId, slotTtlMs);
      } catch (error) {
        // A timed-out script may still run later (it can sit in the offline queue). This ZREM is
        // queued behind it on the same connection, so such a late slot is freed, not held a minute.
        redis.zrem(slots, slotId).catch(onError);
        throw new Error(`rate limiter unavailable: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      const [admitted, reason, waitMicros] = reply;
      if (admitted === 1) {
        let releasing: Promise<void> | null = null;
        // Idempotent: the first call removes the slot, later calls share its outcome. A failed
        // removal is reported, not thrown: the response is already made and the slot expires anyway.
        const release = (): Promise<void> =>
          (releasing ??= redis.zrem(slots, slotId).then(
            () => undefined,
            (error: unknown) => onError(error),
          ));
        return { ok: true, release };
      }
      if (reason === 'rate') return { ok: false, reason: 'rate', retryAfterSeconds: retryAfterSeconds(Number(waitMicros)) };
      return { ok: false, reason: 'in_flight', retryAfterSeconds: 1 };
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (redis.status === 'ready') {
        try {
          await redis.quit();
          return;
        } catch {
          // fall through: drop the connection instead
        }
      }
      redis.disconnect();
    },
  };
}

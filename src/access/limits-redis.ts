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
//
// A Redis that hangs with its connection open (paused, swapping, a long script) holds every command
// sent to it and runs them all when it wakes. So after a command fails the limiter stands aside
// (available() is false: callers use their own counters) until a probe (a write) comes back, and an acquire
// that timed out is followed on the same connection by UNDO_LUA, which Redis runs right after it:
// if the late acquire took a token and a slot, they are given back, so a hang never drains a bucket.
// This needs no clock: a connection's commands run in the order they were sent, also those queued
// while (re)connecting, which ioredis sends, timed out or not, once connected.

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

// Gives back what a timed-out acquire took, if it ran and admitted: its slot, then its token.
const UNDO_LUA = `
if redis.call('ZREM', KEYS[2], ARGV[2]) == 0 then
  return 0
end
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens'))
if tokens ~= nil then
  redis.call('HSET', KEYS[1], 'tokens', math.min(tonumber(ARGV[1]), tokens + 1))
end
return 1
`;

// Whether Redis takes a write again: a PING is answered by a Redis that refuses every write (a
// replica after a failover, READONLY), and returning to it then failed the next acquire, 8 times a second.
const PROBE_LUA = `
redis.call('SET', KEYS[1], '1', 'PX', 1000)
return 1
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
  limitUndo(bucketKey: string, slotsKey: string, burst: number, slotId: string): Promise<number>;
  limitProbe(probeKey: string): Promise<number>;
}

export interface RedisLimiterOptions {
  url: string;
  keyPrefix: string;
  slotTtlMs: number;
  timeoutMs: number;
  onError: (error: unknown) => void;
  /** Called once when Redis stops answering (with why) and once when it answers again. */
  onAvailabilityChange: (available: boolean, cause?: unknown) => void;
  /** How often a probe (a write) asks whether Redis answers again. */
  probeIntervalMs?: number;
}

export interface RedisLimiter extends Limiter {
  /**
   * False from a failed command or a lost connection until a probe is answered: callers use their
   * own counters meanwhile instead of waiting for a command to time out. While first connecting a
   * command is tried, bounded by the timeout.
   */
  available(): boolean;
}

const DEFAULT_PROBE_INTERVAL_MS = 250;

export function createRedisLimiter(options: RedisLimiterOptions): RedisLimiter {
  const { keyPrefix, slotTtlMs, onError, onAvailabilityChange } = options;
  const probeIntervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS;
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
  redis.defineCommand('limitUndo', { numberOfKeys: 2, lua: UNDO_LUA });
  redis.defineCommand('limitProbe', { numberOfKeys: 1, lua: PROBE_LUA });
  let closed = false;
  let suspended = false;

  // One probe at a time until one is answered: a script that writes, as an acquire does. It runs
  // after every command sent before it, undos included, so the shared counters are whole again
  // when the limiter returns to them.
  const probe = (): void => {
    setTimeout(() => {
      if (closed) return;
      redis.limitProbe(`${keyPrefix}probe`).then(
        () => {
          if (closed) return;
          suspended = false;
          onAvailabilityChange(true);
        },
        probe,
      );
    }, probeIntervalMs).unref();
  };
  const suspend = (cause: unknown): void => {
    if (suspended || closed) return;
    suspended = true;
    onAvailabilityChange(false, cause);
    probe();
  };
  // A dropped connection suspends too, so an outage is told once however it began.
  redis.on('close', () => suspend(new Error('connection to Redis closed')));

  const keysOf = (keyId: string) => ({
    bucket: `${keyPrefix}{${keyId}}:bucket`,
    slots: `${keyPrefix}{${keyId}}:slots`,
  });

  return {
    available: () => !suspended && !['reconnecting', 'close', 'end'].includes(redis.status),

    async acquire(keyId: string, policy: LimitPolicy): Promise<Admission> {
      if (closed) throw new Error('limiter is closed');
      checkPolicy(keyId, policy);
      const { bucket, slots } = keysOf(keyId);
      const slotId = randomUUID();
      let reply: AcquireReply;
      try {
        reply = await redis.limitAcquire(bucket, slots, policy.ratePerSecond, policy.burst, policy.maxInFlight, slotId, slotTtlMs);
      } catch (error) {
        suspend(error);
        // The script may still run when Redis wakes; this runs right after it and undoes it.
        redis.limitUndo(bucket, slots, policy.burst, slotId).catch(onError);
        throw new Error(`rate limiter unavailable: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      const [admitted, reason, waitMicros] = reply;
      if (admitted === 1) {
        let releasing: Promise<void> | null = null;
        // Idempotent: the first call removes the slot, later calls share its outcome. A failed
        // removal is reported, not thrown: the response is already made and the slot expires anyway.
        // While Redis is not answering the removal is sent but not waited for: it runs when Redis wakes.
        const release = (): Promise<void> => {
          releasing ??= redis.zrem(slots, slotId).then(
            () => undefined,
            (error: unknown) => {
              suspend(error);
              onError(error);
            },
          );
          return suspended ? Promise.resolve() : releasing;
        };
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

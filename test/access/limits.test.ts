import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLimiter } from '../../src/access/limits.js';
import { type Admission, type LimitPolicy, type Limiter } from '../../src/access/limits-core.js';
import { createMemoryLimiter } from '../../src/access/limits-memory.js';
import { type PrivateRedis, redisServerInstalled, startPrivateRedis } from '../support/private-servers.js';

/** The release of an admission, failing the test if it was refused. */
function released(admission: Admission): () => Promise<void> {
  if (!admission.ok) throw new Error(`expected admission, got ${admission.reason} (${admission.retryAfterSeconds}s)`);
  return admission.release;
}

function refusal(admission: Admission): { reason: string; retryAfterSeconds: number } {
  if (admission.ok) throw new Error('expected a refusal');
  return { reason: admission.reason, retryAfterSeconds: admission.retryAfterSeconds };
}

const okCount = (admissions: Admission[]) => admissions.filter((a) => a.ok).length;

describe('in-process limiter', () => {
  let clock = 0;
  const now = () => clock;
  let limiter: Limiter;

  const fresh = (): Limiter => {
    clock = 1_000_000;
    limiter = createLimiter({ now });
    return limiter;
  };
  afterEach(() => limiter?.close());

  it('admits a burst, then refuses for rate with Retry-After from the refill time', async () => {
    const l = fresh();
    const policy: LimitPolicy = { ratePerSecond: 5, burst: 10, maxInFlight: 100 };
    for (let i = 0; i < 10; i++) released(await l.acquire('k', policy));
    // One token takes 200 ms at 5/s: rounded up to the whole second.
    expect(refusal(await l.acquire('k', policy))).toEqual({ reason: 'rate', retryAfterSeconds: 1 });

    const slow: LimitPolicy = { ratePerSecond: 0.4, burst: 1, maxInFlight: 100 };
    released(await l.acquire('slow', slow));
    expect(refusal(await l.acquire('slow', slow))).toEqual({ reason: 'rate', retryAfterSeconds: 3 }); // 2.5 s
    clock += 1000;
    expect(refusal(await l.acquire('slow', slow))).toEqual({ reason: 'rate', retryAfterSeconds: 2 }); // 1.5 s
    const slower: LimitPolicy = { ratePerSecond: 0.25, burst: 1, maxInFlight: 100 };
    released(await l.acquire('slower', slower));
    expect(refusal(await l.acquire('slower', slower))).toEqual({ reason: 'rate', retryAfterSeconds: 4 }); // exactly 4 s
  });

  it('refills at the policy rate and never beyond the burst', async () => {
    const l = fresh();
    const policy: LimitPolicy = { ratePerSecond: 5, burst: 10, maxInFlight: 100 };
    for (let i = 0; i < 10; i++) released(await l.acquire('k', policy));
    clock += 199;
    expect(refusal(await l.acquire('k', policy)).reason).toBe('rate');
    clock += 1;
    released(await l.acquire('k', policy));
    expect(refusal(await l.acquire('k', policy)).reason).toBe('rate');
    clock += 1000; // five more tokens
    for (let i = 0; i < 5; i++) released(await l.acquire('k', policy));
    expect(refusal(await l.acquire('k', policy)).reason).toBe('rate');

    clock += 3_600_000; // an hour idle refills to the burst, not to 18,000 tokens
    const admissions = await Promise.all(Array.from({ length: 15 }, () => l.acquire('k', policy)));
    expect(okCount(admissions)).toBe(10);
  });

  it('keeps keys apart', async () => {
    const l = fresh();
    const policy: LimitPolicy = { ratePerSecond: 1, burst: 1, maxInFlight: 1 };
    released(await l.acquire('a', policy));
    released(await l.acquire('b', policy));
    expect(refusal(await l.acquire('a', policy)).reason).toBe('rate');
  });

  it('caps requests in flight until one is released', async () => {
    const l = fresh();
    const policy: LimitPolicy = { ratePerSecond: 100, burst: 100, maxInFlight: 4 };
    const admissions = await Promise.all(Array.from({ length: 10 }, () => l.acquire('k', policy)));
    expect(okCount(admissions)).toBe(4);
    for (const refused of admissions.filter((a) => !a.ok)) {
      expect(refusal(refused)).toEqual({ reason: 'in_flight', retryAfterSeconds: 1 });
    }
    const first = admissions.find((a) => a.ok)!;
    await released(first)();
    released(await l.acquire('k', policy));
    expect(refusal(await l.acquire('k', policy)).reason).toBe('in_flight');
  });

  it('takes both a token and a slot or neither', async () => {
    const l = fresh();
    // Refused for in-flight: the token stays. Two tokens, one slot.
    const twoTokens: LimitPolicy = { ratePerSecond: 0.001, burst: 2, maxInFlight: 1 };
    const a = released(await l.acquire('k1', twoTokens));
    expect(refusal(await l.acquire('k1', twoTokens)).reason).toBe('in_flight');
    await a();
    released(await l.acquire('k1', twoTokens)); // the second token was not spent by the refusal

    // Refused for rate: no slot taken. One token a second, two slots.
    const twoSlots: LimitPolicy = { ratePerSecond: 1, burst: 1, maxInFlight: 2 };
    released(await l.acquire('k2', twoSlots));
    expect(refusal(await l.acquire('k2', twoSlots)).reason).toBe('rate');
    clock += 1000;
    released(await l.acquire('k2', twoSlots)); // the rate refusal left the second slot free
    clock += 1000;
    expect(refusal(await l.acquire('k2', twoSlots)).reason).toBe('in_flight');
  });

  it('frees a slot once however often release is called', async () => {
    const l = fresh();
    const policy: LimitPolicy = { ratePerSecond: 100, burst: 100, maxInFlight: 2 };
    const a = released(await l.acquire('k', policy));
    released(await l.acquire('k', policy));
    await a();
    await a();
    await a();
    released(await l.acquire('k', policy));
    // Had the repeats freed more, this would be admitted.
    expect(refusal(await l.acquire('k', policy)).reason).toBe('in_flight');
  });

  it('drops idle full buckets so memory stays bounded', async () => {
    clock = 0;
    const l = createMemoryLimiter({ now, minSweepSize: 10 });
    limiter = l;
    const policy: LimitPolicy = { ratePerSecond: 10, burst: 5, maxInFlight: 5 };
    for (let i = 0; i < 100; i++) await released(await l.acquire(`old-${i}`, policy))();
    expect(l.stats()).toEqual({ buckets: 100, inFlight: 0 });
    clock += 60_000; // the old buckets are full again
    for (let i = 0; i < 100; i++) await released(await l.acquire(`new-${i}`, policy))();
    // Without sweeping this would hold 200 buckets.
    expect(l.stats().buckets).toBeLessThanOrEqual(100);
    // A dropped bucket reads as full: the whole burst is there.
    const again = await Promise.all(Array.from({ length: 7 }, () => l.acquire('old-0', policy)));
    expect(okCount(again)).toBe(5);
  });

  it('rejects a policy that could never admit or never refill', async () => {
    const l = fresh();
    await expect(l.acquire('k', { ratePerSecond: 0, burst: 1, maxInFlight: 1 })).rejects.toThrow(/ratePerSecond/);
    await expect(l.acquire('k', { ratePerSecond: 1, burst: 0, maxInFlight: 1 })).rejects.toThrow(/burst/);
    await expect(l.acquire('k', { ratePerSecond: 1, burst: 1, maxInFlight: 0 })).rejects.toThrow(/maxInFlight/);
    await expect(l.acquire('', { ratePerSecond: 1, burst: 1, maxInFlight: 1 })).rejects.toThrow(/keyId/);
  });
});

describe('Redis limiter, Redis unreachable', () => {
  const policy: LimitPolicy = { ratePerSecond: 1, burst: 1, maxInFlight: 1 };

  // Fail over, not open and not closed: the process enforces the plan's limits on its own.
  async function expectLocalLimits(limiter: Limiter): Promise<void> {
    const started = Date.now();
    const first = await limiter.acquire('k', policy);
    expect(first.ok).toBe(true);
    const second = await limiter.acquire('k', policy);
    expect(second).toMatchObject({ ok: false });
    expect(Date.now() - started).toBeLessThan(2_000);
  }

  it('falls back to in-process limits instead of hanging when Redis accepts but never answers', async () => {
    // A TCP peer that never replies: only the command timeout can end the wait.
    const sockets = new Set<Socket>();
    const server: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const limiter = createLimiter({ redisUrl: `redis://127.0.0.1:${port}`, timeoutMs: 300 });
    try {
      await expectLocalLimits(limiter);
    } finally {
      await limiter.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('falls back to in-process limits when nothing listens', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const limiter = createLimiter({ redisUrl: `redis://127.0.0.1:${port}`, timeoutMs: 300 });
    try {
      await expectLocalLimits(limiter);
    } finally {
      await limiter.close();
    }
  });
});

describe.skipIf(!redisServerInstalled())('Redis limiter, Redis hung with its connection open', () => {
  let redis: PrivateRedis;
  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    redis.resume();
    await redis.stop();
  });

  async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
    const until = Date.now() + 5_000;
    while (!(await check())) {
      if (Date.now() > until) throw new Error(`not within 5 s: ${what}`);
      await sleep(50);
    }
  }

  it('pays the timeout once, then uses its own counters; the calls that timed out take nothing when Redis wakes', { timeout: 20_000 }, async () => {
    const logs: string[] = [];
    const log = { info: (message: string) => logs.push(`info: ${message}`), warn: (message: string) => logs.push(`warn: ${message}`) };
    const timeoutMs = 300;
    const limiter = createLimiter({ redisUrl: redis.url, keyPrefix: 'hung:', timeoutMs, log, probeIntervalMs: 100 });
    const inspect = new Redis(redis.url);
    try {
      // Connected: a call reaches Redis.
      await eventually(async () => {
        await released(await limiter.acquire('warm-up', { ratePerSecond: 1000, burst: 1000, maxInFlight: 1000 }))();
        return (await inspect.exists('hung:{warm-up}:bucket')) === 1;
      }, 'the limiter uses Redis');
      const policy: LimitPolicy = { ratePerSecond: 0.001, burst: 5, maxInFlight: 100 };
      await released(await limiter.acquire('k', policy))(); // 4 tokens left in Redis

      redis.pause();
      try {
        // Sent before anyone knew: these wait for the timeout, then the process's own bucket of 5 admits them.
        const first = await Promise.all(Array.from({ length: 5 }, () => limiter.acquire('k', policy)));
        expect(okCount(first)).toBe(5);
        await Promise.all(first.map((admission) => released(admission)()));
        // From now on no call waits for Redis: the own bucket is empty and refuses at once.
        for (let i = 0; i < 5; i++) {
          const started = performance.now();
          expect(refusal(await limiter.acquire('k', policy)).reason).toBe('rate');
          expect(performance.now() - started).toBeLessThan(timeoutMs / 3);
        }
      } finally {
        redis.resume();
      }
      await eventually(async () => logs.length === 2, 'the limiter is back on Redis');
      expect(logs).toEqual([expect.stringMatching(/^warn: rate limits: Redis not answering/), expect.stringMatching(/^info: rate limits: Redis answers again/)]);
      expect(logs.join()).not.toContain('{k}');

      // The five scripts Redis ran late gave back what they took: the 4 tokens are still there.
      expect(await inspect.zcard('hung:{k}:slots')).toBe(0);
      const after = await Promise.all(Array.from({ length: 5 }, () => limiter.acquire('k', policy)));
      expect(okCount(after)).toBe(4);
    } finally {
      inspect.disconnect();
      await limiter.close();
    }
  });
});

describe.skipIf(!redisServerInstalled())('Redis limiter, Redis answering PING but refusing writes', () => {
  let redis: PrivateRedis;
  beforeAll(async () => {
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('stands aside once and stays aside while writes fail (a read-only replica), not flipping at every probe', { timeout: 20_000 }, async () => {
    const logs: string[] = [];
    const log = { info: (message: string) => logs.push(`info: ${message}`), warn: (message: string) => logs.push(`warn: ${message}`) };
    const limiter = createLimiter({ redisUrl: redis.url, keyPrefix: 'ro:', log, probeIntervalMs: 50 });
    const admin = new Redis(redis.url);
    const policy: LimitPolicy = { ratePerSecond: 1000, burst: 1000, maxInFlight: 1000 };
    try {
      await released(await limiter.acquire('k', policy))();
      expect(await admin.exists('ro:{k}:bucket')).toBe(1);
      // A failover left it a replica (of nothing that answers): every write refused, PING answered.
      await admin.call('REPLICAOF', '127.0.0.1', '1');
      const until = performance.now() + 1_500;
      while (performance.now() < until) {
        released(await limiter.acquire('k', policy));
        await sleep(20);
      }
      expect(logs).toEqual([expect.stringMatching(/^warn: rate limits: Redis not answering.*/)]);

      await admin.call('REPLICAOF', 'NO', 'ONE');
      const back = performance.now() + 5_000;
      while (!logs.some((line) => line.startsWith('info:'))) {
        if (performance.now() > back) throw new Error('not back on Redis within 5 s');
        await sleep(20);
      }
      await admin.del('ro:{k}:bucket');
      released(await limiter.acquire('k', policy));
      expect(await admin.exists('ro:{k}:bucket')).toBe(1);
    } finally {
      await admin.call('REPLICAOF', 'NO', 'ONE').catch(() => {});
      admin.disconnect();
      await limiter.close();
    }
  });
});

describe.runIf(process.env.REDIS_URL)('Redis limiter', () => {
  const redisUrl = process.env.REDIS_URL!;
  const keyPrefix = `test:limits:${process.pid}:${randomUUID()}:`;
  let inspect: Redis;
  const open: Limiter[] = [];

  /** A limiter standing for one server process. */
  const processLimiter = (options: { slotTtlMs?: number } = {}): Limiter => {
    const limiter = createLimiter({ redisUrl, keyPrefix, ...options });
    open.push(limiter);
    return limiter;
  };
  const keyId = () => `key-${randomUUID()}`;

  beforeAll(() => {
    inspect = new Redis(redisUrl);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((l) => l.close()));
  });
  afterAll(async () => {
    const keys = await inspect.keys(`${keyPrefix}*`);
    if (keys.length > 0) await inspect.del(...keys);
    await inspect.quit();
  });

  it('admits a burst, then refuses for rate with Retry-After, and refills', async () => {
    const l = processLimiter();
    const id = keyId();
    const policy: LimitPolicy = { ratePerSecond: 5, burst: 2, maxInFlight: 100 };
    released(await l.acquire(id, policy));
    released(await l.acquire(id, policy));
    expect(refusal(await l.acquire(id, policy))).toEqual({ reason: 'rate', retryAfterSeconds: 1 });
    await sleep(250); // one token at 5/s takes 200 ms
    released(await l.acquire(id, policy));
    expect(refusal(await l.acquire(id, policy)).reason).toBe('rate');

    const slow: LimitPolicy = { ratePerSecond: 0.25, burst: 1, maxInFlight: 100 };
    const slowId = keyId();
    released(await l.acquire(slowId, slow));
    expect(refusal(await l.acquire(slowId, slow))).toEqual({ reason: 'rate', retryAfterSeconds: 4 });
  });

  it('caps in flight, refuses without spending the token, and releases once', async () => {
    const l = processLimiter();
    const id = keyId();
    const policy: LimitPolicy = { ratePerSecond: 0.001, burst: 3, maxInFlight: 1 };
    const a = released(await l.acquire(id, policy));
    expect(refusal(await l.acquire(id, policy))).toEqual({ reason: 'in_flight', retryAfterSeconds: 1 });
    await a();
    const b = released(await l.acquire(id, policy));
    await a(); // a second release of a must not free b's slot
    expect(refusal(await l.acquire(id, policy)).reason).toBe('in_flight');
    await b();
    // Three tokens, three admissions: the in-flight refusals spent none.
    released(await l.acquire(id, policy));
  });

  it('does not take a slot when refusing for rate', async () => {
    const l = processLimiter();
    const id = keyId();
    const policy: LimitPolicy = { ratePerSecond: 5, burst: 1, maxInFlight: 2 };
    released(await l.acquire(id, policy));
    expect(refusal(await l.acquire(id, policy)).reason).toBe('rate');
    expect(await inspect.zcard(`${keyPrefix}{${id}}:slots`)).toBe(1);
    await sleep(250);
    released(await l.acquire(id, policy));
    await sleep(250);
    expect(refusal(await l.acquire(id, policy)).reason).toBe('in_flight');
  });

  it('enforces one rate limit across two processes', async () => {
    const [p1, p2] = [processLimiter(), processLimiter()];
    const id = keyId();
    const policy: LimitPolicy = { ratePerSecond: 0.01, burst: 10, maxInFlight: 100 };
    const admissions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? p1 : p2).acquire(id, policy)));
    expect(okCount(admissions)).toBe(10);
    expect(admissions.filter((a) => !a.ok).every((a) => refusal(a).reason === 'rate')).toBe(true);
  });

  it('enforces one in-flight cap across two processes', async () => {
    const [p1, p2] = [processLimiter(), processLimiter()];
    const id = keyId();
    const policy: LimitPolicy = { ratePerSecond: 100, burst: 100, maxInFlight: 4 };
    const fromP1 = await Promise.all(Array.from({ length: 15 }, () => p1.acquire(id, policy)));
    const fromP2 = await Promise.all(Array.from({ length: 15 }, () => p2.acquire(id, policy)));
    const all = [...fromP1, ...fromP2];
    expect(okCount(all)).toBe(4);
    // A release in one process frees a slot for the other.
    const holder = all.find((a) => a.ok)!;
    await released(holder)();
    released(await p2.acquire(id, policy));
    expect(refusal(await p1.acquire(id, policy)).reason).toBe('in_flight');
  });

  it('expires the slots of a process that died holding them', async () => {
    const crashed = processLimiter({ slotTtlMs: 400 });
    const survivor = processLimiter();
    const id = keyId();
    const policy: LimitPolicy = { ratePerSecond: 100, burst: 100, maxInFlight: 2 };
    released(await crashed.acquire(id, policy));
    released(await crashed.acquire(id, policy));
    await crashed.close(); // gone without releasing
    expect(refusal(await survivor.acquire(id, policy)).reason).toBe('in_flight');
    await sleep(500);
    released(await survivor.acquire(id, policy));
  });

  it('stores only the opaque key id, with TTLs on every key', async () => {
    const l = processLimiter();
    const id = keyId();
    const policy: LimitPolicy = { ratePerSecond: 5, burst: 10, maxInFlight: 4 };
    const release = released(await l.acquire(id, policy));

    const keys = (await inspect.keys(`${keyPrefix}{${id}}:*`)).sort();
    expect(keys).toEqual([`${keyPrefix}{${id}}:bucket`, `${keyPrefix}{${id}}:slots`]);
    const bucketTtl = await inspect.pttl(`${keyPrefix}{${id}}:bucket`);
    expect(bucketTtl).toBeGreaterThan(0);
    expect(bucketTtl).toBeLessThanOrEqual(1_200); // one token at 5/s, plus the 1 s margin
    const slotsTtl = await inspect.pttl(`${keyPrefix}{${id}}:slots`);
    expect(slotsTtl).toBeGreaterThan(0);
    expect(slotsTtl).toBeLessThanOrEqual(61_000);
    expect(Number(await inspect.hget(`${keyPrefix}{${id}}:bucket`, 'tokens'))).toBeCloseTo(9, 2);

    await release();
    expect(await inspect.exists(`${keyPrefix}{${id}}:slots`)).toBe(0); // the last slot removed the set
  });

  it('rejects acquire after close', async () => {
    const l = processLimiter();
    await l.close();
    await expect(l.acquire(keyId(), { ratePerSecond: 1, burst: 1, maxInFlight: 1 })).rejects.toThrow(/closed/);
  });
});

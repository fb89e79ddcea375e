import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { createInstagramClient, type InstagramClient } from '../../src/upstreams/instagram/client.js';
import { INSTAGRAM_SIM_USERS, startInstagramSimulator, type InstagramSimulator } from '../../src/upstreams/instagram/simulator.js';
import { UpstreamNotFoundError, UpstreamUnavailableError } from '../../src/upstreams/errors.js';

let sim: InstagramSimulator;

beforeAll(async () => {
  sim = await startInstagramSimulator();
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.setMode('ok');
  sim.resetRequestCounts();
});

const feedPath = (userId: string): string => `/api/v1/feed/user/${userId}/`;

/** The rejection of a call, failing the test if the call succeeds. */
async function failureOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.fail('expected the call to fail'),
    (error: unknown) => error,
  );
}

async function expectUnavailable(call: Promise<unknown>, reason: UpstreamUnavailableError['reason']): Promise<void> {
  const error = await failureOf(call);
  expect(error).toBeInstanceOf(UpstreamUnavailableError);
  expect((error as UpstreamUnavailableError).reason).toBe(reason);
}

describe('instagram client: upstream errors', () => {
  const client = (timeoutMs?: number) => createInstagramClient({ baseUrl: sim.url, timeoutMs });

  it('throws UpstreamNotFoundError on a 404', async () => {
    await expect(client().fetchUserMedias(INSTAGRAM_SIM_USERS.notFound)).rejects.toBeInstanceOf(UpstreamNotFoundError);
    expect(sim.requestCount()).toBe(1);
  });

  it('throws UpstreamNotFoundError for an id that is not all digits, without asking the upstream', async () => {
    for (const userId of ['no-such.user', '..', '']) {
      await expect(client().fetchUserMedias(userId)).rejects.toBeInstanceOf(UpstreamNotFoundError);
    }
    expect(sim.requestCount()).toBe(0);
  });

  it('throws UpstreamUnavailableError on a 5xx', async () => {
    await expectUnavailable(client().fetchUserMedias(INSTAGRAM_SIM_USERS.serverError), 'status');
  });

  it('throws UpstreamUnavailableError, never a TypeError, on a body of the wrong shape or not JSON at all', async () => {
    await expectUnavailable(client().fetchUserMedias(INSTAGRAM_SIM_USERS.malformed), 'malformed');
    sim.setMode('malformed');
    await expectUnavailable(client().fetchUserMedias(INSTAGRAM_SIM_USERS.standard), 'malformed');
  });

  it('gives up on an upstream that never answers after timeoutMs', async () => {
    const started = performance.now();
    await expectUnavailable(client(200).fetchUserMedias(INSTAGRAM_SIM_USERS.hangs), 'timeout');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('gives up on a slow upstream after timeoutMs, and succeeds once it answers in time', async () => {
    sim.setMode('slow', { delayMs: 1_000 });
    await expectUnavailable(client(200).fetchUserMedias(INSTAGRAM_SIM_USERS.standard), 'timeout');
    sim.setMode('slow', { delayMs: 20 });
    await expect(client(5_000).fetchUserMedias(INSTAGRAM_SIM_USERS.standard)).resolves.toMatchObject({ more: true });
  });

  it('throws UpstreamUnavailableError when nothing listens at the upstream address', async () => {
    const gone = await startInstagramSimulator();
    await gone.close();
    await expectUnavailable(createInstagramClient({ baseUrl: gone.url }).fetchUserMedias(INSTAGRAM_SIM_USERS.standard), 'network');
  });
});

describe('instagram client: single flight', () => {
  it('serves 20 concurrent identical calls with exactly one upstream request', async () => {
    const client = createInstagramClient({ baseUrl: sim.url });
    const pages = await Promise.all(Array.from({ length: 20 }, () => client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard)));

    expect(sim.requestCount(feedPath(INSTAGRAM_SIM_USERS.standard))).toBe(1);
    expect(pages[0].medias).toHaveLength(12);
    for (const page of pages) expect(page).toBe(pages[0]);
  });

  it('shares a failure the same way, counting it once toward the breaker', async () => {
    const client = createInstagramClient({ baseUrl: sim.url, breaker: { minimumCalls: 2, minimumFailingKeys: 1 } });
    const calls = Array.from({ length: 20 }, () => failureOf(client.fetchUserMedias(INSTAGRAM_SIM_USERS.serverError)));
    const errors = await Promise.all(calls);

    expect(sim.requestCount()).toBe(1);
    for (const error of errors) expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(client.breakerState).toBe('closed');
  });

  it('does not share calls for another offset or another account, nor calls made one after another', async () => {
    const client = createInstagramClient({ baseUrl: sim.url });
    const first = await client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard);
    await Promise.all([
      client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard),
      client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard, first.offset),
      client.fetchUserMedias(INSTAGRAM_SIM_USERS.pinnedPost),
    ]);
    expect(sim.requestCount()).toBe(4);
  });
});

describe('instagram client: circuit breaker', () => {
  const cooldownMs = 250;
  // Open at 4 calls in the window, half of them failures, from 3 accounts or more.
  const client = (cooldown = cooldownMs, timeoutMs?: number) =>
    createInstagramClient({ baseUrl: sim.url, timeoutMs, breaker: { minimumCalls: 4, failureRate: 0.5, minimumFailingKeys: 3, cooldownMs: cooldown, negativeCacheMs: 60_000 } });
  /** Distinct accounts the simulator serves normally. */
  const accounts = (n: number) => Array.from({ length: n }, (_, i) => String(2_000 + i));

  /** An upstream outage: every account fails. */
  async function outage(instagram: InstagramClient, n = 4): Promise<void> {
    sim.setMode('fail');
    for (const account of accounts(n)) await expectUnavailable(instagram.fetchUserMedias(account), 'status');
  }

  it('one account failing again and again never opens the circuit: it fails fast on its own', async () => {
    const instagram = client(60_000);
    for (let i = 0; i < 50; i++) await failureOf(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.serverError));
    for (let i = 0; i < 50; i++) await failureOf(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.malformed));
    expect(instagram.breakerState).toBe('closed');
    // Each broken account reached the upstream once; the retries were answered from the negative cache.
    expect(sim.requestCount(feedPath(INSTAGRAM_SIM_USERS.serverError))).toBe(1);
    expect(sim.requestCount(feedPath(INSTAGRAM_SIM_USERS.malformed))).toBe(1);
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.serverError), 'recent-failure');
    // Every other caller is served.
    await expect(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard)).resolves.toMatchObject({ more: true });
  });

  it('a failing account is asked again once its negative cache entry expires', async () => {
    const instagram = createInstagramClient({ baseUrl: sim.url, breaker: { negativeCacheMs: 100 } });
    await failureOf(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.serverError));
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.serverError), 'recent-failure');
    await sleep(150);
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.serverError), 'status');
    expect(sim.requestCount(feedPath(INSTAGRAM_SIM_USERS.serverError))).toBe(2);
  });

  it('keeps the negative cache bounded', async () => {
    const instagram = createInstagramClient({ baseUrl: sim.url, breaker: { negativeCacheSize: 5, minimumCalls: 1_000 } });
    sim.setMode('fail');
    for (const account of accounts(20)) await failureOf(instagram.fetchUserMedias(account));
    expect(instagram.cachedFailures).toBe(5);
  });

  it('opens when failures spread over several accounts, then fails fast without calling the upstream', async () => {
    const instagram = client(60_000);
    await outage(instagram);
    expect(instagram.breakerState).toBe('open');
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard), 'circuit-open');
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.pinnedPost), 'circuit-open');
    expect(sim.requestCount()).toBe(4);
  });

  it('does not open below the minimum number of calls, or below the failure rate', async () => {
    const few = client(60_000);
    sim.setMode('fail');
    for (const account of accounts(3)) await failureOf(few.fetchUserMedias(account));
    expect(few.breakerState).toBe('closed');

    const mostlyHealthy = client(60_000);
    sim.setMode('ok');
    for (const account of accounts(8).slice(4)) await mostlyHealthy.fetchUserMedias(account);
    sim.setMode('fail');
    for (const account of accounts(3)) await failureOf(mostlyHealthy.fetchUserMedias(account));
    expect(mostlyHealthy.breakerState).toBe('closed');
  });

  it('lets one trial through after the cool-down and closes when it succeeds', async () => {
    const instagram = client();
    await outage(instagram);
    await sleep(cooldownMs + 20);
    expect(instagram.breakerState).toBe('half-open');

    sim.setMode('ok');
    await expect(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard)).resolves.toMatchObject({ more: true });
    expect(instagram.breakerState).toBe('closed');
    expect(sim.requestCount()).toBe(5);
  });

  it('fails fast for other calls while the trial is in flight', async () => {
    const instagram = client();
    await outage(instagram);
    await sleep(cooldownMs + 20);

    sim.setMode('slow', { delayMs: 50 });
    const trial = instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard);
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.pinnedPost), 'circuit-open');
    await expect(trial).resolves.toMatchObject({ more: true });
    expect(instagram.breakerState).toBe('closed');
  });

  it('opens again for a whole cool-down when the trial fails', async () => {
    const instagram = client();
    await outage(instagram);
    await sleep(cooldownMs + 20);

    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard), 'status');
    expect(instagram.breakerState).toBe('open');
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.pinnedPost), 'circuit-open');
    expect(sim.requestCount()).toBe(5);
  });

  it('does not count a 404 as a failure, nor cache it', async () => {
    const instagram = client();
    for (let i = 0; i < 20; i++) await expect(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.notFound)).rejects.toBeInstanceOf(UpstreamNotFoundError);
    expect(instagram.breakerState).toBe('closed');
    expect(sim.requestCount(feedPath(INSTAGRAM_SIM_USERS.notFound))).toBe(20);
  });

  it('counts timeouts and malformed bodies as failures', async () => {
    const instagram = client(cooldownMs, 50);
    await instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard);
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.hangs), 'timeout');
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.malformed), 'malformed');
    expect(instagram.breakerState).toBe('closed');
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.serverError), 'status');
    expect(instagram.breakerState).toBe('open');
  });
});

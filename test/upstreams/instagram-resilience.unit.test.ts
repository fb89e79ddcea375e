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

  it('throws UpstreamUnavailableError with reason rejected on a 400 (a max_id the platform never issued)', async () => {
    await expectUnavailable(client().fetchUserMedias(INSTAGRAM_SIM_USERS.standard, 'no_such_cursor'), 'rejected');
  });

  it('throws UpstreamUnavailableError, never a TypeError, on a body of the wrong shape or not JSON at all', async () => {
    await expectUnavailable(client().fetchUserMedias(INSTAGRAM_SIM_USERS.malformed), 'malformed');
    await expectUnavailable(client().fetchUserMedias(INSTAGRAM_SIM_USERS.notJson), 'malformed');
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
    // Two failing accounts would open it.
    const client = createInstagramClient({ baseUrl: sim.url, breaker: { minimumFailingKeys: 2 } });
    await client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard);
    sim.setMode('fail');
    const calls = Array.from({ length: 20 }, () => failureOf(client.fetchUserMedias(INSTAGRAM_SIM_USERS.standard)));
    const errors = await Promise.all(calls);

    expect(sim.requestCount()).toBe(2);
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
  // Open when 3 accounts or more that were being served fail, half of those seen or more.
  const client = (cooldown = cooldownMs, timeoutMs?: number) =>
    createInstagramClient({ baseUrl: sim.url, timeoutMs, breaker: { failureRate: 0.5, minimumFailingKeys: 3, cooldownMs: cooldown, negativeCacheMs: 60_000 } });
  /** Distinct accounts the simulator serves normally. */
  const accounts = (n: number) => Array.from({ length: n }, (_, i) => String(2_000 + i));
  /** Accounts the simulator always fails on: three answer 500, one a body of the wrong shape, one a body that is not JSON. */
  const failingAccounts = ['5000', '5001', '5002', INSTAGRAM_SIM_USERS.malformed, INSTAGRAM_SIM_USERS.notJson];

  async function serve(instagram: InstagramClient, userIds: string[]): Promise<void> {
    for (const userId of userIds) await instagram.fetchUserMedias(userId);
  }

  /** An upstream outage: the accounts it was serving fail. */
  async function outage(instagram: InstagramClient, n = 3): Promise<void> {
    await serve(instagram, accounts(n));
    sim.setMode('fail');
    for (const account of accounts(n)) await expectUnavailable(instagram.fetchUserMedias(account), 'status');
    sim.resetRequestCounts();
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

  it('accounts the upstream never served cannot open the circuit, however many fail and however often', async () => {
    const instagram = createInstagramClient({ baseUrl: sim.url, breaker: { negativeCacheMs: 20, cooldownMs: 60_000 } });
    await serve(instagram, [INSTAGRAM_SIM_USERS.standard]);
    for (let round = 0; round < 5; round++) {
      for (const account of failingAccounts) await failureOf(instagram.fetchUserMedias(account));
      await sleep(25);
    }
    // Every round reached the upstream: the failures were real, and they were many.
    for (const account of failingAccounts) expect(sim.requestCount(feedPath(account))).toBe(5);
    expect(instagram.breakerState).toBe('closed');
    await expect(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard)).resolves.toMatchObject({ more: true });
  });

  it('a platform 4xx (a max_id it never issued) is neither a failure nor remembered', async () => {
    const instagram = client(60_000);
    await serve(instagram, accounts(3));
    for (let i = 0; i < 10; i++) {
      for (const account of accounts(3)) await expectUnavailable(instagram.fetchUserMedias(account, `forged_${i}`), 'rejected');
    }
    expect(instagram.breakerState).toBe('closed');
    // Each refusal was asked of the upstream (nothing was cached), and the accounts are still served.
    for (const account of accounts(3)) expect(sim.requestCount(feedPath(account))).toBe(11);
    for (const account of accounts(3)) await expect(instagram.fetchUserMedias(account)).resolves.toMatchObject({ more: true });
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
    const instagram = createInstagramClient({ baseUrl: sim.url, breaker: { negativeCacheSize: 5 } });
    sim.setMode('fail');
    for (const account of accounts(20)) await failureOf(instagram.fetchUserMedias(account));
    expect(instagram.cachedFailures).toBe(5);
  });

  it('opens when accounts it was serving fail, then fails fast without calling the upstream', async () => {
    const instagram = client(60_000);
    await outage(instagram);
    expect(instagram.breakerState).toBe('open');
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard), 'circuit-open');
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.pinnedPost), 'circuit-open');
    expect(sim.requestCount()).toBe(0);
  });

  it('does not open below the minimum number of failing accounts, or below the failure rate', async () => {
    const few = client(60_000);
    await serve(few, accounts(3));
    sim.setMode('fail');
    for (const account of accounts(2)) await failureOf(few.fetchUserMedias(account));
    expect(few.breakerState).toBe('closed');

    // 3 of the 8 accounts served in the window fail: below half.
    const mostlyHealthy = client(60_000);
    sim.setMode('ok');
    await serve(mostlyHealthy, accounts(8));
    sim.setMode('fail');
    for (const account of accounts(3)) await failureOf(mostlyHealthy.fetchUserMedias(account));
    expect(mostlyHealthy.breakerState).toBe('closed');
    // A fourth makes it half.
    await failureOf(mostlyHealthy.fetchUserMedias(accounts(4)[3]));
    expect(mostlyHealthy.breakerState).toBe('open');
  });

  it('lets one trial through after the cool-down and closes when it succeeds', async () => {
    const instagram = client();
    await outage(instagram);
    await sleep(cooldownMs + 20);
    expect(instagram.breakerState).toBe('half-open');

    sim.setMode('ok');
    await expect(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard)).resolves.toMatchObject({ more: true });
    expect(instagram.breakerState).toBe('closed');
    expect(sim.requestCount()).toBe(1);
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

  it('opens again for a whole cool-down when the trial fails for an account it was serving', async () => {
    const instagram = client();
    await serve(instagram, [INSTAGRAM_SIM_USERS.standard]);
    await outage(instagram);
    await sleep(cooldownMs + 20);

    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard), 'status');
    expect(instagram.breakerState).toBe('open');
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.pinnedPost), 'circuit-open');
    expect(sim.requestCount()).toBe(1);
  });

  it('a trial that fails for an account never served leaves the circuit half-open for the next call', async () => {
    const instagram = client();
    await outage(instagram);
    await sleep(cooldownMs + 20);

    sim.setMode('ok');
    await expectUnavailable(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.serverError), 'status');
    expect(instagram.breakerState).toBe('half-open');
    await expect(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.standard)).resolves.toMatchObject({ more: true });
    expect(instagram.breakerState).toBe('closed');
  });

  it('does not count a 404 as a failure, nor cache it', async () => {
    const instagram = client();
    for (let i = 0; i < 20; i++) await expect(instagram.fetchUserMedias(INSTAGRAM_SIM_USERS.notFound)).rejects.toBeInstanceOf(UpstreamNotFoundError);
    expect(instagram.breakerState).toBe('closed');
    expect(sim.requestCount(feedPath(INSTAGRAM_SIM_USERS.notFound))).toBe(20);
  });

  it('counts timeouts and malformed bodies of accounts it was serving as failures', async () => {
    const slow = client(cooldownMs, 50);
    await serve(slow, accounts(3));
    sim.setMode('slow', { delayMs: 500 });
    for (const account of accounts(3)) await expectUnavailable(slow.fetchUserMedias(account), 'timeout');
    expect(slow.breakerState).toBe('open');

    const malformed = client(cooldownMs);
    sim.setMode('ok');
    await serve(malformed, accounts(3));
    sim.setMode('malformed');
    for (const account of accounts(3)) await expectUnavailable(malformed.fetchUserMedias(account), 'malformed');
    expect(malformed.breakerState).toBe('open');
  });
});

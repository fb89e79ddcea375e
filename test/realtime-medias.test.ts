import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import type { Logger } from '../src/observability/log.js';
import { createAccount, issueKey } from '../src/store/accounts.js';
import type { CircuitBreakerOptions } from '../src/upstreams/circuit-breaker.js';
import { createUpstreamHttp } from '../src/upstreams/http.js';
import { createInstagramClient, type InstagramClient } from '../src/upstreams/instagram/client.js';
import {
  INSTAGRAM_SIM_USERS,
  type InstagramSimulator,
  type SimFeedItem,
  type SimFeedPage,
  type SimMedia,
  type SimVersion,
  startInstagramSimulator,
} from '../src/upstreams/instagram/simulator.js';
import { createTestApp, type TestApp } from './support/app.js';
import { createTestStore } from './support/store.js';

const PATH = '/api/v1/instagram/realtime/user/medias';
const USER = INSTAGRAM_SIM_USERS.standard;
let app: TestApp;
let sim: InstagramSimulator;
let key: string;

const feedPath = (userId: string) => `/api/v1/feed/user/${userId}/`;
const url = (params: Record<string, string>) => `${PATH}?${new URLSearchParams(params)}`;

function freshClient(options: { timeoutMs?: number; breaker?: CircuitBreakerOptions } = {}): InstagramClient {
  return createInstagramClient({ baseUrl: sim.url, timeoutMs: options.timeoutMs ?? 2_000, breaker: options.breaker });
}

beforeAll(async () => {
  sim = await startInstagramSimulator();
  app = await createTestApp({}, { instagram: freshClient() });
  key = await app.newKey({ plan: 'pro', ratePerSecond: 10_000 });
});
afterAll(async () => {
  await app?.close();
  await sim?.close();
});
beforeEach(() => {
  sim.setMode('ok');
  sim.resetRequestCounts();
  // Each test starts with a closed circuit; the services object is read per request.
  app.services.instagram = freshClient();
});

async function remaining(useKey = key): Promise<number> {
  const ping = await app.rest('/api/ping', { key: useKey });
  return Number(ping.headers.get('x-quota-remaining'));
}

/** The upstream's own page, read straight from the simulator. */
async function upstreamPage(userId: string, maxId = ''): Promise<SimFeedPage> {
  const query = maxId ? `?max_id=${encodeURIComponent(maxId)}` : '';
  const response = await fetch(`${sim.url}${feedPath(userId)}${query}`);
  return (await response.json()) as SimFeedPage;
}

// docs/contract/decisions.md §3, written out independently of the client's mapping.
const area = (v: SimVersion) => v.width * v.height;
const largest = (versions: SimVersion[]) => versions.reduce((best, v) => (area(v) > area(best) ? v : best));
const mainUrl = (m: SimMedia | SimFeedItem) => largest(m.media_type === 2 ? m.video_versions! : m.image_versions2!.candidates).url;

function expectedItem(item: SimFeedItem) {
  const parts: (SimMedia | SimFeedItem)[] = item.media_type === 8 ? item.carousel_media! : [item];
  const lead = parts[0];
  return {
    author_user_id: item.user.pk,
    author_username: item.user.username,
    author_nickname: item.user.full_name,
    media_id: item.pk,
    media_code: item.code,
    create_at: new Date(item.taken_at * 1000).toISOString(),
    cover_url: lead.image_versions2!.candidates[0].url,
    resources: parts.map(mainUrl),
    description: item.caption?.text ?? '',
    accessibility_caption: item.accessibility_caption ?? '',
    media_url: mainUrl(lead),
    media_type: item.media_type,
    duration: lead.media_type === 2 ? Math.round(lead.video_duration!) : 0,
    like_count: item.like_count,
    comment_count: item.comment_count,
    play_count: item.play_count ?? 0,
  };
}

describe('realtime media list over REST', () => {
  it('maps every media kind field by field, newest first, and charges 100 units', async () => {
    const before = await remaining();
    const response = await app.rest(url({ user_id: USER }), { key });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ success: true, code: 200, message: 'success' });
    expect(Number(response.headers.get('x-quota-remaining'))).toBe(before - 100);

    const upstream = await upstreamPage(USER);
    const want = upstream.items.map(expectedItem).sort((a, b) => (a.create_at < b.create_at ? 1 : -1));
    const data = response.body.data;
    expect(Object.keys(data).sort()).toEqual(['medias', 'more', 'offset']);
    expect(data.more).toBe(true);
    // Opaque: the upstream's cursor, sealed (the paging test follows it).
    expect(data.offset).toMatch(/^[\w-]+\.[\w-]+$/);
    expect(data.offset).not.toContain(upstream.next_max_id);
    expect(data.medias).toEqual(want);
    expect(new Set(data.medias.map((m: { media_type: number }) => m.media_type))).toEqual(new Set([1, 2, 8]));
    // Media pks pass 2^53 and must arrive intact, as strings.
    expect(BigInt(data.medias[0].media_id)).toBeGreaterThan(BigInt(Number.MAX_SAFE_INTEGER));
    // A video's play count passes 2^31 and stays an exact JSON integer.
    expect(data.medias.some((m: { play_count: number }) => m.play_count > 2 ** 31)).toBe(true);
  });

  it('pages to the last feed page through offset, never repeating a post', async () => {
    const seen: string[] = [];
    const times: string[] = [];
    let offset = '';
    let pages = 0;
    for (;;) {
      const response = await app.rest(url(offset ? { user_id: USER, offset } : { user_id: USER }), { key });
      expect(response.status).toBe(200);
      const data = response.body.data;
      pages += 1;
      seen.push(...data.medias.map((m: { media_id: string }) => m.media_id));
      times.push(...data.medias.map((m: { create_at: string }) => m.create_at));
      if (!data.more) {
        expect(data.offset).toBe('');
        break;
      }
      offset = data.offset;
    }
    // The same walk straight on the upstream.
    const upstreamIds: string[] = [];
    let maxId = '';
    let upstreamPages = 0;
    for (;;) {
      const page = await upstreamPage(USER, maxId);
      upstreamPages += 1;
      upstreamIds.push(...page.items.map((item) => item.pk));
      if (!page.more_available) break;
      maxId = page.next_max_id!;
    }
    expect(pages).toBe(upstreamPages);
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual(upstreamIds);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...times].sort().reverse()).toEqual(times);
  });

  it('answers an account without posts with more false and an empty list', async () => {
    const response = await app.rest(url({ user_id: INSTAGRAM_SIM_USERS.noPosts }), { key });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ more: false, offset: '', medias: [] });
  });

  it('writes every fetched post to medias and its author to creators, without clobbering other columns', async () => {
    const userId = '1777';
    // A creator row for the account that already carries metrics from another source.
    await app.store.db
      .insertInto('creators')
      .values({
        platform: 'instagram', user_id: userId, username: 'old_name', full_name: 'Old Name', country: 'BR',
        follower_count: 12_345, avg_engagement_rate: 3.25, avg_video_engagement_rate: 0, avg_comment_count: 0,
        avg_like_count: 0, avg_retweet_count: 0, avg_view_count: 0, retweet_ratio: 0, reply_ratio: 0,
        post_count: 99, video_count: 0, evaluation_min: 0, evaluation_max: 0,
      })
      .execute();
    const response = await app.rest(url({ user_id: userId }), { key });
    expect(response.status).toBe(200);
    const medias = response.body.data.medias as ReturnType<typeof expectedItem>[];

    const rows = await app.store.db.selectFrom('medias').selectAll().where('author_user_id', '=', userId).execute();
    expect(rows).toHaveLength(medias.length);
    for (const media of medias) {
      const row = rows.find((r) => r.media_id === media.media_id)!;
      expect(row).toBeDefined();
      expect({
        platform: row.platform,
        author_user_id: row.author_user_id,
        author_username: row.author_username,
        author_nickname: row.author_nickname,
        media_id: row.media_id,
        media_code: row.media_code,
        create_at: new Date(row.create_at).toISOString(),
        cover_url: row.cover_url,
        resources: row.resources,
        description: row.description,
        accessibility_caption: row.accessibility_caption,
        media_url: row.media_url,
        media_type: row.media_type,
        duration: row.duration,
        like_count: Number(row.like_count),
        comment_count: Number(row.comment_count),
        play_count: Number(row.play_count),
      }).toEqual({ platform: 'instagram', ...media });
    }

    const creator = await app.store.db
      .selectFrom('creators')
      .selectAll()
      .where('platform', '=', 'instagram')
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(creator.username).toBe(medias[0].author_username);
    expect(creator.full_name).toBe(medias[0].author_nickname);
    expect(creator.username).not.toBe('old_name');
    expect(creator.country).toBe('BR');
    expect(Number(creator.follower_count)).toBe(12_345);
    expect(Number(creator.post_count)).toBe(99);
    expect(Number(creator.avg_engagement_rate)).toBe(3.25);

    // A second fetch updates the same rows rather than adding any.
    expect((await app.rest(url({ user_id: userId }), { key })).status).toBe(200);
    const again = await app.store.db.selectFrom('medias').select('media_id').where('author_user_id', '=', userId).execute();
    expect(again).toHaveLength(medias.length);
    // A new author gets a creators row of its own.
    const fresh = '1888';
    expect((await app.rest(url({ user_id: fresh }), { key })).status).toBe(200);
    const created = await app.store.db.selectFrom('creators').selectAll().where('platform', '=', 'instagram').where('user_id', '=', fresh).executeTakeFirst();
    expect(created).toMatchObject({ platform: 'instagram', user_id: fresh });
    expect(created!.username).not.toBe('');
  });

  it('answers 404 for an account the platform does not have, without charging', async () => {
    const before = await remaining();
    const response = await app.rest(url({ user_id: INSTAGRAM_SIM_USERS.notFound }), { key });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ success: false, code: 404 });
    expect(response.body.message).toMatch(/no such account/);
    expect(Number(response.headers.get('x-quota-remaining'))).toBe(before);
  });

  it.each([
    ['a 5xx', INSTAGRAM_SIM_USERS.serverError],
    ['a malformed body', INSTAGRAM_SIM_USERS.malformed],
    ['a timeout', INSTAGRAM_SIM_USERS.hangs],
  ])('answers 500 for %s upstream, with x-quota-remaining unchanged', async (_name, userId) => {
    app.services.instagram = freshClient({ timeoutMs: 300 });
    const before = await remaining();
    const started = performance.now();
    const response = await app.rest(url({ user_id: userId }), { key });
    expect(response.status).toBe(500);
    expect(response.body).toMatchObject({ success: false, code: 500 });
    expect(JSON.stringify(response.body)).not.toContain(sim.url);
    expect(Number(response.headers.get('x-quota-remaining'))).toBe(before);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('serves 10 concurrent identical requests with one upstream call, charging each 100', async () => {
    const own = await app.newKey({ plan: 'pro', quota: 5_000, ratePerSecond: 10_000 });
    // Slow answers keep the first call in flight while the others arrive.
    sim.setMode('slow', { delayMs: 300 });
    const responses = await Promise.all(Array.from({ length: 10 }, () => app.rest(url({ user_id: USER }), { key: own })));
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(sim.requestCount(feedPath(USER))).toBe(1);
    const ids = responses.map((r) => JSON.stringify(r.body.data.medias.map((m: { media_id: string }) => m.media_id)));
    expect(new Set(ids).size).toBe(1);
    expect(await remaining(own)).toBe(5_000 - 10 * 100);
  });

  it('callers that leave while the platform hangs are refunded at once; the shared platform call is cut off when the last one leaves', async () => {
    const own = await app.newKey({ plan: 'pro', quota: 5_000, ratePerSecond: 10_000 });
    const outcomes: string[] = [];
    const client = createInstagramClient({ baseUrl: sim.url, timeoutMs: 30_000, http: createUpstreamHttp({ observe: (_, outcome) => outcomes.push(outcome) }) });
    app.services.instagram = client;
    const hangs = url({ user_id: INSTAGRAM_SIM_USERS.hangs });
    const leave = [new AbortController(), new AbortController()];
    const calls = leave.map((controller) =>
      Promise.resolve(app.server.fetch(`http://test${hangs}`, { headers: { authorization: own }, signal: controller.signal })).catch((error: Error) => error.name),
    );
    /** The units left once they settle at `units`, or what is left after 5 s (refunds land after the answer). */
    const settlesAt = async (units: number) => {
      for (let waited = 0; (await remaining(own)) !== units && waited < 5_000; waited += 20) await sleep(20);
      return remaining(own);
    };
    // Both reserved and waiting (the second may reserve after the platform call began): one call.
    expect(await settlesAt(5_000 - 2 * 100)).toBe(5_000 - 2 * 100);
    // The units are reserved before the platform is called: under load the call comes a moment later.
    for (let waited = 0; sim.requestCount(feedPath(INSTAGRAM_SIM_USERS.hangs)) === 0 && waited < 2_000; waited += 20) await sleep(20);
    expect(sim.requestCount(feedPath(INSTAGRAM_SIM_USERS.hangs))).toBe(1);

    // One leaves: refunded, while the other still waits on the one platform call.
    leave[0].abort();
    await calls[0];
    await sleep(200);
    expect(outcomes).toEqual([]);
    expect(await settlesAt(5_000 - 100)).toBe(5_000 - 100);

    // The last one leaves: the platform call is cut off now, not at its 30 s timeout.
    leave[1].abort();
    await calls[1];
    for (let waited = 0; outcomes.length === 0 && waited < 2_000; waited += 20) await sleep(20);
    expect(outcomes).toEqual(['cancelled']);
    expect(await settlesAt(5_000)).toBe(5_000);
    // A call cut off by its callers says nothing about the account or the platform.
    expect(client.cachedFailures).toBe(0);
    expect(client.breakerState).toBe('closed');
  });

  it('one caller retrying an account the upstream fails on does not switch realtime off for anyone else', async () => {
    // The production breaker settings: only the negative cache and the window differ by design.
    const client = createInstagramClient({ baseUrl: sim.url, timeoutMs: 2_000 });
    app.services.instagram = client;
    const other = await app.newKey({ plan: 'pro', ratePerSecond: 10_000 });
    const before = await remaining();
    for (const failing of [INSTAGRAM_SIM_USERS.serverError, INSTAGRAM_SIM_USERS.malformed]) {
      for (let i = 0; i < 30; i++) {
        const response = await app.rest(url({ user_id: failing }), { key });
        expect(response.status).toBe(500);
        expect(response.body).toEqual({ success: false, code: 500, message: 'upstream unavailable' });
      }
      expect(sim.requestCount(feedPath(failing))).toBe(1);
    }
    expect(client.breakerState).toBe('closed');
    expect(await remaining()).toBe(before);
    const served = await app.rest(url({ user_id: USER }), { key: other });
    expect(served.status).toBe(200);
    expect(served.body.data.medias.length).toBeGreaterThan(0);
  });

  it('opens the circuit when the upstream fails for the accounts it was serving (fast 500, no upstream call, no charge) and closes it once it recovers', async () => {
    const client = freshClient({ breaker: { cooldownMs: 400 } });
    app.services.instagram = client;
    const accounts = ['2001', '2002', '2003'];
    for (const account of accounts) expect((await app.rest(url({ user_id: account }), { key })).status).toBe(200);
    sim.resetRequestCounts();
    const before = await remaining();
    sim.setMode('fail');
    for (const account of accounts) expect((await app.rest(url({ user_id: account }), { key })).status).toBe(500);
    expect(sim.requestCount()).toBe(3);
    expect(client.breakerState).toBe('open');

    sim.setMode('ok');
    const started = performance.now();
    const fast = await app.rest(url({ user_id: USER }), { key });
    expect(fast.status).toBe(500);
    // Well inside the 400 ms cooldown: answered without waiting on anything.
    expect(performance.now() - started).toBeLessThan(350);
    expect(sim.requestCount()).toBe(3);
    expect(await remaining()).toBe(before);

    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(client.breakerState).toBe('half-open');
    const trial = await app.rest(url({ user_id: USER }), { key });
    expect(trial.status).toBe(200);
    expect(client.breakerState).toBe('closed');
    expect((await app.rest(url({ user_id: USER }), { key })).status).toBe(200);
    expect(sim.requestCount(feedPath(USER))).toBe(2);
    expect(await remaining()).toBe(before - 200);
  });

  it('answers 403 to a trial key (its plan has no realtime endpoint), before any upstream call', async () => {
    const trial = await app.newKey({ plan: 'trial' });
    const before = await remaining(trial);
    const response = await app.rest(url({ user_id: USER }), { key: trial });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ success: false, code: 403 });
    expect(sim.requestCount()).toBe(0);
    expect(Number(response.headers.get('x-quota-remaining'))).toBe(before);
  });

  const bad: [string, string, string][] = [
    ['a missing user_id', PATH, 'user_id'],
    ['an empty user_id', url({ user_id: '' }), 'user_id'],
    ['a username instead of the numeric id', url({ user_id: 'some.name' }), 'user_id'],
    ['an unknown parameter', url({ user_id: USER, count: '10' }), 'count'],
    ['a camelCase parameter', url({ userId: USER }), 'userId'],
  ];

  it.each(bad)('rejects %s with 400 naming it, before any upstream call or charge', async (_name, path, field) => {
    const before = await remaining();
    const response = await app.rest(path, { key });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, code: 400, message: 'Bad Request' });
    expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    expect(sim.requestCount()).toBe(0);
    expect(Number(response.headers.get('x-quota-remaining'))).toBe(before);
  });

  it('answers 404 to a POST and a HEAD (an answer without its body is not charged 100 units) and 401 without a key', async () => {
    const before = await remaining();
    expect((await app.rest(url({ user_id: USER }), { method: 'POST', body: {}, key })).status).toBe(404);
    expect((await app.rest(url({ user_id: USER }), { method: 'HEAD', key })).status).toBe(404);
    expect(sim.requestCount()).toBe(0);
    expect(await remaining()).toBe(before);
    expect((await app.rest(url({ user_id: USER }), { key: null })).status).toBe(401);
  });
});

describe('realtime offsets', () => {
  it('only an offset the service issued for this user_id is accepted: anything else is a 400 naming offset, before any upstream call or charge', async () => {
    const first = await app.rest(url({ user_id: USER }), { key });
    const other = await app.rest(url({ user_id: INSTAGRAM_SIM_USERS.pinnedPost }), { key });
    const issued: string = first.body.data.offset;
    const [cursor, tag] = issued.split('.');
    const flipped = tag.endsWith('A') ? `${tag.slice(0, -1)}B` : `${tag.slice(0, -1)}A`;
    const forged = [
      'not-an-offset',
      // The platform's own cursor, unsealed.
      (await upstreamPage(USER)).next_max_id!,
      // Issued, but for another account.
      other.body.data.offset,
      // Issued, with its tag altered, or cut, or doubled.
      `${cursor}.${flipped}`,
      cursor,
      `${issued}.${tag}`,
      // Another cursor under the issued tag.
      `${Buffer.from('9999_1003').toString('base64url')}.${tag}`,
    ];
    sim.resetRequestCounts();
    const before = await remaining();
    for (const offset of forged) {
      const response = await app.rest(url({ user_id: USER, offset }), { key });
      expect(response.status, offset).toBe(400);
      expect(response.body).toMatchObject({ success: false, code: 400, message: 'Bad Request' });
      expect(response.body.errors.map((e: { field: string }) => e.field)).toEqual(['offset']);
      const gql = await app.graphql('query($u: String!, $o: String) { realtimeMedias(userId: $u, offset: $o) { more } }', { u: USER, o: offset }, key);
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'offset' }] });
    }
    expect(sim.requestCount()).toBe(0);
    expect(await remaining()).toBe(before);
    // The issued one still opens.
    expect((await app.rest(url({ user_id: USER, offset: issued }), { key })).status).toBe(200);
  });

  /** Another app over the same database, as a second process behind the load balancer runs. */
  async function withSecondApp(config: Partial<Config>, work: (second: App) => Promise<void>): Promise<void> {
    const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };
    const second = await createApp({ ...loadConfig({}), searchIndex: false, ...config }, { store: { ...app.store, close: async () => {} }, instagram: freshClient(), log: quiet });
    try {
      await work(second);
    } finally {
      await second.close();
    }
  }
  const fetchIn = (target: App, path: string) => target.server.fetch(`http://test${path}`, { headers: { authorization: key } });

  it('an offset issued by one process opens in another process sharing the database', async () => {
    const issued = (await app.rest(url({ user_id: USER }), { key })).body.data.offset;
    await withSecondApp({}, async (second) => {
      const response = await fetchIn(second, url({ user_id: USER, offset: issued }));
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: { medias: { media_id: string }[] } };
      const page2 = await upstreamPage(USER, (await upstreamPage(USER)).next_max_id!);
      expect(body.data.medias.map((m) => m.media_id)).toEqual(page2.items.map((item) => item.pk));
    });
  });

  it('OFFSET_SECRET, when set, signs the offsets instead: only processes with the same secret accept them; a short one is refused at start', async () => {
    const secret = 'a-configured-secret-of-32-chars!';
    await withSecondApp({ offsetSecret: secret }, async (configured) => {
      const issued = ((await (await fetchIn(configured, url({ user_id: USER }))).json()) as { data: { offset: string } }).data.offset;
      await withSecondApp({ offsetSecret: secret }, async (twin) => expect((await fetchIn(twin, url({ user_id: USER, offset: issued }))).status).toBe(200));
      // The database's secret is another one.
      expect((await app.rest(url({ user_id: USER, offset: issued }), { key })).status).toBe(400);
    });
    expect(() => loadConfig({ OFFSET_SECRET: 'too short' })).toThrow('OFFSET_SECRET must be at least 32 characters');
  });
});

describe('hostile realtime traffic', () => {
  // The breaker's time constants at 1/20 of the defaults (window and cool-down 30 s -> 1.5 s,
  // negative cache 10 s -> 0.5 s): a 3 s run covers what the issue's minute covers at the defaults,
  // two whole windows and six expiries of every failing account's negative cache. Counts are the
  // production ones (3 failing accounts, half of those seen).
  const breaker: CircuitBreakerOptions = { windowMs: 1_500, cooldownMs: 1_500, negativeCacheMs: 500 };
  const RUN_MS = 3_000;
  /** Three accounts the platform answers 500, one a body of the wrong shape, one a body that is not JSON. */
  const failing = ['5000', '5001', '5002', INSTAGRAM_SIM_USERS.malformed, INSTAGRAM_SIM_USERS.notJson];
  const healthyAccounts = [USER, INSTAGRAM_SIM_USERS.pinnedPost, '1777', '1888'];

  /**
   * A client with the scaled breaker, a key for each caller, and offsets the service never issued
   * for USER, which the platform answers 400 to (an issued one altered among them).
   */
  async function hostileSetUp() {
    const client = freshClient({ breaker });
    app.services.instagram = client;
    const issued: string = (await app.rest(url({ user_id: USER }), { key })).body.data.offset;
    const forged = ['0', 'x', '3400000000000000000_1003', `${issued}0`];
    const newCaller = () => app.newKey({ plan: 'pro', ratePerSecond: 10_000 });
    return { client, forged, hostileKey: await newCaller(), healthyKey: await newCaller() };
  }

  interface Outcome {
    userId: string;
    offset: string;
    status: number;
    body: any;
  }

  /** One caller asking, one request after another, until `stop` says so. */
  async function caller(callerKey: string, next: (previous: Outcome | null) => { userId: string; offset: string }, stop: () => boolean): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    while (!stop()) {
      const { userId, offset } = next(outcomes.at(-1) ?? null);
      const response = await app.rest(url(offset ? { user_id: userId, offset } : { user_id: userId }), { key: callerKey });
      outcomes.push({ userId, offset, status: response.status, body: response.body });
      // Refusals are answered without I/O: without this, a caller would starve the event loop.
      await setImmediate();
    }
    return outcomes;
  }

  /** The hostile caller: the failing accounts and the forged offsets, round after round. */
  function attacker(attackerKey: string, forged: string[], stop: () => boolean): Promise<Outcome[]> {
    const requests = [...failing.map((userId) => ({ userId, offset: '' })), ...forged.map((offset) => ({ userId: USER, offset }))];
    let i = 0;
    return caller(attackerKey, () => requests[i++ % requests.length], stop);
  }

  /** A healthy caller walking the accounts' pages by the offsets it is given, account after account. */
  function reader(readerKey: string, stop: () => boolean): Promise<Outcome[]> {
    let account = 0;
    return caller(
      readerKey,
      (previous) => {
        if (previous?.status === 200 && previous.body.data.more) return { userId: previous.userId, offset: previous.body.data.offset };
        return { userId: healthyAccounts[account++ % healthyAccounts.length], offset: '' };
      },
      stop,
    );
  }

  function expectRefusedAsTheirs(outcomes: Outcome[]): void {
    for (const outcome of outcomes) {
      if (outcome.offset) {
        expect(outcome.status, `forged offset ${outcome.offset}`).toBe(400);
        expect(outcome.body.errors.map((e: { field: string }) => e.field)).toEqual(['offset']);
      } else {
        expect(outcome.status, `failing account ${outcome.userId}`).toBe(500);
        expect(outcome.body).toEqual({ success: false, code: 500, message: 'upstream unavailable' });
      }
    }
  }

  it('a caller hammering five failing accounts and forged offsets does not switch realtime off: another caller is served every time', async () => {
    const { client, forged, hostileKey, healthyKey } = await hostileSetUp();
    const hostileBefore = await remaining(hostileKey);
    sim.resetRequestCounts();

    const deadline = performance.now() + RUN_MS;
    const stop = () => performance.now() >= deadline;
    // Two hostile connections for every healthy one.
    const [hostileA, hostileB, healthy] = await Promise.all([attacker(hostileKey, forged, stop), attacker(hostileKey, forged, stop), reader(healthyKey, stop)]);

    expect(healthy.length).toBeGreaterThanOrEqual(10);
    expect(healthy.filter((o) => o.status !== 200)).toEqual([]);
    expect(healthy.some((o) => o.offset !== '')).toBe(true);
    expect(client.breakerState).toBe('closed');
    const hostile = [...hostileA, ...hostileB];
    expect(hostile.length).toBeGreaterThanOrEqual(30);
    expectRefusedAsTheirs(hostile);
    expect(await remaining(hostileKey)).toBe(hostileBefore);
    // No forged offset reached the platform: every call for USER's feed was the healthy caller's.
    expect(sim.requestCount(feedPath(USER))).toBe(healthy.filter((o) => o.userId === USER).length);
    // Each failing account failed at the platform again and again, at most once per negative-cache
    // period however often it was asked.
    for (const userId of failing) {
      expect(sim.requestCount(feedPath(userId))).toBeGreaterThanOrEqual(2);
      expect(sim.requestCount(feedPath(userId))).toBeLessThanOrEqual(RUN_MS / breaker.negativeCacheMs! + 2);
    }
  });

  it('under the same hostile traffic, the platform going down for everyone opens the circuit within seconds, and it closes once the platform is back', async () => {
    const { client, forged, hostileKey, healthyKey } = await hostileSetUp();
    let done = false;
    const stop = () => done;
    const loads = Promise.all([attacker(hostileKey, forged, stop), reader(healthyKey, stop)]);
    try {
      await sleep(1_000);
      expect(client.breakerState).toBe('closed');

      sim.setMode('fail');
      const down = performance.now();
      while (client.breakerState !== 'open' && performance.now() - down < 5_000) await sleep(10);
      expect(client.breakerState).toBe('open');
      expect(performance.now() - down).toBeLessThan(2_000);
      // Open: healthy accounts get a fast 500 without a call to the platform.
      const calls = sim.requestCount();
      const refused = await app.rest(url({ user_id: '1999' }), { key: healthyKey });
      expect(refused.status).toBe(500);
      expect(sim.requestCount()).toBe(calls);

      // Back up: a trial call closes the circuit after the cool-down, although the hostile caller
      // keeps asking for accounts that fail.
      sim.setMode('ok');
      const up = performance.now();
      let status = 0;
      while (status !== 200 && performance.now() - up < breaker.cooldownMs! + 2_000) {
        status = (await app.rest(url({ user_id: USER }), { key: healthyKey })).status;
        if (status !== 200) await sleep(50);
      }
      expect(status).toBe(200);
      expect(client.breakerState).toBe('closed');
    } finally {
      done = true;
      sim.setMode('ok');
    }
    const [hostile] = await loads;
    // Whatever the platform did, the hostile caller's own requests were refused as its own.
    expect(hostile.filter((o) => o.offset !== '').every((o) => o.status === 400)).toBe(true);
  });
});

describe('realtimeMedias over GraphQL', () => {
  const query = `query($userId: String!, $offset: String) {
    realtimeMedias(userId: $userId, offset: $offset) {
      more offset
      medias {
        authorUserId authorUsername authorNickname mediaId mediaCode createAt coverUrl resources
        description accessibilityCaption mediaUrl mediaType duration likeCount commentCount playCount
      }
    }
  }`;
  const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

  it('agrees with REST field for field and costs 100', async () => {
    const rest = await app.rest(url({ user_id: USER }), { key });
    const before = await remaining();
    const gql = await app.graphql(query, { userId: USER }, key);
    expect(gql.body.errors).toBeUndefined();
    expect(Number(gql.headers.get('x-quota-remaining'))).toBe(before - 100);
    const page = gql.body.data.realtimeMedias;
    expect(page.more).toBe(rest.body.data.more);
    expect(page.offset).toBe(rest.body.data.offset);
    expect(page.medias.map((m: Record<string, unknown>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [snake(k), v])))).toEqual(
      rest.body.data.medias,
    );
  });

  it('reports NOT_FOUND, UPSTREAM_UNAVAILABLE and BAD_REQUEST in extensions.code', async () => {
    const missing = await app.graphql(query, { userId: INSTAGRAM_SIM_USERS.notFound }, key);
    expect(missing.body.errors[0].extensions.code).toBe('NOT_FOUND');
    expect(missing.body.data?.realtimeMedias ?? null).toBeNull();
    const down = await app.graphql(query, { userId: INSTAGRAM_SIM_USERS.serverError }, key);
    expect(down.body.errors[0].extensions.code).toBe('UPSTREAM_UNAVAILABLE');
    const empty = await app.graphql(query, { userId: '' }, key);
    expect(empty.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(empty.body.errors[0].extensions.fields[0].field).toBe('userId');
  });
});

describe('createApp without INSTAGRAM_UPSTREAM_URL', () => {
  it('starts the built-in simulator, warns that realtime data is simulated, and serves realtime fetches', async () => {
    // On PostgreSQL a fresh database of its own; on PGlite createApp opens its own in-memory one.
    const testStore = process.env.TEST_DATABASE_URL ? await createTestStore() : null;
    const warnings: string[] = [];
    const log: Logger = { info: () => {}, error: () => {}, warn: (message) => void warnings.push(message) };
    // An in-memory DATA_DIR: no snapshot of this test's index lands in the working copy's .data.
    const config = { ...loadConfig({ DATA_DIR: 'memory://' }), databaseUrl: testStore?.databaseUrl, instagramUpstreamUrl: undefined };
    const real = await createApp(config, { log });
    try {
      expect(warnings.some((w) => /realtime media data is simulated/.test(w))).toBe(true);
      const db = real.services.store.db;
      const { key: rawKey } = await issueKey(db, await createAccount(db, { plan: 'pro' }));
      const response = await real.server.fetch(`http://test${url({ user_id: USER })}`, { headers: { authorization: rawKey } });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: { medias: unknown[] } };
      expect(body.data.medias.length).toBeGreaterThan(0);
    } finally {
      await real.close();
      await testStore?.close();
    }
  });
});

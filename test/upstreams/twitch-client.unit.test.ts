import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamUnavailableError } from '../../src/upstreams/errors.js';
import { createTwitchClient, type LiveStream, type PassProgress, type TwitchClientOptions } from '../../src/upstreams/twitch/client.js';
import { generateHelixStreams, startTwitchSimulator, type HelixStream, type TwitchSimulator } from '../../src/upstreams/twitch/simulator.js';
import { startScriptedUpstream } from './helpers/scripted-upstream.js';

const STREAM_COUNT = 250;
const NOW_MS = Date.UTC(2026, 4, 1, 12);

let sim: TwitchSimulator;
let initialStreams: readonly HelixStream[];

beforeAll(async () => {
  sim = await startTwitchSimulator({ streamCount: STREAM_COUNT });
  initialStreams = sim.streams;
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.setStreams(initialStreams);
  sim.failAtPage(null);
  sim.resetRequestCounts();
});

/** A client on the simulator whose waits are recorded instead of slept. */
function clientWithRecordedWaits(options: Partial<TwitchClientOptions> = {}) {
  const waits: number[] = [];
  const client = createTwitchClient({
    baseUrl: sim.url,
    clientId: sim.clientId,
    token: sim.token,
    now: () => NOW_MS,
    sleep: async (ms) => void waits.push(ms),
    ...options,
  });
  return { client, waits };
}

const idsOf = (streams: readonly { id: string }[]): string[] => streams.map((s) => s.id);

async function unavailableReason(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => expect.fail('expected the call to fail'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UpstreamUnavailableError);
  return (error as UpstreamUnavailableError).reason;
}

describe('twitch simulator', () => {
  it('refuses requests without the Client-Id and Bearer token headers', async () => {
    const streamsUrl = `${sim.url}/helix/streams?first=100`;
    expect((await fetch(streamsUrl)).status).toBe(401);
    expect((await fetch(streamsUrl, { headers: { 'Client-Id': sim.clientId } })).status).toBe(401);
    expect((await fetch(streamsUrl, { headers: { 'Client-Id': sim.clientId, Authorization: sim.token } })).status).toBe(401);
    const authorized = await fetch(streamsUrl, { headers: { 'Client-Id': sim.clientId, Authorization: `Bearer ${sim.token}` } });
    expect(authorized.status).toBe(200);
  });

  it('generates the same streams for the same seed, ordered by viewers with ties', () => {
    expect(generateHelixStreams(50, 'a')).toEqual(generateHelixStreams(50, 'a'));
    expect(generateHelixStreams(50, 'a')).not.toEqual(generateHelixStreams(50, 'b'));
    const viewers = sim.streams.map((s) => s.viewer_count);
    expect(viewers).toEqual([...viewers].sort((a, b) => b - a));
    expect(new Set(viewers).size).toBeLessThan(viewers.length);
  });
});

describe('twitch client: a full pass', () => {
  it('pages through every stream once, in viewer order, with the credentials, reporting progress', async () => {
    const { client } = clientWithRecordedWaits();
    const progress: PassProgress[] = [];
    const streams = await client.fetchAllStreams((p) => progress.push(p));

    expect(idsOf(streams)).toEqual(idsOf(sim.streams));
    expect(progress).toEqual([
      { pages: 1, streams: 100 },
      { pages: 2, streams: 200 },
      { pages: 3, streams: 250 },
    ]);
    expect(sim.requestCount('/helix/streams')).toBe(3);
  });

  it('maps a stream field by field', async () => {
    const { client } = clientWithRecordedWaits();
    const [first] = await client.fetchAllStreams();
    const raw = sim.streams[0];
    expect(first).toEqual({
      id: raw.id,
      userId: raw.user_id,
      userLogin: raw.user_login,
      userName: raw.user_name,
      gameId: raw.game_id,
      gameName: raw.game_name,
      type: raw.type,
      title: raw.title,
      viewerCount: raw.viewer_count,
      startedAt: new Date(raw.started_at),
      language: raw.language,
      thumbnailUrl: raw.thumbnail_url,
      tags: raw.tags,
      isMature: raw.is_mature,
    } satisfies LiveStream);
  });

  it('neither repeats nor skips streams whose equal viewer counts straddle page boundaries', async () => {
    // Runs of 30 equal counts: the runs across 90..119 and 180..209 cross the page boundaries.
    sim.setStreams(
      generateHelixStreams(230, 'ties').map((stream, i) => ({ ...stream, viewer_count: 1_000 - Math.floor(i / 30) * 10 })),
    );
    const { client } = clientWithRecordedWaits();
    const streams = await client.fetchAllStreams();

    expect(streams).toHaveLength(230);
    expect(new Set(idsOf(streams)).size).toBe(230);
    expect(idsOf(streams)).toEqual(idsOf(sim.streams));
  });

  it('sees the new set on the next pass: ended streams are gone', async () => {
    const { client } = clientWithRecordedWaits();
    expect(await client.fetchAllStreams()).toHaveLength(STREAM_COUNT);

    const stillLive = sim.streams.filter((_, i) => i % 2 === 0);
    sim.setStreams(stillLive);
    expect(idsOf(await client.fetchAllStreams())).toEqual(idsOf(stillLive));
  });

  it('returns each stream once when one moves to a later page during the pass, with its fresher data', async () => {
    const { client } = clientWithRecordedWaits();
    const mover = sim.streams[5];
    const streams = await client.fetchAllStreams(({ pages }) => {
      if (pages === 1) sim.setStreams(sim.streams.map((s) => (s.id === mover.id ? { ...s, viewer_count: 0 } : s)));
    });

    expect(new Set(idsOf(streams)).size).toBe(streams.length);
    expect(streams.find((s) => s.id === mover.id)?.viewerCount).toBe(0);
    // The stream that moved up across the first boundary is missed until the next pass, as on the platform.
    expect(streams).toHaveLength(STREAM_COUNT - 1);
  });

  it('yields the pages one by one through pages()', async () => {
    const { client } = clientWithRecordedWaits();
    const sizes: number[] = [];
    for await (const page of client.pages()) sizes.push(page.length);
    expect(sizes).toEqual([100, 100, 50]);
  });
});

describe('twitch client: rate limits and failures', () => {
  it('waits until Ratelimit-Reset after a 429 and continues from the same cursor', async () => {
    const { client, waits } = clientWithRecordedWaits();
    const streams = await client.fetchAllStreams(({ pages }) => {
      if (pages === 1) sim.rateLimitOnce(NOW_MS / 1_000 + 3);
    });

    expect(waits).toEqual([3_000]);
    expect(idsOf(streams)).toEqual(idsOf(sim.streams));
    // Three pages plus the one refused: a restart from the first page would cost more.
    expect(sim.requestCount()).toBe(4);
  });

  it('caps the wait when the reset is far away', async () => {
    const { client, waits } = clientWithRecordedWaits({ maxRateLimitWaitMs: 5_000 });
    sim.rateLimitOnce(NOW_MS / 1_000 + 3_600);
    expect(await client.fetchAllStreams()).toHaveLength(STREAM_COUNT);
    expect(waits).toEqual([5_000]);
  });

  it('throws UpstreamUnavailableError when a page fails, so the caller keeps its snapshot', async () => {
    sim.failAtPage(2);
    const { client } = clientWithRecordedWaits();
    const progress: PassProgress[] = [];
    expect(await unavailableReason(client.fetchAllStreams((p) => progress.push(p)))).toBe('status');
    expect(progress).toHaveLength(1);
    expect(sim.requestCount()).toBe(2);
  });

  it('throws UpstreamUnavailableError when the credentials are refused', async () => {
    const { client } = clientWithRecordedWaits({ token: 'revoked' });
    expect(await unavailableReason(client.fetchAllStreams())).toBe('status');
  });
});

describe('twitch client: upstream quirks', () => {
  const page = (ids: string[], cursor?: string): string =>
    JSON.stringify({
      data: generateHelixStreams(ids.length, ids.join()).map((stream, i) => ({ ...stream, id: ids[i] })),
      pagination: cursor ? { cursor } : {},
    });

  async function passAgainst(responses: Parameters<typeof startScriptedUpstream>[0], options: Partial<TwitchClientOptions> = {}) {
    const upstream = await startScriptedUpstream(responses);
    const waits: number[] = [];
    const client = createTwitchClient({
      baseUrl: upstream.url,
      clientId: 'c',
      token: 't',
      now: () => NOW_MS,
      sleep: async (ms) => void waits.push(ms),
      ...options,
    });
    return { pass: client.fetchAllStreams().finally(() => upstream.close()), waits };
  }

  it('waits 1 s after a 429 that carries no Ratelimit-Reset', async () => {
    const { pass, waits } = await passAgainst([{ status: 429, body: '{}' }, { body: page(['1', '2']) }]);
    expect(idsOf(await pass)).toEqual(['1', '2']);
    expect(waits).toEqual([1_000]);
  });

  it('gives up after too many 429s in a row', async () => {
    const tooMany = { status: 429, headers: { 'Ratelimit-Reset': String(NOW_MS / 1_000) }, body: '{}' };
    const { pass } = await passAgainst([tooMany, tooMany, tooMany], { maxRateLimitRetries: 2 });
    expect(await unavailableReason(pass)).toBe('rate-limited');
  });

  it('ends the pass at an empty page even if it carries a cursor', async () => {
    const { pass } = await passAgainst([{ body: page(['1'], 'a') }, { body: page([], 'b') }]);
    expect(idsOf(await pass)).toEqual(['1']);
  });

  it('throws instead of looping when a cursor comes back', async () => {
    const { pass } = await passAgainst([{ body: page(['1'], 'a') }, { body: page(['2'], 'b') }, { body: page(['3'], 'a') }]);
    expect(await unavailableReason(pass)).toBe('malformed');
  });

  it('throws UpstreamUnavailableError on a body of the wrong shape', async () => {
    const { pass } = await passAgainst([{ body: '{"data": "none"}' }]);
    expect(await unavailableReason(pass)).toBe('malformed');
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collectCommand } from '../src/cli/collect.js';
import { simulateCommand } from '../src/cli/simulate.js';
import { collectTwitchPass, type PassResult, runTwitchCollector, twitchClientFromConfig } from '../src/collector/twitch.js';
import { loadConfig } from '../src/config.js';
import type { Logger } from '../src/observability/log.js';
import { countLiveStreams, searchLiveStreams } from '../src/store/live-streams.js';
import type { TwitchClient } from '../src/upstreams/twitch/client.js';
import { generateHelixStreams, type HelixStream, startTwitchSimulator, type TwitchSimulator } from '../src/upstreams/twitch/simulator.js';
import { createTestStore, type TestStore } from './support/store.js';

let store: TestStore;
let sim: TwitchSimulator;
const initial = generateHelixStreams(250, 'collector');

beforeAll(async () => {
  store = await createTestStore();
  sim = await startTwitchSimulator({ streamCount: 0 });
});
afterAll(async () => {
  await sim?.close();
  await store?.close();
});
beforeEach(() => {
  sim.setStreams(initial);
  sim.failAtPage(null);
  sim.resetRequestCounts();
});

function recordingLog() {
  const lines: { level: string; message: string; details?: Record<string, unknown> }[] = [];
  const log: Logger = {
    info: (message, details) => lines.push({ level: 'info', message, details }),
    warn: (message, details) => lines.push({ level: 'warn', message, details }),
    error: (message, details) => lines.push({ level: 'error', message, details }),
  };
  return { log, lines };
}

function client(sleeps: number[] = []): TwitchClient {
  return twitchClientFromConfig(
    { apiUrl: sim.url, clientId: sim.clientId, token: sim.token },
    { timeoutMs: 2_000, sleep: async (ms) => void sleeps.push(ms) },
  );
}

async function storedIds(): Promise<string[]> {
  const rows = await store.db.selectFrom('live_streams').select('id').orderBy('id').execute();
  return rows.map((row) => row.id);
}
const sortedIds = (list: readonly HelixStream[]) => list.map((s) => s.id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('twitch collector', () => {
  it('stores a full pass as the snapshot, every field as the platform served it', async () => {
    const { log } = recordingLog();
    const result = await collectTwitchPass({ db: store.db, client: client(), log });
    expect(result).toMatchObject({ ok: true, streams: 250, pages: 3 });
    expect(await storedIds()).toEqual(sortedIds(initial));

    const page = await searchLiveStreams(store.db, {}, { first: 100 });
    const top = [...initial].sort((a, b) => b.viewer_count - a.viewer_count || (a.id < b.id ? 1 : -1));
    expect(page.rows.map((s) => s.id)).toEqual(top.slice(0, 100).map((s) => s.id));
    const served = top[0];
    const { lastUpdateAt, ...stored } = page.rows[0];
    expect(stored).toEqual({
      id: served.id,
      userId: served.user_id,
      userLogin: served.user_login,
      userName: served.user_name,
      gameId: served.game_id,
      gameName: served.game_name,
      type: served.type,
      title: served.title,
      viewerCount: served.viewer_count,
      startedAt: new Date(served.started_at),
      language: served.language,
      thumbnailUrl: served.thumbnail_url,
      tags: served.tags,
      isMature: served.is_mature,
    });
    expect(Date.now() - lastUpdateAt.getTime()).toBeLessThan(60_000);
  });

  it('keeps the previous snapshot when a pass fails halfway, and logs the failure', async () => {
    const { log } = recordingLog();
    await collectTwitchPass({ db: store.db, client: client(), log });
    const before = await storedIds();

    const next = generateHelixStreams(180, 'next');
    sim.setStreams(next);
    sim.failAtPage(2);
    sim.resetRequestCounts();
    const failing = recordingLog();
    const result = await collectTwitchPass({ db: store.db, client: client(), log: failing.log });
    expect(result).toMatchObject({ ok: false });
    expect(sim.requestCount('/helix/streams')).toBe(2);
    expect(await storedIds()).toEqual(before);
    const logged = failing.lines.find((line) => line.level === 'error');
    expect(logged?.message).toMatch(/previous snapshot stays/);
    expect(String(logged?.details?.error)).toMatch(/twitch upstream unavailable \(status\)/);
    expect(JSON.stringify(failing.lines)).not.toContain(sim.token);

    sim.failAtPage(null);
    expect(await collectTwitchPass({ db: store.db, client: client(), log })).toMatchObject({ ok: true, streams: 180 });
    expect(await storedIds()).toEqual(sortedIds(next));
  });

  it('waits out a 429 until the reset time and completes the pass', async () => {
    const { log } = recordingLog();
    const sleeps: number[] = [];
    sim.rateLimitOnce(Math.floor(Date.now() / 1000) + 3);
    const result = await collectTwitchPass({ db: store.db, client: client(sleeps), log });
    expect(result).toMatchObject({ ok: true, streams: 250, pages: 3 });
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(1_000);
    expect(sleeps[0]).toBeLessThanOrEqual(3_000);
    // Three pages plus the one answered 429.
    expect(sim.requestCount('/helix/streams')).toBe(4);
    expect(await storedIds()).toEqual(sortedIds(initial));
  });

  it('drops streams that ended by the next pass, and adds those that started', async () => {
    const { log } = recordingLog();
    await collectTwitchPass({ db: store.db, client: client(), log });
    const ended = new Set(initial.filter((_, i) => i % 9 === 0).map((s) => s.id));
    const started = generateHelixStreams(12, 'new').map((s) => ({ ...s, id: `7${s.id}` }));
    const now = [...initial.filter((s) => !ended.has(s.id)), ...started];
    sim.setStreams(now);
    await collectTwitchPass({ db: store.db, client: client(), log });
    const ids = await storedIds();
    expect(ids).toEqual(sortedIds(now));
    for (const id of ended) expect(ids).not.toContain(id);
    expect(await countLiveStreams(store.db, {})).toBe(now.length);
  });

  it('loops until aborted, and an abort mid-pass writes nothing', async () => {
    const { log } = recordingLog();
    const stop = new AbortController();
    const results: PassResult[] = [];
    const outcome = await runTwitchCollector({
      db: store.db,
      client: client(),
      log,
      intervalMs: 20,
      signal: stop.signal,
      onPass: (result) => {
        results.push(result);
        if (results.length === 3) stop.abort();
      },
    });
    expect(outcome).toEqual({ passes: 3, failures: 0 });
    expect(sim.requestCount('/helix/streams')).toBe(9);

    const before = await storedIds();
    let release: (streams: []) => void = () => {};
    const hanging: TwitchClient = {
      pages: () => (async function* () {})(),
      fetchAllStreams: () => new Promise((resolve) => (release = resolve)),
      close: async () => {},
    };
    const midPass = new AbortController();
    const running = runTwitchCollector({ db: store.db, client: hanging, log, signal: midPass.signal });
    setTimeout(() => midPass.abort(), 50);
    expect(await running).toEqual({ passes: 0, failures: 0 });
    // The abandoned pass finishing later (with an empty list) must not replace the snapshot.
    release([]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await storedIds()).toEqual(before);
  });
});

describe('collect and simulate commands', () => {
  it('collect twitch without TWITCH_API_URL exits 2; an unknown source exits 2', async () => {
    const config = loadConfig({ DATA_DIR: 'memory://' });
    expect(await collectCommand(config, ['twitch', '--once'])).toBe(2);
    expect(await collectCommand({ ...config, twitch: { apiUrl: sim.url, clientId: 'x', token: 'y' } }, ['youtube'])).toBe(2);
  });

  it('collect twitch --once runs one pass against the configured API: 0 on success, 1 on failure', async () => {
    const config = {
      ...loadConfig({ DATA_DIR: 'memory://' }),
      databaseUrl: store.databaseUrl,
      twitch: { apiUrl: sim.url, clientId: sim.clientId, token: sim.token },
    };
    const next = generateHelixStreams(40, 'command');
    sim.setStreams(next);
    expect(await collectCommand(config, ['twitch', '--once'])).toBe(0);
    // On PostgreSQL the command wrote to this test's database; PGlite gives it a store of its own.
    if (store.databaseUrl) expect(await storedIds()).toEqual(sortedIds(next));
    sim.failAtPage(1);
    expect(await collectCommand(config, ['twitch', '--once'])).toBe(1);
    if (store.databaseUrl) expect(await storedIds()).toEqual(sortedIds(next));
  });

  it('simulate rejects an unknown simulator or port with exit 2', async () => {
    expect(await simulateCommand([])).toBe(2);
    expect(await simulateCommand(['youtube'])).toBe(2);
    expect(await simulateCommand(['twitch', '--port', 'eighty'])).toBe(2);
    expect(await simulateCommand(['twitch', '--port', '70000'])).toBe(2);
  });
});

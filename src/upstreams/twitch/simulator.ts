import type { ServerResponse } from 'node:http';
import { seededRandom } from '../seeded-random.js';
import { sendJson, startSimulatorServer, type SimulatorListenOptions, type SimulatorServer } from '../simulator-server.js';

/** A stream as Helix `GET /helix/streams` serves it. */
export interface HelixStream {
  id: string;
  user_id: string;
  user_login: string;
  user_name: string;
  game_id: string;
  game_name: string;
  type: 'live' | '';
  title: string;
  viewer_count: number;
  started_at: string;
  language: string;
  thumbnail_url: string;
  tags: string[];
  is_mature: boolean;
}

export interface TwitchSimulatorOptions extends SimulatorListenOptions {
  /** Size of the generated stream set (default 250, three pages of 100). */
  streamCount?: number;
  seed?: string;
  /** The credentials the simulator accepts. */
  clientId?: string;
  token?: string;
}

export interface TwitchSimulator extends SimulatorServer {
  readonly clientId: string;
  readonly token: string;
  /** The live set in served order: viewer_count descending, then id. */
  readonly streams: readonly HelixStream[];
  /** Replaces the live set, as between two passes when streams start and end. */
  setStreams(streams: readonly HelixStream[]): void;
  /** Answers 500 to page `page` (1-based) of every pass until cleared with null. */
  failAtPage(page: number | null): void;
  /** The next request, whatever it is, answers 429 with Ratelimit-Reset = resetAt (unix seconds). */
  rateLimitOnce(resetAt: number): void;
}

const MAX_PAGE_SIZE = 100;
const DEFAULT_PAGE_SIZE = 20;

/**
 * A deterministic stand-in for the live-stream platform's `GET /helix/streams?first=&after=`. It
 * requires `Client-Id` and `Authorization: Bearer <token>`; its cursors encode a position in the
 * current set, so a set changed in the middle of a pass shifts later pages, as on the platform.
 */
export async function startTwitchSimulator({
  streamCount = 250,
  seed = 'twitch',
  clientId = 'sim-client-id',
  token = 'sim-token',
  ...listen
}: TwitchSimulatorOptions = {}): Promise<TwitchSimulator> {
  let streams = servedOrder(generateHelixStreams(streamCount, seed));
  let failingPage: number | null = null;
  let pendingRateLimitReset: number | null = null;

  const server = await startSimulatorServer((request, response, url) => {
    if (request.method !== 'GET' || url.pathname !== '/helix/streams') return sendHelixError(response, 404, 'Not Found');
    if (request.headers['client-id'] !== clientId || request.headers.authorization !== `Bearer ${token}`) {
      return sendHelixError(response, 401, 'Unauthorized', 'Invalid OAuth token or Client-Id');
    }
    if (pendingRateLimitReset !== null) {
      const reset = String(pendingRateLimitReset);
      pendingRateLimitReset = null;
      return sendHelixError(response, 429, 'Too Many Requests', '', { 'Ratelimit-Limit': '800', 'Ratelimit-Remaining': '0', 'Ratelimit-Reset': reset });
    }

    const first = Number(url.searchParams.get('first') ?? DEFAULT_PAGE_SIZE);
    if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE_SIZE) {
      return sendHelixError(response, 400, 'Bad Request', 'first must be between 1 and 100');
    }
    const after = url.searchParams.get('after');
    const position = after ? decodeCursor(after) : { offset: 0, page: 1 };
    if (!position) return sendHelixError(response, 400, 'Bad Request', 'Invalid cursor');
    if (position.page === failingPage) return sendHelixError(response, 500, 'Internal Server Error');

    const end = position.offset + first;
    const cursor = end < streams.length ? encodeCursor({ offset: end, page: position.page + 1 }) : undefined;
    sendJson(response, 200, { data: streams.slice(position.offset, end), pagination: cursor ? { cursor } : {} });
  }, listen);

  return {
    ...server,
    clientId,
    token,
    get streams() {
      return streams;
    },
    setStreams(next) {
      streams = servedOrder(next);
    },
    failAtPage(page) {
      failingPage = page;
    },
    rateLimitOnce(resetAt) {
      pendingRateLimitReset = resetAt;
    },
  };
}

function sendHelixError(response: ServerResponse, status: number, error: string, message = '', headers?: Record<string, string>): void {
  sendJson(response, status, { error, status, message }, headers);
}

function servedOrder(streams: readonly HelixStream[]): HelixStream[] {
  return [...streams].sort((a, b) => b.viewer_count - a.viewer_count || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

interface CursorPosition {
  offset: number;
  page: number;
}

function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

function decodeCursor(cursor: string): CursorPosition | null {
  try {
    const { offset, page } = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as Partial<CursorPosition>;
    return Number.isInteger(offset) && Number.isInteger(page) ? { offset: offset!, page: page! } : null;
  } catch {
    return null;
  }
}

const STARTED_BEFORE = Date.UTC(2026, 4, 1, 12);
const GAMES = [
  { id: '509658', name: 'Just Chatting' },
  { id: '21779', name: 'League of Legends' },
  { id: '32982', name: 'Grand Theft Auto V' },
  { id: '516575', name: 'VALORANT' },
  { id: '27471', name: 'Minecraft' },
  { id: '26936', name: 'Music' },
  { id: '509660', name: 'Art' },
];
const LANGUAGES = ['en', 'en', 'en', 'es', 'de', 'pt', 'fr', 'ja', 'ko'];
const TAGS = ['English', 'Español', 'Chill', 'Competitive', 'Speedrun', 'NoBackseating', 'Cozy', 'FPS'];
const NAME_PARTS = ['night', 'pixel', 'storm', 'lazy', 'neon', 'frost', 'echo', 'rogue', 'moon', 'byte'];
const TITLES = ['ranked grind', 'chill vibes', 'first playthrough', 'road to top 500', 'drawing commissions', 'late night talk'];

/** A deterministic stream set; viewer counts are heavy-tailed and coarse at the low end, so ties are common. */
export function generateHelixStreams(count: number, seed = 'twitch'): HelixStream[] {
  const random = seededRandom(`twitch:${seed}`);
  return Array.from({ length: count }, (_, i): HelixStream => {
    const login = `${random.pick(NAME_PARTS)}_${random.pick(NAME_PARTS)}${i}`;
    const game = random.pick(GAMES);
    const rawViewers = Math.floor(80_000 * random.next() ** 4);
    const tags = Array.from({ length: random.int(0, 3) }, () => random.pick(TAGS));
    return {
      id: String(40_000_000_000 + i * 1_000 + random.int(0, 999)),
      user_id: String(100_000_000 + i * 97),
      user_login: login,
      user_name: login[0].toUpperCase() + login.slice(1),
      game_id: game.id,
      game_name: game.name,
      // The platform sends "" instead of "live" when it has an error to hide; a few streams carry it.
      type: random.chance(0.02) ? '' : 'live',
      title: `${random.pick(TITLES)} | ${game.name}`,
      viewer_count: rawViewers < 1_000 ? rawViewers - (rawViewers % 25) : rawViewers,
      started_at: new Date(STARTED_BEFORE - random.int(60, 12 * 3_600) * 1_000).toISOString().replace('.000Z', 'Z'),
      language: random.pick(LANGUAGES),
      thumbnail_url: `https://static-cdn.sim.invalid/previews-ttv/live_user_${login}-{width}x{height}.jpg`,
      tags: [...new Set(tags)],
      is_mature: random.chance(0.15),
    };
  });
}

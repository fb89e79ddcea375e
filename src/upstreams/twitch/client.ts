import { z } from 'zod';
import type { CollectedStream } from '../../domain/records.js';
import { UpstreamUnavailableError } from '../errors.js';
import { createUpstreamHttp, parseUpstreamBody, type UpstreamHttp } from '../http.js';

/** What the collector stores: the contract's live-stream item (2.5) in camelCase. */
export type LiveStream = CollectedStream;

export interface TwitchClientOptions {
  baseUrl: string;
  clientId: string;
  token: string;
  timeoutMs?: number;
  /** Longest wait for a rate-limit reset, however far away the platform says it is. */
  maxRateLimitWaitMs?: number;
  /** Consecutive 429 answers tolerated for one page before the pass gives up. */
  maxRateLimitRetries?: number;
  /** Injected by tests to control time. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** The connections to use; by default the client's own, closed by close(). */
  http?: UpstreamHttp;
}

export interface PassProgress {
  pages: number;
  streams: number;
}

export interface TwitchClient {
  /** Every page of one pass, in order. @throws UpstreamUnavailableError */
  pages(): AsyncGenerator<LiveStream[], void, undefined>;
  /**
   * A full pass, each stream once. Throws UpstreamUnavailableError rather than return a partial
   * list, so the caller keeps its previous snapshot.
   */
  fetchAllStreams(onProgress?: (progress: PassProgress) => void): Promise<LiveStream[]>;
  /** Lets in-flight calls finish, then closes the connections. */
  close(): Promise<void>;
}

const PAGE_SIZE = 100;
// Without a usable Ratelimit-Reset, wait as the contract recommends for a first retry.
const FALLBACK_RATE_LIMIT_WAIT_MS = 1_000;

export function createTwitchClient({
  baseUrl,
  clientId,
  token,
  timeoutMs = 10_000,
  maxRateLimitWaitMs = 60_000,
  maxRateLimitRetries = 5,
  now = Date.now,
  sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  http = createUpstreamHttp(),
}: TwitchClientOptions): TwitchClient {
  const streamsUrl = `${baseUrl.replace(/\/+$/, '')}/helix/streams`;
  const headers = { 'Client-Id': clientId, Authorization: `Bearer ${token}` };

  function rateLimitWaitMs(resetHeader: string | null): number {
    const resetAtSeconds = Number(resetHeader ?? Number.NaN);
    if (!Number.isFinite(resetAtSeconds)) return FALLBACK_RATE_LIMIT_WAIT_MS;
    return Math.min(Math.max(resetAtSeconds * 1_000 - now(), 0), maxRateLimitWaitMs);
  }

  async function requestPage(cursor: string): Promise<{ streams: LiveStream[]; cursor: string }> {
    const query = new URLSearchParams({ first: String(PAGE_SIZE) });
    if (cursor !== '') query.set('after', cursor);
    for (let rateLimited = 0; ; rateLimited++) {
      const response = await http.get('twitch', `${streamsUrl}?${query}`, { timeoutMs, headers });
      if (response.status === 429) {
        if (rateLimited >= maxRateLimitRetries) {
          throw new UpstreamUnavailableError('twitch', 'rate-limited', `still rate limited after ${rateLimited} waits`);
        }
        await sleep(rateLimitWaitMs(response.headers.get('ratelimit-reset')));
        continue;
      }
      if (response.status < 200 || response.status >= 300) {
        throw new UpstreamUnavailableError('twitch', 'status', `answered ${response.status}`);
      }
      const page = parseUpstreamBody('twitch', response.text, streamsPageSchema);
      return { streams: page.data.map(toLiveStream), cursor: page.pagination?.cursor ?? '' };
    }
  }

  async function* pages(): AsyncGenerator<LiveStream[], void, undefined> {
    const cursorsSeen = new Set<string>();
    let cursor = '';
    for (;;) {
      const page = await requestPage(cursor);
      yield page.streams;
      // The platform may hand out a cursor with its last page; the empty page it leads to ends the pass.
      if (page.cursor === '' || page.streams.length === 0) return;
      // A cursor handed out twice would loop forever.
      if (cursorsSeen.has(page.cursor)) {
        throw new UpstreamUnavailableError('twitch', 'malformed', 'pagination cursor repeated');
      }
      cursorsSeen.add(page.cursor);
      cursor = page.cursor;
    }
  }

  return {
    pages,
    close: () => http.close(),
    async fetchAllStreams(onProgress) {
      // Viewer counts change while a pass runs, so a stream can move across a page boundary and be
      // served twice; the later copy is the fresher one.
      const streamsById = new Map<string, LiveStream>();
      let pageCount = 0;
      for await (const page of pages()) {
        for (const stream of page) streamsById.set(stream.id, stream);
        onProgress?.({ pages: ++pageCount, streams: streamsById.size });
      }
      return [...streamsById.values()];
    },
  };
}

const streamSchema = z.object({
  id: z.string().min(1),
  user_id: z.string(),
  user_login: z.string(),
  user_name: z.string(),
  game_id: z.string(),
  game_name: z.string(),
  type: z.string(),
  title: z.string(),
  viewer_count: z.number().int().nonnegative(),
  started_at: z.iso.datetime({ offset: true }),
  language: z.string(),
  thumbnail_url: z.string(),
  tags: z.array(z.string()).nullish(),
  is_mature: z.boolean(),
});
const streamsPageSchema = z.object({
  data: z.array(streamSchema),
  pagination: z.object({ cursor: z.string().optional() }).optional(),
});

function toLiveStream(stream: z.output<typeof streamSchema>): LiveStream {
  return {
    id: stream.id,
    userId: stream.user_id,
    userLogin: stream.user_login,
    userName: stream.user_name,
    gameId: stream.game_id,
    gameName: stream.game_name,
    type: stream.type,
    title: stream.title,
    viewerCount: stream.viewer_count,
    startedAt: new Date(stream.started_at),
    language: stream.language,
    thumbnailUrl: stream.thumbnail_url,
    tags: stream.tags ?? [],
    isMature: stream.is_mature,
  };
}

import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import { untilAborted } from '../domain/abortable.js';
import type { Logger } from '../observability/log.js';
import type { Database } from '../store/database.js';
import { replaceSnapshot } from '../store/live-streams.js';
import { createTwitchClient, type TwitchClient } from '../upstreams/twitch/client.js';

// The live-stream collector (docs/contract/decisions.md §8): pages the platform's stream list and replaces the
// snapshot only once a whole pass succeeded. A failed pass changes nothing: searches keep
// answering from the previous snapshot, which is better than a partial one.

export const DEFAULT_COLLECT_INTERVAL_MS = 60_000;

export type PassResult =
  | { ok: true; streams: number; pages: number; durationMs: number }
  | { ok: false; error: string; durationMs: number };

export interface CollectorDeps {
  db: Kysely<Database>;
  client: TwitchClient;
  log: Logger;
}

export function twitchClientFromConfig(
  twitch: NonNullable<Config['twitch']>,
  options: { timeoutMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): TwitchClient {
  return createTwitchClient({ baseUrl: twitch.apiUrl, clientId: twitch.clientId, token: twitch.token, ...options });
}

/**
 * One full pass; never throws, so a loop can go on after a bad pass. With a signal, an abort while
 * the pages are being fetched abandons the pass (null) and nothing is written; the write itself,
 * one short transaction, is never cut off halfway.
 */
export async function collectTwitchPass({ db, client, log }: CollectorDeps, signal?: AbortSignal): Promise<PassResult | null> {
  const started = performance.now();
  let pages = 0;
  try {
    const fetching = client.fetchAllStreams((progress) => {
      pages = progress.pages;
    });
    const streams = signal ? await untilAborted(fetching, signal, () => null) : await fetching;
    if (streams === null) {
      log.info('live-stream pass abandoned on shutdown; the previous snapshot stays', { pagesFetched: pages });
      return null;
    }
    const stored = await replaceSnapshot(db, streams);
    const durationMs = Math.round(performance.now() - started);
    log.info('live-stream snapshot replaced', { streams: stored, pages, durationMs });
    return { ok: true, streams: stored, pages, durationMs };
  } catch (error) {
    const durationMs = Math.round(performance.now() - started);
    // Upstream errors name the upstream and the reason only (never a URL or the token).
    const message = error instanceof Error ? error.message : String(error);
    log.error('live-stream pass failed; the previous snapshot stays', { error: message, pagesFetched: pages, durationMs });
    return { ok: false, error: message, durationMs };
  }
}

/** Passes until `signal` aborts, one every `intervalMs` (start to start; at once when a pass took longer). */
export async function runTwitchCollector(
  deps: CollectorDeps & { intervalMs?: number; signal: AbortSignal; onPass?: (result: PassResult) => void },
): Promise<{ passes: number; failures: number }> {
  const intervalMs = deps.intervalMs ?? DEFAULT_COLLECT_INTERVAL_MS;
  let passes = 0;
  let failures = 0;
  while (!deps.signal.aborted) {
    const started = performance.now();
    const result = await collectTwitchPass(deps, deps.signal);
    if (result === null) break;
    passes += 1;
    if (!result.ok) failures += 1;
    deps.onPass?.(result);
    await sleep(Math.max(0, intervalMs - (performance.now() - started)), deps.signal);
  }
  return { passes, failures };
}

/** Resolves after ms, or at once when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

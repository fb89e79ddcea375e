import { collectTwitchPass, DEFAULT_COLLECT_INTERVAL_MS, runTwitchCollector, sleep, twitchClientFromConfig } from '../collector/twitch.js';
import type { Config } from '../config.js';
import { createLogger } from '../observability/log.js';
import { flags } from './main.js';
import { withStore } from './store.js';
import { usageLine } from './usage.js';

/**
 * `collect twitch [--once]`: one pass (exit 0, or 1 if it failed), or a pass every minute until
 * SIGINT/SIGTERM (exit 0). Without TWITCH_API_URL the collector is off: exit 2.
 */
export async function collectCommand(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = flags(args, { once: { type: 'boolean' } }, usageLine('collect'));
  if (positionals.length !== 1 || positionals[0] !== 'twitch') {
    process.stderr.write(`creator-data collect: the only source is twitch (usage: ${usageLine('collect')})\n`);
    return 2;
  }
  if (!config.twitch) {
    process.stderr.write(
      'creator-data collect: TWITCH_API_URL is not set (with TWITCH_CLIENT_ID and TWITCH_TOKEN); the live-stream collector is off\n',
    );
    return 2;
  }
  const twitch = config.twitch;
  const log = createLogger();

  if (values.once) {
    return withStore(config, async ({ db }) => {
      const client = twitchClientFromConfig(twitch, { timeoutMs: config.upstreamTimeoutMs });
      try {
        const result = await collectTwitchPass({ db, client, log });
        return result?.ok ? 0 : 1;
      } finally {
        await client.close();
      }
    });
  }

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await withStore(config, async ({ db }) => {
      // Rate-limit waits (up to a minute) end at once on shutdown instead of holding the process.
      const client = twitchClientFromConfig(twitch, {
        timeoutMs: config.upstreamTimeoutMs,
        sleep: async (ms) => {
          await sleep(ms, stop.signal);
          if (stop.signal.aborted) throw new Error('shutting down');
        },
      });
      log.info('live-stream collector started', { intervalSeconds: DEFAULT_COLLECT_INTERVAL_MS / 1000 });
      try {
        const { passes, failures } = await runTwitchCollector({ db, client, log, signal: stop.signal });
        log.info('live-stream collector stopped', { passes, failures });
        return 0;
      } finally {
        await client.close();
      }
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

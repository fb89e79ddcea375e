import { createApp, listen } from '../app.js';
import type { Config } from '../config.js';
import { ensureDemoKey } from '../access/demo-key.js';
import { runTwitchCollector, twitchClientFromConfig } from '../collector/twitch.js';

/** `serve`, and `start` (= serve after loading the demo set into an empty store and printing a key). */
export async function serve(config: Config, options: { seedDemo: boolean }): Promise<number> {
  const app = await createApp(config);
  const { db } = app.services.store;
  let demoKey: string | null = null;
  if (options.seedDemo) {
    const { isStoreEmpty, seedDemo } = await import('./seed.js');
    if (await isStoreEmpty(db)) {
      process.stderr.write('empty store: loading the demo data set\n');
      await seedDemo(db, process.stderr);
    }
    demoKey = await ensureDemoKey(db);
  }
  const listening = await listen(app, config.port, config.host);
  // With TWITCH_* set the snapshot refreshes inside the server: the embedded store is locked
  // to this process, so a separate `collect` could not reach it.
  const stopCollector = new AbortController();
  const collecting = config.twitch
    ? runTwitchCollector({
        db,
        client: twitchClientFromConfig(config.twitch, { timeoutMs: config.upstreamTimeoutMs }),
        log: app.services.log,
        signal: stopCollector.signal,
      })
    : Promise.resolve();
  process.stdout.write(`creator-data listening on ${listening.url} (GraphiQL: ${listening.url}/graphql)\n`);
  if (demoKey) {
    process.stdout.write(
      [
        `Demo API key (pro plan, replaced at every start): ${demoKey}`,
        'Try:',
        `  curl -s -X POST ${listening.url}/api/v1/search/twitter/user -H 'Authorization: ${demoKey}' -H 'Content-Type: application/json' -d '{"query":"a","page_size":3}'`,
        '',
      ].join('\n'),
    );
  }
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  process.stderr.write('shutting down\n');
  stopCollector.abort();
  await collecting;
  await listening.close();
  await app.close();
  return 0;
}

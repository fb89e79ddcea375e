import { setFlagsFromString } from 'node:v8';
import { createApp, listen } from '../app.js';
import { startMetricsServer } from '../observability/metrics-server.js';
import type { Config } from '../config.js';
import { ensureDemoKey } from '../access/demo-key.js';
import { runTwitchCollector, twitchClientFromConfig } from '../collector/twitch.js';

/** `serve`, and `start` (= serve after loading the demo set into an empty store and printing a key). */
export async function serve(config: Config, options: { seedDemo: boolean }): Promise<number> {
  // By default V8 lets the old generation reach several times its live size between full
  // collections: request garbage then costs hundreds of MB beside the search index. The growth
  // factor is read at every collection, so setting it here (before the index loads) takes effect.
  if (config.heapGrowthPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
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
  const metricsServer = config.metricsPort === undefined ? null : await startMetricsServer(app.services.metrics, config.metricsPort, config.host);
  // With TWITCH_* set the snapshot refreshes inside the server: the embedded store is locked
  // to this process, so a separate `collect` could not reach it.
  const stopCollector = new AbortController();
  const twitch = config.twitch ? twitchClientFromConfig(config.twitch, { timeoutMs: config.upstreamTimeoutMs }) : null;
  const collecting = twitch
    ? runTwitchCollector({ db, client: twitch, log: app.services.log, signal: stopCollector.signal }).finally(() => twitch.close())
    : Promise.resolve();
  process.stdout.write(`creator-data listening on ${listening.url} (GraphiQL: ${listening.url}/graphql)\n`);
  if (metricsServer) process.stdout.write(`metrics on ${metricsServer.url}\n`);
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
  // SIGTERM: refuse new connections at once (a client's retry goes to another instance), let the
  // requests in flight finish within SHUTDOWN_GRACE_MS, answer the rest 503, then close the pool,
  // Redis and the upstream sockets, and exit 0.
  process.stderr.write(`shutting down: finishing requests in flight (up to ${config.shutdownGraceMs} ms)\n`);
  stopCollector.abort();
  await listening.close(config.shutdownGraceMs);
  await metricsServer?.close();
  await collecting;
  await app.close();
  app.services.log.flush?.();
  process.stderr.write('stopped\n');
  return 0;
}

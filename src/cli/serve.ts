import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { type App, CLIENT_TIMEOUTS, createApp, listen, type Listening } from '../app.js';
import { answerWhileStarting } from '../http/server.js';
import { startMetricsServer } from '../observability/metrics-server.js';
import type { Config } from '../config.js';
import { ensureDemoKey } from '../access/demo-key.js';
import { runTwitchCollector, twitchClientFromConfig } from '../collector/twitch.js';
import { createLogger, type Logger } from '../observability/log.js';
import { DatabaseConfigError, isDatabaseUnavailable } from '../store/errors.js';

/** While the database is unreachable at start, the wait before trying again: doubling, up to the last. */
const START_RETRY_FIRST_MS = 1_000;
const START_RETRY_LAST_MS = 10_000;

/**
 * A port another process holds, or a HOST that does not resolve, is found before the work of
 * starting (migrations, the demo set, a search index that loads for minutes at 10M rows without
 * a snapshot): the port is opened and closed at once (port 0: any free one, which checks the
 * host). Taken meanwhile, listening fails the same way later (main.ts names it either way).
 */
async function assertCanListen(port: number, host: string): Promise<void> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** `serve`, and `start` (= serve after loading the demo set into an empty store and printing a key). */
export async function serve(config: Config, options: { seedDemo: boolean }): Promise<number> {
  // By default V8 lets the old generation reach several times its live size between full
  // collections: request garbage then costs hundreds of MB beside the search index. The growth
  // factor is read at every collection, so setting it here (before the index loads) takes effect.
  if (config.heapGrowthPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
  const stopping = new AbortController();
  const stop = () => stopping.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const log = createLogger();
  let app: App | null = null;
  const handler = {
    server: (request: IncomingMessage, response: ServerResponse) => (app ? app.server(request, response) : answerWhileStarting(request, response)),
    abortInFlight: () => app?.abortInFlight(),
  };
  // Normally the port opens once the service is assembled: until then a connection is refused, and
  // a client or load balancer goes to another instance (a rolling restart fails no request). With
  // the database away at start it opens at once, so the process is what it is during an outage
  // while running: /healthz 200, /readyz and every call 503, until the database answers.
  let opening: Promise<Listening> | null = null;
  const listening = () => (opening ??= listen(handler, config.port, config.host, { ...CLIENT_TIMEOUTS, keepAliveMs: config.httpKeepAliveMs }));
  // An open port would keep the process alive after it gave up.
  const closeIfListening = async () => {
    if (opening) await (await opening).close();
  };
  let assembled: App | null = null;
  let demoKey: string | null = null;
  await assertCanListen(config.port, config.host);
  if (config.metricsPort !== undefined) await assertCanListen(config.metricsPort, config.metricsHost);
  try {
    assembled = await createAppOnceDatabaseAnswers(config, log, stopping.signal, listening);
    if (assembled && options.seedDemo) demoKey = await seedDemoStore(assembled);
  } catch (error) {
    await closeIfListening();
    await assembled?.close();
    throw error;
  }
  if (!assembled) {
    await closeIfListening();
    log.info('stopped');
    log.flush?.();
    return 0;
  }
  app = assembled;
  let url: string;
  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | null;
  try {
    ({ url } = await listening());
    metricsServer = config.metricsPort === undefined ? null : await startMetricsServer(app.services.metrics, config.metricsPort, config.metricsHost);
  } catch (error) {
    // A port taken or refused (main.ts says which): nothing may keep the process alive.
    await closeIfListening().catch(() => {});
    await app.close();
    throw error;
  }
  const { db } = app.services.store;
  // With TWITCH_* set the snapshot refreshes inside the server: the embedded store is locked
  // to this process, so a separate `collect` could not reach it.
  const stopCollector = new AbortController();
  const twitch = config.twitch ? twitchClientFromConfig(config.twitch, { timeoutMs: config.upstreamTimeoutMs }) : null;
  const collecting = twitch
    ? runTwitchCollector({ db, client: twitch, log: app.services.log, signal: stopCollector.signal }).finally(() => twitch.close())
    : Promise.resolve();
  process.stdout.write(`creator-data listening on ${url} (GraphiQL: ${url}/graphql)\n`);
  if (metricsServer) process.stdout.write(`metrics on ${metricsServer.url}\n`);
  if (demoKey) {
    process.stdout.write(
      [
        `Demo API key (pro plan, replaced at every start): ${demoKey}`,
        'Try:',
        `  curl -s -X POST ${url}/api/v1/search/twitter/user -H 'Authorization: ${demoKey}' -H 'Content-Type: application/json' -d '{"query":"a","page_size":3}'`,
        '',
      ].join('\n'),
    );
  }
  if (!stopping.signal.aborted) await new Promise((resolve) => stopping.signal.addEventListener('abort', resolve, { once: true }));
  // SIGTERM: refuse new connections at once (a client's retry goes to another instance), let the
  // requests in flight finish within SHUTDOWN_GRACE_MS, answer the rest 503, then close the pool,
  // Redis and the upstream sockets, and exit 0.
  // JSON lines, as every log line on stderr is (docs/operations.md): a collector parses each.
  log.info('shutting down: finishing requests in flight', { graceMs: config.shutdownGraceMs });
  stopCollector.abort();
  await (await listening()).close(config.shutdownGraceMs);
  await metricsServer?.close();
  await collecting;
  await app.close();
  log.info('stopped');
  log.flush?.();
  return 0;
}

/**
 * The service, assembled once the database answers: while it is unreachable (not there yet,
 * restarting) it is tried again after 1 s, doubling to 10 s, with one warning, as a running
 * process rides out an outage; `whileUnavailable` runs at the first failure. Any other failure
 * (a migration, a locked store, a URL the database refuses for good: DatabaseConfigError) is
 * thrown at once. null when the process is told to stop while waiting.
 */
async function createAppOnceDatabaseAnswers(
  config: Config,
  log: Logger,
  stopping: AbortSignal,
  whileUnavailable: () => Promise<unknown>,
): Promise<App | null> {
  for (let attempt = 1, waitMs = START_RETRY_FIRST_MS; ; attempt++, waitMs = Math.min(START_RETRY_LAST_MS, waitMs * 2)) {
    try {
      const app = await createApp(config, { log });
      if (attempt > 1) log.info('database available: starting', { attempts: attempt });
      return app;
    } catch (error) {
      // A database, role, password, host or TLS setting refused for good is no outage to wait out.
      if (error instanceof DatabaseConfigError || !isDatabaseUnavailable(error)) throw error;
      // The driver's message names the host and port, never the URL's credentials.
      if (attempt === 1) {
        await whileUnavailable();
        log.warn('database unavailable at start: retrying until it answers (/readyz 503 meanwhile)', {
          error: error instanceof Error ? error.message || String((error as NodeJS.ErrnoException).code) : String(error),
          retryFirstMs: START_RETRY_FIRST_MS,
          retryLastMs: START_RETRY_LAST_MS,
        });
      }
    }
    const stopped = await sleep(waitMs, false, { signal: stopping }).catch(() => true);
    if (stopped) return null;
  }
}

/** `start`: the demo data set into an empty store, and a fresh demo key. */
async function seedDemoStore(app: App): Promise<string> {
  const { db } = app.services.store;
  const { isStoreEmpty, seedDemo } = await import('./seed.js');
  if (await isStoreEmpty(db)) {
    process.stderr.write('empty store: loading the demo data set\n');
    await seedDemo(db, process.stderr);
  }
  return ensureDemoKey(db);
}

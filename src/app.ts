import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccessService } from './access/service.js';
import { createLimiter } from './access/limits.js';
import type { Config } from './config.js';
import { createLogger } from './log.js';
import type { Logger, Services } from './services.js';
import { openStore } from './store/connect.js';
import { migrateToLatest } from './store/migrate.js';
import { createInstagramClient } from './upstreams/instagram/client.js';
import { createServer } from './yoga.js';

export interface App {
  services: Services;
  yoga: ReturnType<typeof createServer>;
  close(): Promise<void>;
}

/** Opens the store (migrating it), the limiter and the access service: everything a request needs. */
export async function createApp(config: Config, options: { log?: Logger } = {}): Promise<App> {
  const log = options.log ?? createLogger();
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    statementTimeoutMs: config.statementTimeoutMs,
  });
  try {
    await migrateToLatest(store.db);
  } catch (error) {
    await store.close();
    throw error;
  }
  const limiter = createLimiter({ redisUrl: config.redisUrl });
  // decisions.md §7: without INSTAGRAM_UPSTREAM_URL, realtime fetches go to the built-in simulator
  // (in this process, on a free local port), and the operator is told the data is not real.
  let instagramSimulator: { url: string; close(): Promise<void> } | null = null;
  if (!config.instagramUpstreamUrl) {
    const { startInstagramSimulator } = await import('./upstreams/instagram/simulator.js');
    instagramSimulator = await startInstagramSimulator({ port: 0, host: '127.0.0.1' });
    log.warn('INSTAGRAM_UPSTREAM_URL is not set: realtime media data is simulated', { simulator: instagramSimulator.url });
  }
  const instagram = createInstagramClient({
    baseUrl: config.instagramUpstreamUrl ?? instagramSimulator!.url,
    timeoutMs: config.upstreamTimeoutMs,
  });
  const services: Services = { config, store, access: createAccessService(store.db, limiter), log, instagram };
  const yoga = createServer(services);
  return {
    services,
    yoga,
    close: async () => {
      await limiter.close();
      await instagramSimulator?.close();
      await store.close();
    },
  };
}

export interface Listening {
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function listen(app: App, port: number, host: string): Promise<Listening> {
  const server = createHttpServer(app.yoga);
  // A slow client must not hold a connection open forever.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

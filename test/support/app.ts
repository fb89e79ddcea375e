import { createApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { FrontDoor } from '../../src/http/server.js';
import { createLogger } from '../../src/observability/log.js';
import type { Services } from '../../src/services.js';
import { createAccount, issueKey, type NewAccountOptions } from '../../src/store/accounts.js';
import type { InstagramClient } from '../../src/upstreams/instagram/client.js';
import { createTestStore, type TestStore } from './store.js';

export interface TestApp {
  store: TestStore;
  services: Services;
  server: FrontDoor;
  /** A new account with one key; the raw key. */
  newKey(options?: NewAccountOptions): Promise<string>;
  rest(path: string, init?: { method?: string; body?: unknown; key?: string | null; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  graphql(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * The real service in-process (no port) over a fresh test database, assembled as `serve` does.
 * `instagram`: the photo platform's client for realtime fetches (point it at a simulator);
 * without it they answer 500.
 */
export async function createTestApp(
  overrides: Partial<Config> = {},
  options: { instagram?: InstagramClient; pool?: Parameters<typeof createTestStore>[0] } = {},
): Promise<TestApp> {
  const store = await createTestStore(options.pool);
  // REDIS_URL from the environment: CI's second run shares limits through a real Redis. Searches
  // run SQL unless a test asks for the in-memory index (it sees writes after a feed read, not at once).
  const config = { ...loadConfig({ REDIS_URL: process.env.REDIS_URL }), searchIndex: false, searchSnapshotDir: undefined, ...overrides };
  const lines: string[] = [];
  const log = createLogger({ write: (line: string) => lines.push(line) } as unknown as NodeJS.WritableStream);
  const built = await createApp(config, { log, store, instagram: options.instagram ?? null });
  const { services, server } = built;
  let defaultKey: string | null = null;
  const app: TestApp = {
    store,
    services,
    server,
    newKey: async (options = { plan: 'pro' }) => (await issueKey(store.db, await createAccount(store.db, options))).key,
    async rest(path, init = {}) {
      const key = init.key === undefined ? (defaultKey ??= await app.newKey()) : init.key;
      const headers: Record<string, string> = { ...(init.headers ?? {}) };
      if (key !== null) headers.authorization = key;
      if (init.body !== undefined && !('content-type' in headers)) headers['content-type'] = 'application/json';
      const response = await server.fetch(`http://test${path}`, {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers,
        body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
      });
      return { status: response.status, body: await response.json(), headers: response.headers };
    },
    async graphql(query, variables, key) {
      const useKey = key === undefined ? (defaultKey ??= await app.newKey()) : key;
      const response = await server.fetch('http://test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(useKey !== null ? { authorization: useKey } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, body: await response.json(), headers: response.headers };
    },
    close: () => built.close(),
  };
  return app;
}

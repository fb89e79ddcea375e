import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, createApp, listen, type Listening } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { Logger } from '../src/observability/log.js';
import { createTestStore } from './support/store.js';

// A pooled client keeps its connection between requests. Node's server closes an idle one after
// 5 s, and the client's next request on it then fails with ECONNRESET (the benchmark's check met
// it between two systems' answers); the service keeps idle connections for 65 s.

let app: App;
let listening: Listening;
const silent: Logger = { info: () => {}, warn: () => {}, error: () => {} };

beforeAll(async () => {
  app = await createApp({ ...loadConfig({}), searchIndex: false, searchSnapshotDir: undefined }, { store: await createTestStore(), log: silent, instagram: null });
  listening = await listen(app, 0, '127.0.0.1');
}, 60_000);
afterAll(async () => {
  await listening?.close(0);
  await app?.close();
});

interface Answer {
  status: number;
  keepAlive: string | string[] | undefined;
  reusedSocket: boolean;
}

function ask(agent: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL('/healthz', listening.url);
    const sent = request(url, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, keepAlive: response.headers['keep-alive'], reusedSocket: sent.reusedSocket }));
    });
    sent.on('error', reject);
    sent.end();
  });
}

describe('idle keep-alive connections', () => {
  it('serve the next request on the same connection after more than Node’s 5 s, and say how long they stay', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await ask(agent);
      expect(first).toEqual({ status: 200, keepAlive: 'timeout=65', reusedSocket: false });
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      expect(await ask(agent)).toEqual({ status: 200, keepAlive: 'timeout=65', reusedSocket: true });
    } finally {
      agent.destroy();
    }
  }, 20_000);
});

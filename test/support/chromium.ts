import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

// Debian's Chromium, installed by .ci/run: playwright-core never downloads a browser of its own.
export const chromiumPath = '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);
/**
 * The browser tests drive the page, not the store: they run once, in the embedded pass (the store
 * `npm start` serves), and are skipped when TEST_DATABASE_URL is set, where they would repeat it.
 */
export const browserTests = hasChromium && !process.env.TEST_DATABASE_URL;

// As root, on a closed network: no sandbox, no GPU, nothing the browser would fetch for itself.
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export interface OfflineBrowser {
  context: BrowserContext;
  /** Every request a page made to a host other than the server's (none may happen). */
  outside: string[];
  /** How many requests went to the server. */
  fromServer(): number;
  close(): Promise<void>;
}

/** Headless Chromium that may talk to `serverUrl` only: anything else is recorded and refused. */
export async function launchOfflineBrowser(serverUrl: string, viewport = { width: 1400, height: 1000 }): Promise<OfflineBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'cds-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: chromiumPath, headless: true, args: chromiumArgs, viewport });
  const outside: string[] = [];
  let fromServer = 0;
  const serverHost = new URL(serverUrl).host;
  // data: is inline; blob: URLs (workers) carry the origin that made them.
  const hostOf = (url: string) => (url.startsWith('data:') ? serverHost : new URL(url.startsWith('blob:') ? url.slice('blob:'.length) : url).host);
  const account = (url: string) => (hostOf(url) === serverHost ? fromServer++ : outside.push(url));
  const watchSockets = (page: Page) => page.on('websocket', (socket) => account(socket.url()));
  context.pages().forEach(watchSockets);
  context.on('page', watchSockets);
  context.on('request', (request) => account(request.url()));
  // Nothing leaves the machine even if the page asks: anything not for the server is refused.
  await context.route('**/*', (route) => (hostOf(route.request().url()) === serverHost ? route.continue() : route.abort('blockedbyclient')));
  return {
    context,
    outside,
    fromServer: () => fromServer,
    close: async () => {
      try {
        await context.close();
      } finally {
        rmSync(userDataDir, { recursive: true, force: true });
      }
    },
  };
}

import type { OfflineBrowser } from '../support/chromium.js';
import type { DemoServer } from '../support/demo-server.js';

/** What test/e2e/demo-server.test.ts starts once for its parts: the server, and Chromium where browser tests run. */
export interface Served {
  server: DemoServer;
  browser: OfflineBrowser;
}

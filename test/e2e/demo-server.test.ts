import { afterAll, beforeAll } from 'vitest';
import { browserTests, launchOfflineBrowser, type OfflineBrowser } from '../support/chromium.js';
import { startDemoServer, type DemoServer } from '../support/demo-server.js';
import { codegen } from './codegen.js';
import { docsPage } from './docs.js';
import { graphiqlPage } from './graphiql.js';
import type { Served } from './served.js';

// What a user meets first, against one real `creator-data serve` holding the demo data set: the
// /docs page and GraphiQL in headless Chromium (where browser tests run), and GraphQL Code
// Generator over /graphql (every run). One server for the three: each costs a seed, a key and a
// start in processes of their own, ~15 s of two cores' time on the embedded store.

let server: DemoServer | undefined;
let browser: OfflineBrowser | undefined;

beforeAll(async () => {
  server = await startDemoServer();
  // Tall enough that Monaco renders GraphiQL's whole result (it draws only the visible lines).
  if (browserTests) browser = await launchOfflineBrowser(server.url, { width: 1400, height: 1000 });
}, 120_000);

afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await server?.stop();
  }
});

/** The server and browser, once started (a part's test reads them; skipped parts never do). */
const served = (): Served => ({ server: server!, browser: browser! });

docsPage(served);
graphiqlPage(served);
codegen(served);

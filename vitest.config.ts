import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { TEST_NODE_FLAGS } from './test/support/bin.js';

const require = createRequire(import.meta.url);

export default defineConfig({
  // graphql ships ESM and CJS builds; Pothos and yoga (not transformed) load the CJS one, so our
  // code must too, or `instanceof GraphQLError`/schema checks see two realms.
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  test: {
    // Named by the store it runs on: vitest orders files longest first by the durations it keeps
    // per project, and a file skipped on one store (outage: PostgreSQL only, ~100 s) must not be
    // ordered last on the other by its skipped run's 0 s.
    name: process.env.TEST_DATABASE_URL ? 'postgres' : 'embedded',
    include: ['test/**/*.test.ts', '*.tmp.test.ts'],
    // The bin runs dist/: rebuild it (incrementally) before any test can spawn it.
    globalSetup: ['test/support/build-dist.ts', 'test/support/pglite-template.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: test files share them with PostgreSQL and the servers they start.
    maxWorkers: 2,
    // A worker keeps its modules from one test file to the next: importing the service's graph
    // anew for each of ~80 files was a third of a run. Every file makes its own store and app, and
    // restores what it spies on; nothing a file leaves in a module may be read by another.
    isolate: false,
    // V8 compiles the embedded store's WebAssembly once, not again optimised (test/support/bin.ts).
    execArgv: TEST_NODE_FLAGS,
  },
});

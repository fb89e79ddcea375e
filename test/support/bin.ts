import { fileURLToPath } from 'node:url';

/** The package's command, as an operator runs it. */
export const bin = fileURLToPath(new URL('../../bin/creator-data.js', import.meta.url));

/**
 * V8 flags of the processes the tests start, and of vitest's workers (vitest.config.ts). The
 * embedded store is PostgreSQL compiled to WebAssembly: V8 compiles it quickly (Liftoff), then
 * again, optimised, in the background (TurboFan), work a short-lived command or test store never
 * gets back: on two cores it was about 40 % of a CLI command's CPU and a sixth of CI's embedded
 * run. What any process answers is the same; only how V8 compiles the store differs.
 */
export const TEST_NODE_FLAGS = ['--liftoff-only'];

/** The arguments for `node` that run `creator-data <args>`. */
export const binArgs = (args: readonly string[]): string[] => [...TEST_NODE_FLAGS, bin, ...args];

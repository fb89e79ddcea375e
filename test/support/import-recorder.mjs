// `node --import ./test/support/import-recorder.mjs …`: appends the URL of every module the
// program then loads to the file named by IMPORT_LOG (test/package.unit.test.ts reads it).
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

// Loaded once on the main thread (registers itself), once more as the hooks, on their own thread.
if (isMainThread) register(import.meta.url);

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  appendFileSync(process.env.IMPORT_LOG, `${resolved.url}\n`);
  return resolved;
}

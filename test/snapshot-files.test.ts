import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestStore, type TestStore } from './support/store.js';

// The files around a search-index snapshot (src/search/runtime/snapshots.ts): the temporary file
// a write goes through, and what a failed write leaves behind.

let store: TestStore;
let root: string;

beforeAll(async () => {
  store = await createTestStore();
  root = mkdtempSync(join(tmpdir(), 'cds-snapshot-files-'));
});

afterAll(async () => {
  await store?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** test/support/snapshot-writer-thread.ts in a worker thread, from the TypeScript sources (tsx's loader). */
function writeInThread(path: string): Promise<{ error: string | null; warnings: string[] }> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const entry = new URL('./support/snapshot-writer-thread.ts', import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
  const worker = new Worker(bootstrap, { eval: true, workerData: { path, databaseUrl: store.databaseUrl, pgliteTemplate: inject('pgliteTemplate') } });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the snapshot thread exited with ${code} before answering`)));
  });
}

describe('a snapshot write that fails at the rename', () => {
  it('closes its file once, and removes it', { timeout: 60_000 }, async () => {
    const dir = join(root, 'rename-fails');
    const path = join(dir, 'search-index.test.snapshot');
    // A folder where the file should go: everything is written, then the rename fails.
    mkdirSync(path, { recursive: true });
    const { error, warnings } = await writeInThread(path);
    expect(error).toMatch(/^E(ISDIR|EXIST|NOTEMPTY|PERM)$/);
    // A second close of its descriptor: "File descriptor N closed but not opened in unmanaged mode".
    expect(warnings.filter((warning) => /descriptor/i.test(warning))).toEqual([]);
    expect(readdirSync(dir)).toEqual(['search-index.test.snapshot']);
  });
});

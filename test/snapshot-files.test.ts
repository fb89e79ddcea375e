import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Logger } from '../src/observability/log.js';
import { createSearch } from '../src/search/runtime/thread.js';
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

/** A process that runs until killed: a writer still alive. */
function liveProcess() {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  return { pid: child.pid!, stop: () => child.kill('SIGKILL') };
}

/** The pid of a process that has ended: a writer that died. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };

describe('temporary snapshot files left by writers that died', () => {
  it('are removed as a process starts its index; a live writer’s, and files not ours, are kept', { timeout: 30_000 }, async () => {
    const dir = join(root, 'left-behind');
    mkdirSync(dir, { recursive: true });
    const writer = liveProcess();
    try {
      const dead = await deadPid();
      const hoursAgo = (Date.now() - 2 * 3_600_000) / 1000;
      const files = {
        snapshot: 'search-index.db.snapshot',
        killedWriter: `search-index.db.snapshot.${dead}-1.partial`,
        killedPartition: `search-index.db.part2of3.snapshot.${dead}-4.partial`,
        liveWriter: `search-index.db.snapshot.${writer.pid}-1.partial`,
        // Its pid runs, but the file has not been written to for hours: the pid was reused.
        reusedPid: `search-index.db.snapshot.${writer.pid}-2.partial`,
        notOurs: `backup.${dead}-1.partial`,
      };
      for (const name of Object.values(files)) writeFileSync(join(dir, name), 'x');
      utimesSync(join(dir, files.reusedPid), hoursAgo, hoursAgo);

      const search = createSearch({ store, log: quiet, pollMs: 3_600_000, thread: false, snapshots: { dir, everyMs: 0 } });
      expect(readdirSync(dir).sort()).toEqual([files.liveWriter, files.notOurs, files.snapshot].sort());
      await search.stop();
    } finally {
      writer.stop();
    }
  });
});

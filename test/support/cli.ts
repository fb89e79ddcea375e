import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { openStore, type Store } from '../../src/store/connect.js';
import { createTestStore, type TestStore } from './store.js';
import { binArgs } from './bin.js';


export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `creator-data …` as a user would, in its own process. */
export function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, binArgs(args), { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    // 'close', not 'exit': the process may end before its output is read (seen under load: a
    // usage printed, exit 0, and stdout empty).
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    // A command may end without reading its input (a refused argument): the rest then meets a
    // closed pipe, and its exit code and output are the answer.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(stdin ?? '');
  });
}

export interface CliStore {
  /** The environment that points a command at the store (read it inside a test or hook). */
  readonly env: Record<string, string>;
  /** Runs `work` on the store, opening the embedded folder only while no command holds it. */
  withDb<T>(work: (store: Store) => Promise<T>): Promise<T>;
}

/**
 * The store a file's CLI commands run against, made before its tests and dropped after: the
 * test's PostgreSQL database (TEST_DATABASE_URL), or an embedded folder that the test opens
 * itself once a command has exited (the embedded store is locked to one process).
 */
export function cliStore(folderPrefix: string): CliStore {
  let env: Record<string, string> = {};
  let testStore: TestStore | null = null;
  let dataDir: string | null = null;
  beforeAll(async () => {
    if (process.env.TEST_DATABASE_URL) {
      testStore = await createTestStore();
      env = { DATABASE_URL: testStore.databaseUrl!, DATA_DIR: '' };
    } else {
      dataDir = mkdtempSync(join(tmpdir(), folderPrefix));
      env = { DATA_DIR: dataDir, DATABASE_URL: '' };
    }
  });
  afterAll(async () => {
    await testStore?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    get env() {
      return env;
    },
    async withDb(work) {
      if (testStore) return work(testStore);
      const store = await openStore({ dataDir: dataDir! });
      try {
        return await work(store);
      } finally {
        await store.close();
      }
    },
  };
}

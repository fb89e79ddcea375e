import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './cli.js';
import { startServerProcess } from './server-process.js';
import { createTestStore } from './store.js';

export interface DemoServer {
  url: string;
  /** A raw key on the `pro` plan, made by `creator-data keys create`. */
  key: string;
  output: () => string;
  stop(): Promise<void>;
}

/**
 * A real `creator-data serve` holding the demo data set and a key, set up through the CLI as an
 * operator would: on a fresh `test_*` database when TEST_DATABASE_URL is set, else on an embedded
 * PGlite folder. The CLI runs first because the embedded store admits one process at a time.
 */
export async function startDemoServer(): Promise<DemoServer> {
  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanUp = async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  };
  try {
    let env: Record<string, string>;
    if (process.env.TEST_DATABASE_URL) {
      const store = await createTestStore();
      cleanups.push(() => store.close());
      env = { DATABASE_URL: store.databaseUrl!, DATA_DIR: '' };
    } else {
      const dataDir = mkdtempSync(join(tmpdir(), 'cds-demo-server-'));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      env = { DATABASE_URL: '', DATA_DIR: dataDir };
    }
    const seeded = await runCli(['seed', '--demo'], env);
    if (seeded.code !== 0) throw new Error(`seed --demo exited with ${seeded.code}: ${seeded.stderr}`);
    const created = await runCli(['keys', 'create', '--plan', 'pro'], env);
    if (created.code !== 0) throw new Error(`keys create exited with ${created.code}: ${created.stderr}`);
    const key = created.stdout.trim();

    const server = await startServerProcess(env);
    cleanups.push(async () => void (await server.stop()));
    return { url: server.url, key, output: server.output, stop: cleanUp };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

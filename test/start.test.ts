import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';
import { binArgs } from './support/bin.js';

// `npm start` on a fresh machine: the embedded store, demo data, a printed key and curl line.
// The folder is made when the suite runs: a skipped suite (the PostgreSQL pass) runs no hook, and
// left a folder behind on every run when it was made as the file loaded.
let dataDir = '';
const children: ChildProcess[] = [];

function start(): Promise<{ child: ChildProcess; stdout: string; stderr: () => string }> {
  const env = { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', PORT: '0', INSTAGRAM_UPSTREAM_URL: '' };
  const child = spawn(process.execPath, binArgs(['start']), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (/curl .*\n/.test(stdout)) resolve({ child, stdout, stderr: () => stderr });
    });
    child.once('exit', (code) => reject(new Error(`start exited with ${code}: ${stderr}`)));
  });
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

/** Runs the printed curl line's request (method, URL, headers, body) with fetch. */
async function runPrintedCurl(stdout: string) {
  const line = /curl (.*)\n/.exec(stdout)![1];
  const url = /(http:\/\/\S+)/.exec(line)![1];
  const headers = Object.fromEntries([...line.matchAll(/-H '([^:]+): ([^']*)'/g)].map((m) => [m[1], m[2]]));
  const body = /-d '([^']*)'/.exec(line)![1];
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, body: (await response.json()) as any, key: headers.Authorization };
}

// The embedded store whatever the run's store: the embedded pass runs it, the PostgreSQL pass would repeat it.
describe.skipIf(process.env.TEST_DATABASE_URL)('creator-data start on an empty embedded store', { timeout: 180_000 }, () => {
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cds-start-'));
  });
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loads the demo set, prints a working key and curl line, guards its folder, and never reseeds', async () => {
    const first = await start();
    expect(first.stderr()).toContain('loading the demo data set');
    const answer = await runPrintedCurl(first.stdout);
    expect(answer.status).toBe(200);
    expect(answer.body.success).toBe(true);
    expect(answer.body.data.total).toBeGreaterThan(0);
    expect(answer.body.data.items.length).toBeGreaterThan(0);

    // A second process on the same folder gets a clear error, not a corrupted store.
    const second = await runCli(['serve'], { DATA_DIR: dataDir, DATABASE_URL: '', PORT: '0' });
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/in use by process \d+/);

    await stop(first.child);
    const again = await start();
    expect(again.stderr()).not.toContain('loading the demo data set');
    const rerun = await runPrintedCurl(again.stdout);
    expect(rerun.status).toBe(200);
    expect(rerun.body.data.total).toBe(answer.body.data.total);
    const url = /(http:\/\/\S+) /.exec(again.stdout)![1];
    const oldKey = await fetch(`${url}/api/ping`, { headers: { authorization: answer.key } });
    expect(oldKey.status).toBe(401);
    await stop(again.child);
  });
});

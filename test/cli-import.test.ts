import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { cliStore } from './support/cli.js';
import { binArgs } from './support/bin.js';

// `creator-data import` in its own process, as an operator runs it, against the test's PostgreSQL
// database or an embedded folder the test opens once the command has exited.
const store = cliStore('cds-cli-import-');

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `creator-data …` (through `sh -c` when `shell` redirects its descriptors) with stdin as given. */
function run(args: string[], stdin: 'pipe' | 'ignore' | number, shell?: string): Promise<Ended> {
  const [command, argv] = shell ? ['sh', ['-c', `exec "$0" "$@" ${shell}`, process.execPath, ...binArgs(args)]] : [process.execPath, binArgs(args)];
  const child = spawn(command as string, argv as string[], { env: { ...process.env, ...store.env }, stdio: [stdin, 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('creator-data import from stdin', { timeout: 120_000 }, () => {
  it.runIf(process.platform === 'linux')('a closed stdin is one line naming stdin and exit code 1, not an empty import', async () => {
    const ended = await run(['import', 'creators', '-'], 'pipe', '<&-');
    expect(ended).toEqual({ code: 1, stdout: '', stderr: 'creator-data: cannot read stdin: it is closed (give the file, or redirect it with <)\n' });
  });

  it('a stdin that cannot be read (open for writing only: EBADF) is one line naming stdin, exit code 1', async () => {
    const writeOnly = openSync('/dev/null', 'w');
    try {
      const ended = await run(['import', 'creators', '-'], writeOnly);
      expect(ended.code, ended.stderr).toBe(1);
      // On PostgreSQL the bulk load's notes come first (an empty table: its indexes are built after).
      expect(ended.stderr.trimEnd().split('\n').at(-1)).toBe('creator-data: cannot read stdin: EBADF; running the import again is safe (it upserts)');
      expect(ended.stderr).not.toMatch(/\n\s+at /);
    } finally {
      closeSync(writeOnly);
    }
  });

  it('an empty stdin (< /dev/null, or an ignored one) is a valid empty import', async () => {
    for (const [stdin, shell] of [['pipe', '< /dev/null'], ['ignore', undefined]] as const) {
      const ended = await run(['import', 'creators', '-'], stdin, shell);
      expect(ended.code, ended.stderr).toBe(0);
      expect(ended.stderr).toMatch(/^import creators: done, 0 lines, 0 loaded, 0 rejected/m);
    }
  });
});

describe('creator-data import stopped by a signal', { timeout: 120_000 }, () => {
  /**
   * Imports 12,000 creators from a stdin held open, and sends `signal` once the progress line says
   * 10,000 lines are loaded: the two batches of 5,000 read so far, the rest of the input waiting.
   */
  async function interrupt(signal: 'SIGINT' | 'SIGTERM', prefix: string): Promise<Ended & { stored: number }> {
    const child = spawn(process.execPath, binArgs(['import', 'creators', '-']), { env: { ...process.env, ...store.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin.on('error', () => {});
    const ended = new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve(code));
    });
    const lines = Array.from({ length: 12_000 }, (_, i) => `${JSON.stringify({ user_id: `${prefix}${i + 1}`, username: `${prefix}${i + 1}` })}\n`);
    child.stdin.write(lines.join(''));
    for (let waited = 0; waited < 90_000 && !/10,000 lines/.test(stderr) && child.exitCode === null; waited += 100) await sleep(100);
    expect(stderr).toMatch(/10,000 lines, 10,000 loaded/);
    child.kill(signal);
    const code = await ended;
    const stored = await store.withDb(async ({ db }) => {
      const { rows } = await sql<{ n: string | number }>`SELECT count(*) AS n FROM creators WHERE user_id LIKE ${`${prefix}%`}`.execute(db);
      return Number(rows[0].n);
    });
    return { code, stdout, stderr, stored };
  }

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s: stops reading, commits what it wrote, says how many lines are loaded, exits %i', async (signal, exitCode) => {
    const ended = await interrupt(signal, `sig${signal.toLowerCase()}_`);
    expect(ended.code, ended.stderr).toBe(exitCode);
    const last = ended.stderr.trimEnd().split('\n').at(-1);
    expect(last).toBe(`import creators: stopped by ${signal} after line 10,000: 10,000 loaded, 0 rejected; running the import again is safe (it upserts)`);
    expect(ended.stored).toBe(10_000);
    expect(ended.stderr).not.toMatch(/\n\s+at /);
  });
});

import { spawn } from 'node:child_process';
import { expect } from 'vitest';
import { binArgs } from './bin.js';

// A command that can never work ends at start with one line and exit code 1: how the tests of
// start errors run a command to its end and read that line.

/** The password the tests put in URLs: no output may hold it. */
export const SECRET = 's3cret';

export interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `creator-data …` with `env`, killed (and failing the test) if it has not ended within `limitMs`. */
export function runToEnd(args: string[], env: Record<string, string>, limitMs = 15_000): Promise<Ended> {
  const started = performance.now();
  const child = spawn(process.execPath, binArgs(args), {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SEARCH_INDEX: 'off', REDIS_URL: '', DATABASE_READ_URL: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end('');
  const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    // 'close': after the output is read too (see cli.ts).
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/**
 * Ended on its own, quickly, with exit code 1 and exactly one line on stderr that gives nothing
 * away. `withinMs`: a failure that comes only once the embedded store is assembled (about 5 s on
 * two cores, twice that under the whole suite's load) is given more.
 */
export function expectOneLineExit1(ended: Ended, secret = SECRET, withinMs = 10_000): string {
  const said = `${ended.stdout}${ended.stderr}`;
  expect(ended.code, said).toBe(1);
  expect(ended.ms, said).toBeLessThan(withinMs);
  expect(ended.stdout, said).toBe('');
  expect(ended.stderr.endsWith('\n'), said).toBe(true);
  const lines = ended.stderr.trimEnd().split('\n');
  expect(lines, said).toHaveLength(1);
  expect(said).not.toContain(secret);
  expect(said).not.toContain('node_modules');
  expect(said).not.toMatch(/\bat \S+ \(|\bat (file:|node:|\/)/);
  return lines[0];
}

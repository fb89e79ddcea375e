import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// A setting that can never work ends any command at start with one line and exit code 1; a
// database that is not up yet is waited for by `serve` (test/outage.test.ts has its return). Every
// command runs as a real process, as an operator would start it.

const bin = fileURLToPath(new URL('../bin/creator-data.js', import.meta.url));
const SECRET = 's3cret';

interface Ended {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `creator-data …` with `env`, killed (and failing the test) if it has not ended within `limitMs`. */
function runToEnd(args: string[], env: Record<string, string>, limitMs = 15_000): Promise<Ended> {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, ...args], {
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
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** Ended on its own, quickly, with exit code 1 and exactly one line on stderr that gives nothing away. */
function expectOneLineExit1(ended: Ended, secret = SECRET): string {
  const said = `${ended.stdout}${ended.stderr}`;
  expect(ended.code, said).toBe(1);
  expect(ended.ms, said).toBeLessThan(10_000);
  expect(ended.stdout, said).toBe('');
  expect(ended.stderr.endsWith('\n'), said).toBe(true);
  const lines = ended.stderr.trimEnd().split('\n');
  expect(lines, said).toHaveLength(1);
  expect(said).not.toContain(secret);
  expect(said).not.toContain('node_modules');
  expect(said).not.toMatch(/\bat \S+ \(|\bat (file:|node:|\/)/);
  return lines[0];
}

describe('a setting that can never work', { timeout: 60_000 }, () => {
  it.each([
    ['a port out of range', `postgres://postgres:${SECRET}@127.0.0.1:99999/postgres`, /^creator-data: DATABASE_URL is not a valid URL/],
    ['an unclosed IPv6 host', `postgres://postgres:${SECRET}@[::1/postgres`, /^creator-data: DATABASE_URL is not a valid URL/],
    ['no scheme', `postgres:${SECRET}@127.0.0.1/postgres`, /^creator-data: DATABASE_URL must start with postgres:\/\//],
    ['a stray % in the password', `postgres://postgres:${SECRET}%zz@127.0.0.1/postgres`, /^creator-data: DATABASE_URL is not a valid URL: a % /],
    ['an unreadable root certificate', `postgres://postgres:${SECRET}@127.0.0.1/postgres?sslmode=verify-full&sslrootcert=/nonexistent/root.crt`, /^creator-data: DATABASE_URL: the sslrootcert file \/nonexistent\/root.crt cannot be read \(ENOENT\)$/],
  ])('DATABASE_URL with %s: one line, exit code 1, for serve and migrate', async (_what, url, said) => {
    for (const command of ['serve', 'migrate']) expect(expectOneLineExit1(await runToEnd([command], { DATABASE_URL: url }))).toMatch(said);
  });

  it('a malformed DATABASE_READ_URL or REDIS_URL, or a PORT that is not a number, likewise', async () => {
    const read = await runToEnd(['serve'], { DATABASE_URL: `postgres://postgres@127.0.0.1:1/postgres`, DATABASE_READ_URL: `postgres://postgres:${SECRET}@127.0.0.1:99999/x` });
    expect(expectOneLineExit1(read)).toMatch(/^creator-data: DATABASE_READ_URL is not a valid URL/);
    const redis = await runToEnd(['serve'], { DATA_DIR: 'memory://', REDIS_URL: `redis://:${SECRET}@127.0.0.1:99999` });
    expect(expectOneLineExit1(redis)).toMatch(/^creator-data: REDIS_URL is not a valid URL/);
    expect(expectOneLineExit1(await runToEnd(['serve'], { DATA_DIR: 'memory://', PORT: 'eighty' }))).toBe('creator-data: PORT must be a non-negative integer');
  });
});

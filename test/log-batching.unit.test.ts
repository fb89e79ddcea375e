import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The server's logger writes its lines to stderr in batches (src/observability/log.ts): a line a
// request, each in its own turn of the event loop, was a write a request. A child process runs the
// compiled logger as the server does, counting its writes to stderr, and the parent reads them.

const logModule = new URL('../dist/observability/log.js', import.meta.url).href;

/** Runs `body` (an ES module's statements; `log` is the server's logger, `writes()` its writes so far) and collects what it printed. */
function runLogging(body: string): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const script = `
    import fs from 'node:fs';
    const { createLogger } = await import(${JSON.stringify(logModule)});
    let count = 0;
    const write = fs.write;
    fs.write = function (fd, ...rest) { if (fd === 2) count++; return write.call(this, fd, ...rest); };
    const writes = () => count;
    const turn = () => new Promise((resolve) => setTimeout(resolve, 1));
    const log = createLogger();
    ${body}
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ stdout, stderr, code }));
  });
}

const lines = (stderr: string, message: string) => stderr.split('\n').filter((line) => line.includes(`"message":"${message}"`));

describe('the server log', () => {
  it('writes lines logged in separate turns of the event loop in a few batches, every line kept', async () => {
    const { stdout, stderr, code } = await runLogging(`
      for (let i = 0; i < 300; i++) { log.info('request', { i, route: 'search/twitter/user', status: 200 }); await turn(); }
      await new Promise((resolve) => setTimeout(resolve, 500));
      process.stdout.write(String(writes()));
    `);
    expect(code, stderr).toBe(0);
    const written = lines(stderr, 'request');
    expect(written.map((line) => JSON.parse(line).i)).toEqual([...Array(300).keys()]);
    // 300 turns of at least a millisecond each: a few 100 ms batches, not a write a line.
    expect(Number(stdout)).toBeGreaterThan(0);
    expect(Number(stdout)).toBeLessThanOrEqual(30);
  });

  it('writes a lone line within a fraction of a second, a warning at once, and what waits at exit before the process ends', async () => {
    const { stdout, stderr, code } = await runLogging(`
      log.info('alone');
      const atFirst = writes();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const afterAWhile = writes();
      log.info('before the warning');
      log.warn('at once');
      const afterTheWarning = writes();
      await new Promise((resolve) => setTimeout(resolve, 200));
      for (let i = 0; i < 5; i++) log.info('last words', { i });
      process.stdout.write(JSON.stringify([atFirst, afterAWhile, afterTheWarning]));
      process.exit(0);
    `);
    expect(code, stderr).toBe(0);
    // Batched at first, written by the timer, then a warning writes itself and the line before it.
    expect(JSON.parse(stdout)).toEqual([0, 1, 2]);
    for (const message of ['alone', 'before the warning', 'at once']) expect(lines(stderr, message), message).toHaveLength(1);
    expect(lines(stderr, 'last words').map((line) => JSON.parse(line).i)).toEqual([0, 1, 2, 3, 4]);
  });
});

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandUsage } from '../src/cli/usage.js';
import { runCli } from './support/cli.js';
import { binArgs } from './support/bin.js';

// Help, version and arguments, as an operator types them: each answered before anything is
// opened. The store is an embedded folder that must never be created (a command that ran would
// create it), and nothing listens on the database URL's port.
const untouched = join(tmpdir(), `cds-args-never-${process.pid}-${Date.now()}`);
const env = { DATA_DIR: untouched, DATABASE_URL: '', PORT: '0', HOST: '127.0.0.1' };
const cli = (...args: string[]) => runCli(args, env);
/** Runs independent commands side by side (none opens anything), in the order given back. */
const clis = (argsList: string[][]) => Promise.all(argsList.map((args) => cli(...args)));
const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Stderr is one line that names `what`, the exit code 2, and nothing was opened. */
function expectRefused(result: Awaited<ReturnType<typeof cli>>, what: string, args: string[]) {
  const said = `${args.join(' ')}: ${result.stdout}${result.stderr}`;
  expect(result.code, said).toBe(2);
  expect(result.stdout, said).toBe('');
  expect(result.stderr.trimEnd().split('\n'), said).toHaveLength(1);
  expect(result.stderr, said).toContain(what);
  expect(result.stderr, said).not.toMatch(/\n\s+at /);
  expect(existsSync(untouched), said).toBe(false);
}

describe('creator-data help and version', { timeout: 60_000 }, () => {
  it('--help, -h and help print every command on stdout and exit 0', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^usage: creator-data <command>/);
      for (const usages of Object.values(commandUsage)) for (const { line } of usages) expect(result.stdout).toContain(`creator-data ${line}`);
    }
  });

  it('<command> --help and -h print that command\'s usage, exit 0, and run nothing', async () => {
    const asked = (Object.keys(commandUsage) as (keyof typeof commandUsage)[]).flatMap((command) => ['--help', '-h'].map((flag) => [command, flag] as const));
    const answers = await clis(asked.map(([command, flag]) => [command, flag]));
    for (const [i, [command, flag]] of asked.entries()) {
      const result = answers[i];
      const said = `${command} ${flag}: ${result.stdout}${result.stderr}`;
      expect(result.code, said).toBe(0);
      expect(result.stderr, said).toBe('');
      expect(result.stdout, said).toMatch(/^usage: creator-data /);
      for (const { line } of commandUsage[command]) expect(result.stdout, said).toContain(`creator-data ${line}`);
      expect(existsSync(untouched), said).toBe(false);
    }
    // With other arguments around it, and `help <command>`.
    for (const args of [['start', '--port', '9', '--help'], ['import', 'creators', 'x.ndjson', '-h'], ['help', 'import']]) {
      const result = await cli(...args);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout).toContain(`creator-data ${commandUsage[args[0] === 'help' ? 'import' : (args[0] as 'start')][0].line}`);
    }
    expect(existsSync(untouched)).toBe(false);
  });

  it('keys <sub> --help prints that subcommand\'s line only', async () => {
    for (const { sub, line } of commandUsage.keys) {
      const result = await cli('keys', sub, '--help');
      expect(result.code, sub).toBe(0);
      expect(result.stdout.startsWith(`usage: creator-data ${line}`), result.stdout).toBe(true);
      expect(result.stdout.trimEnd().split('\n')).toHaveLength(1);
    }
    const all = await cli('keys', '--help');
    expect(all.stdout.trimEnd().split('\n')).toHaveLength(commandUsage.keys.length);
  });

  it('--version prints the package version', async () => {
    const result = await cli('--version');
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('no command prints the usage on stderr with exit code 2; an unknown one is one line naming it', async () => {
    const none = await cli();
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^usage: creator-data <command>/);
    expectRefused(await cli('nope'), '"nope"', ['nope']);
    expectRefused(await cli('help', 'nope'), '"nope"', ['help', 'nope']);
  });
});

describe('creator-data arguments', { timeout: 60_000 }, () => {
  it('a command that takes no arguments refuses a flag or a word, naming it', async () => {
    const cases = [
      [['schema', '--bogus'], '--bogus'],
      [['openapi', '--json'], '--json'],
      [['migrate', 'extra', '--foo'], '--foo'],
      [['migrate', 'extra'], '"extra"'],
      [['start', '--port', '9'], '--port'],
      [['serve', 'now'], '"now"'],
      [['schema', '-x'], '-x'],
    ] as [string[], string][];
    const results = await clis(cases.map(([args]) => args));
    cases.forEach(([args, named], i) => expectRefused(results[i], named, args));
  });

  it('a count flag that is not a whole number is refused naming the flag; a repeated flag too', async () => {
    const cases = [
      [['keys', 'create', '--quota', '-5'], '--quota must be a whole number'],
      [['keys', 'create', '--quota=-5'], '--quota must be a whole number'],
      [['keys', 'create', '--rate', '-1'], '--rate must be a whole number'],
      [['keys', 'create', '--plan', 'pro', '--plan', 'trial'], '--plan given more than once'],
      [['keys', 'create', '--json', '--json'], '--json given more than once'],
      [['usage', '--account', 'a', '--account', 'b'], '--account given more than once'],
      [['keys', 'create', '--plan', '--json'], '--plan needs a value'],
      [['keys', 'create', '--plan'], '--plan needs a value'],
      [['keys', 'create', '--json=yes'], '--json takes no value'],
      [['keys', 'create', '--quota', '99999999999999999999'], '--quota must be a whole number'],
      [['seed', '--creators', '5', '--creators', '6'], '--creators given more than once'],
      [['seed', '--creators', 'x'], '--creators must be a whole number, 0 or more (got "x")'],
      [['seed', '--videos', '1.5', '--channels', '2'], '--videos must be a whole number, 0 or more (got "1.5")'],
      [['seed', '--live', '1e3'], '--live must be a whole number, 0 or more (got "1e3")'],
      [['seed', '--creators', '-3'], '--creators must be a whole number, 0 or more (got "-3")'],
      [['import', 'creators', 'a.ndjson', 'b.ndjson'], '"b.ndjson"'],
      [['import', 'people', 'a.ndjson'], '"people"'],
    ] as [string[], string][];
    const results = await clis(cases.map(([args]) => args));
    cases.forEach(([args, named], i) => {
      expectRefused(results[i], named, args);
      expect(results[i].stderr).not.toContain('ambiguous');
    });
  });
});

describe('creator-data output into a closed pipe', { timeout: 60_000 }, () => {
  /** `creator-data …` whose stdout's reader has gone before it writes (`creator-data openapi | head -0`). */
  function closedReader(args: string[]): Promise<{ code: number | null; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, binArgs(args), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stderr }));
    });
  }

  it('ends quietly with exit code 141, as a Unix tool killed by SIGPIPE', async () => {
    for (const args of [['openapi'], ['schema'], ['--help'], ['keys', '--help']]) {
      expect(await closedReader(args), args.join(' ')).toEqual({ code: 141, stderr: '' });
    }
  });
});

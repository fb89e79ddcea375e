import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, type Config, loadConfig } from '../config.js';
import { commandHelp, isCommand, topHelp, usageLine, type CommandName } from './usage.js';

// `creator-data <command>`: every command honours the variables of docs/contract/decisions.md §7.
// Usage texts: usage.ts.

export async function main(argv: string[]): Promise<number> {
  watchOutputs();
  const code = await answer(argv);
  return code === 0 && stdoutClosed ? STDOUT_CLOSED : code;
}

async function answer(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const answered = helpOrVersion(command, rest);
  if (answered !== null) return answered;
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    // A setting that can never work: waiting or running again would not help.
    if (!(error instanceof ConfigError)) throw error;
    return said(error.message, 1);
  }
  return run(command as CommandName, rest, config);
}

/**
 * `--version`, `--help`, `-h`, `help [COMMAND]`, `<command> --help`, a missing or unknown command:
 * answered before the configuration is read or anything is opened. Null for a command to run.
 */
function helpOrVersion(command: string | undefined, rest: string[]): number | null {
  if (command === undefined) {
    process.stderr.write(topHelp());
    return 2;
  }
  if (command === '--version') {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(`${version}\n`);
    return 0;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    const [topic, sub] = rest;
    if (topic === undefined || topic === '--help' || topic === '-h') process.stdout.write(topHelp());
    else if (isCommand(topic)) process.stdout.write(commandHelp(topic, sub));
    else return unknownCommand(topic);
    return 0;
  }
  if (!isCommand(command)) return unknownCommand(command);
  if (asksForHelp(rest)) {
    process.stdout.write(commandHelp(command, command === 'keys' ? rest[0] : undefined));
    return 0;
  }
  return null;
}

function unknownCommand(command: string): number {
  return said(`unknown command ${JSON.stringify(command)} (creator-data --help lists them)`, 2);
}

/** A command's end in one line on stderr, and its exit code. */
function said(message: string, code: number): number {
  process.stderr.write(`creator-data: ${message}\n`);
  return code;
}

/** `--help` or `-h` among the arguments, before a `--` (after which everything is an operand). */
function asksForHelp(args: string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/** Exit code once stdout's reader has gone (`creator-data openapi | head -1`): 128 + SIGPIPE, as `cat` or `seq` end. */
const STDOUT_CLOSED = 141;
let stdoutClosed = false;
let watching = false;

/**
 * A reader that closed the pipe early ends the output quietly: EPIPE on stdout stops the writing
 * (later writes are dropped) and the exit code becomes 141, the code of a Unix tool killed by
 * SIGPIPE, so `set -o pipefail` scripts see what they see from any other tool, and a key printed
 * into a closed pipe (shown once, lost) does not pass for printed. EPIPE on stderr is ignored:
 * there is nowhere left to say anything, and the command (an import) goes on.
 */
function watchOutputs(): void {
  if (watching) return;
  watching = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    stdoutClosed = true;
    // The pipe may close after main() returned (the bin set its code): the code is set here too.
    if (!process.exitCode) process.exitCode = STDOUT_CLOSED;
  });
  process.stderr.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

/** A command that takes no arguments: any is refused, not ignored. */
function noArguments(command: CommandName, args: string[]): void {
  const { positionals } = flags(args, {}, usageLine(command));
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])} (usage: ${usageLine(command)})`);
}

async function run(command: CommandName, rest: string[], config: Config): Promise<number> {
  try {
    switch (command) {
      case 'start':
      case 'serve': {
        noArguments(command, rest);
        const { serve } = await import('./serve.js');
        return await serve(config, { seedDemo: command === 'start' });
      }
      case 'migrate': {
        noArguments(command, rest);
        const { withStore } = await import('./store.js');
        return await withStore(config, async (_store, applied) => {
          process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
          return 0;
        });
      }
      case 'schema': {
        noArguments(command, rest);
        const { printSchemaSDL } = await import('../schema/index.js');
        process.stdout.write(printSchemaSDL());
        return 0;
      }
      case 'openapi': {
        noArguments(command, rest);
        const { openApiJson } = await import('../rest/openapi.js');
        process.stdout.write(openApiJson());
        return 0;
      }
      case 'seed': {
        const { seedCommand } = await import('./seed-command.js');
        return await seedCommand(config, rest);
      }
      case 'import': {
        const { importCommand } = await import('./import-command.js');
        return await importCommand(config, rest);
      }
      case 'collect': {
        const { collectCommand } = await import('./collect.js');
        return await collectCommand(config, rest);
      }
      case 'simulate': {
        const { simulateCommand } = await import('./simulate.js');
        return await simulateCommand(rest);
      }
      case 'keys':
      case 'usage': {
        const { keysCommand } = await import('./keys.js');
        return await keysCommand(config, command, rest);
      }
      case 'help':
        // Answered by helpOrVersion.
        return 0;
    }
  } catch (error) {
    // Loaded only now: `--help` and usage errors must not load the store's drivers.
    const { StoreLockedError } = await import('../store/connect.js');
    if (error instanceof StoreLockedError || error instanceof UsageError) return said(error.message, 2);
    // A setting found unusable only when used (a DATA_DIR or REFUND_JOURNAL_DIR that cannot be created).
    if (error instanceof ConfigError) return said(error.message, 1);
    const refusedPort = portRefusal(error, config, command === 'serve' || command === 'start');
    if (refusedPort) return said(refusedPort, 1);
    // The database's URL names a database, role, password, host or TLS setting it refuses: no
    // wait or rerun helps. Said before "unavailable", which also covers a host that does not resolve.
    const { asDatabaseConfigError, DatabaseConfigError, isDatabaseUnavailable } = await import('../store/errors.js');
    const misconfigured = asDatabaseConfigError(error, config.databaseUrl);
    if (misconfigured instanceof DatabaseConfigError) return said(misconfigured.message, 1);
    // Not a bug to show a stack for: the server is down or restarted under the command.
    if (isDatabaseUnavailable(error)) {
      const reason = error instanceof Error ? error.message || String((error as NodeJS.ErrnoException).code) : String(error);
      // An import is upserts by key: its rows written before the cut are written again the same way.
      const rerun = command === 'import' ? '; running the import again is safe (it upserts)' : '';
      return said(`the database is unavailable (${reason})${rerun}`, 1);
    }
    throw error;
  }
}

export class UsageError extends Error {}

/**
 * A count flag's text as a number: digits only (no sign, point or exponent) and exactly
 * representable, else a usage error naming the flag and what it got.
 */
export function wholeNumber(flag: string, text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined;
  const number = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(number)) throw new UsageError(`${flag} must be ${what} (got ${JSON.stringify(text)})`);
  return number;
}

const PORT_REFUSALS: Record<string, string> = {
  EADDRINUSE: 'another process listens there',
  EACCES: 'not permitted (a port below 1024 needs privileges)',
  EADDRNOTAVAIL: 'no such address on this machine',
};

/** Why the port (PORT, HOST, METRICS_PORT, METRICS_HOST) could not be opened, or null for any other error. */
function portRefusal(error: unknown, config: Config, serving: boolean): string | null {
  const { syscall, code, address, port, hostname } = (error ?? {}) as NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string };
  // A HOST or METRICS_HOST that does not resolve; only the server listens (another command's is the database's name).
  if (serving && syscall === 'getaddrinfo' && hostname !== undefined) {
    if (hostname === config.host) return `cannot listen on ${hostname}:${config.port}: ${(error as Error).message} (HOST)`;
    if (hostname === config.metricsHost && config.metricsPort !== undefined) return `cannot listen on ${hostname}:${config.metricsPort}: ${(error as Error).message} (METRICS_HOST)`;
  }
  const reason = syscall === 'listen' && code !== undefined ? PORT_REFUSALS[code] : undefined;
  return reason ? `cannot listen on ${address}:${port}: ${reason} (PORT, HOST, METRICS_PORT, METRICS_HOST)` : null;
}

type Options = Record<string, { type: 'string' | 'boolean' }>;
type Flags<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;

/**
 * The command's flags and operands. Refused with a UsageError naming the flag and quoting `usage`:
 * an unknown flag, a flag given twice, a string flag without a value (`--plan --json` is not the
 * plan "--json"), a boolean flag given one (`--json=yes`). A value that is a negative number is a
 * value (`--quota -5`), for the command's own check to name. After `--` everything is an operand.
 */
export function flags<const O extends Options>(args: string[], options: O, usage: string): Flags<O> {
  const refuse = (problem: string) => new UsageError(`${problem} (usage: ${usage})`);
  const { tokens } = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (!option) throw refuse(`unknown option ${token.rawName}`);
    if (Object.hasOwn(values, token.name)) throw refuse(`${token.rawName} given more than once`);
    if (option.type === 'boolean') {
      if (token.value !== undefined) throw refuse(`${token.rawName} takes no value`);
      values[token.name] = true;
      continue;
    }
    const taken = token.inlineValue === false && token.value !== undefined && token.value.startsWith('-') && !/^-\d/.test(token.value);
    if (token.value === undefined || taken) throw refuse(`${token.rawName} needs a value`);
    values[token.name] = token.value;
  }
  return { values, positionals } as unknown as Flags<O>;
}

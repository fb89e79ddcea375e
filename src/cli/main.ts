import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, type Config, loadConfig } from '../config.js';

// `creator-data <command>`: every command honours the variables of docs/contract/decisions.md §7.
const usage = `usage: creator-data <command>
  start                      migrate, load the demo set into an empty store, print a demo key, serve
  serve                      serve without seeding
  migrate                    run the migrations
  schema                     print the GraphQL schema (SDL)
  openapi                    print the OpenAPI 3.1 document of the REST routes
  seed --demo | seed --creators N --videos N --channels N --live N
  import <categories|creators|channels|videos|live-streams> <file.ndjson|->
  keys create [--plan NAME] [--quota UNITS] [--rate RPS] [--expires ISO] [--account ID] [--json]
  keys list [--account ID] | keys disable ID | keys enable ID | keys rotate ID [--json] | keys delete ID
  usage [--account ID]
  collect twitch [--once]    refresh the live-stream snapshot from TWITCH_API_URL
  simulate <twitch|instagram> --port N   run an upstream simulator`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    // A setting that can never work: waiting or running again would not help.
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`creator-data: ${error.message}\n`);
    return 1;
  }
  try {
    switch (command) {
      case 'start':
      case 'serve': {
        const { serve } = await import('./serve.js');
        return await serve(config, { seedDemo: command === 'start' });
      }
      case 'migrate': {
        const { withStore } = await import('./store.js');
        return await withStore(config, async (_store, applied) => {
          process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
          return 0;
        });
      }
      case 'schema': {
        const { printSchemaSDL } = await import('../schema/index.js');
        process.stdout.write(printSchemaSDL());
        return 0;
      }
      case 'openapi': {
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
      case undefined:
      case 'help':
      case '--help':
        process.stdout.write(`${usage}\n`);
        return command === undefined ? 2 : 0;
      default:
        process.stderr.write(`unknown command: ${command}\n${usage}\n`);
        return 2;
    }
  } catch (error) {
    // Loaded only now: `--help` and usage errors must not load the store's drivers.
    const { StoreLockedError } = await import('../store/connect.js');
    if (error instanceof StoreLockedError || error instanceof UsageError) {
      process.stderr.write(`creator-data: ${error.message}\n`);
      return 2;
    }
    const refusedPort = portRefusal(error);
    if (refusedPort) {
      process.stderr.write(`creator-data: ${refusedPort}\n`);
      return 1;
    }
    // The database's URL names a database, role, password, host or TLS setting it refuses: no
    // wait or rerun helps. Said before "unavailable", which also covers a host that does not resolve.
    const { asDatabaseConfigError, DatabaseConfigError, isDatabaseUnavailable } = await import('../store/errors.js');
    const misconfigured = asDatabaseConfigError(error, config.databaseUrl);
    if (misconfigured instanceof DatabaseConfigError) {
      process.stderr.write(`creator-data: ${misconfigured.message}\n`);
      return 1;
    }
    // Not a bug to show a stack for: the server is down or restarted under the command.
    if (isDatabaseUnavailable(error)) {
      const reason = error instanceof Error ? error.message || String((error as NodeJS.ErrnoException).code) : String(error);
      // An import is upserts by key: its rows written before the cut are written again the same way.
      const rerun = command === 'import' ? '; running the import again is safe (it upserts)' : '';
      process.stderr.write(`creator-data: the database is unavailable (${reason})${rerun}\n`);
      return 1;
    }
    throw error;
  }
}

export class UsageError extends Error {}

const PORT_REFUSALS: Record<string, string> = {
  EADDRINUSE: 'another process listens there',
  EACCES: 'not permitted (a port below 1024 needs privileges)',
  EADDRNOTAVAIL: 'no such address on this machine',
};

/** Why the port (PORT, HOST, METRICS_PORT) could not be opened, or null for any other error. */
function portRefusal(error: unknown): string | null {
  const { syscall, code, address, port } = (error ?? {}) as NodeJS.ErrnoException & { address?: string; port?: number };
  const reason = syscall === 'listen' && code !== undefined ? PORT_REFUSALS[code] : undefined;
  return reason ? `cannot listen on ${address}:${port}: ${reason} (PORT, HOST, METRICS_PORT)` : null;
}

type Flags<O extends NonNullable<ParseArgsConfig['options']>> = ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;

export function flags<const O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O): Flags<O> {
  try {
    return parseArgs({ args, options, allowPositionals: true as const, strict: true as const });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig } from '../config.js';
import { StoreLockedError } from '../store/connect.js';

// `creator-data <command>`: every command honours the variables of decisions.md §7.
const usage = `usage: creator-data <command>
  start                      migrate, load the demo set into an empty store, print a demo key, serve
  serve                      serve without seeding
  migrate                    run the migrations
  schema                     print the GraphQL schema (SDL)
  seed --demo | seed --creators N --videos N --channels N --live N
  import <categories|creators|channels|videos|live-streams> <file.ndjson|->
  keys create [--plan NAME] [--quota UNITS] [--rate RPS] [--expires ISO] [--account ID] [--json]
  keys list [--account ID] | keys disable ID | keys enable ID | keys rotate ID [--json] | keys delete ID
  usage [--account ID]
  collect twitch [--once]    refresh the live-stream snapshot from TWITCH_API_URL
  simulate <twitch|instagram> --port N   run an upstream simulator`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const config = loadConfig();
  try {
    switch (command) {
      case 'start':
      case 'serve': {
        const { serve } = await import('./serve.js');
        return await serve(config, { seedDemo: command === 'start' });
      }
      case 'migrate': {
        const { withStore } = await import('./store.js');
        const { migrateToLatest } = await import('../store/migrate.js');
        return await withStore(config, async (store) => {
          const applied = await migrateToLatest(store.db);
          process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'already up to date\n');
          return 0;
        });
      }
      case 'schema': {
        const { printSchemaSDL } = await import('../schema/index.js');
        process.stdout.write(printSchemaSDL());
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
    if (error instanceof StoreLockedError || error instanceof UsageError) {
      process.stderr.write(`creator-data: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

export class UsageError extends Error {}

export function flags<const O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true as const, strict: true as const });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

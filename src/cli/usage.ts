import { importKinds } from './import-kinds.js';

// The one definition of each command's usage: `creator-data --help` is built from these lines,
// `<command> --help` prints its own, and the commands' usage errors quote them. Loaded before
// anything else (a --help must not load the store's drivers): strings only.

interface UsageLine {
  /** What follows `creator-data`. */
  line: string;
  about?: string;
  /** The subcommand it belongs to (`keys create`). */
  sub?: string;
}

export const commandUsage = {
  start: [{ line: 'start', about: 'migrate, load the demo set into an empty store, print a demo key, serve' }],
  serve: [{ line: 'serve', about: 'migrate and serve, never seeding' }],
  migrate: [{ line: 'migrate', about: 'run the migrations' }],
  schema: [{ line: 'schema', about: 'print the GraphQL schema (SDL)' }],
  openapi: [{ line: 'openapi', about: 'print the OpenAPI 3.1 document of the REST routes' }],
  seed: [
    { line: 'seed --demo', about: 'load the demo set, over any row with the same id' },
    { line: 'seed --creators N --videos N --channels N --live N', about: 'benchmark-scale data' },
  ],
  import: [{ line: `import <${importKinds.join('|')}> <file.ndjson|->`, about: 'upsert NDJSON records (- reads stdin)' }],
  keys: [
    { sub: 'create', line: 'keys create [--plan NAME] [--quota UNITS] [--rate RPS] [--expires ISO] [--account ID] [--json]', about: 'print a new key' },
    { sub: 'list', line: 'keys list [--account ID]' },
    { sub: 'disable', line: 'keys disable ID' },
    { sub: 'enable', line: 'keys enable ID' },
    { sub: 'rotate', line: 'keys rotate ID [--json]', about: 'print the new key; the old one stops working' },
    { sub: 'delete', line: 'keys delete ID' },
  ],
  usage: [{ line: 'usage [--account ID]', about: "print accounts' quota use" }],
  collect: [{ line: 'collect twitch [--once]', about: 'refresh the live-stream snapshot from TWITCH_API_URL' }],
  simulate: [{ line: 'simulate <twitch|instagram> [--port N]', about: 'run an upstream simulator' }],
  help: [{ line: 'help [COMMAND]', about: 'this text, or one command\'s (also --help, -h; <command> --help)' }],
} satisfies Record<string, UsageLine[]>;

export type CommandName = keyof typeof commandUsage;

export const isCommand = (name: string | undefined): name is CommandName => name !== undefined && Object.hasOwn(commandUsage, name);

export const keysSubcommands = commandUsage.keys.map((usage) => usage.sub);

const PREFIX = 'creator-data ';
const ABOUT_COLUMN = 40;

function format(lines: readonly UsageLine[], indent: string): string[] {
  return lines.map(({ line, about }) => {
    const text = `${indent}${PREFIX}${line}`;
    if (!about) return text;
    return text.length < ABOUT_COLUMN ? `${text.padEnd(ABOUT_COLUMN)}${about}` : `${text}  ${about}`;
  });
}

/** Usage of one command (of one `keys` subcommand when `sub` names one), as printed by `--help`. */
export function commandHelp(command: CommandName, sub?: string): string {
  const all: readonly UsageLine[] = commandUsage[command];
  const own = all.filter((usage) => usage.sub === sub);
  // `usage: ` on the first line, as wide an indent on the others.
  const lines = format(own.length > 0 ? own : all, '').map((line, index) => `${index === 0 ? 'usage: ' : '       '}${line}`);
  return `${lines.join('\n')}\n`;
}

/** One usage line, for an error message: `creator-data keys list [--account ID]`. */
export function usageLine(command: CommandName, sub?: string): string {
  const all: readonly UsageLine[] = commandUsage[command];
  return all
    .filter((usage) => sub === undefined || usage.sub === sub)
    .map((usage) => `${PREFIX}${usage.line}`)
    .join(' | ');
}

/** `creator-data --help`: every command's lines. */
export function topHelp(): string {
  const lines = Object.values(commandUsage).flatMap((usages) => format(usages, '  '));
  return `usage: creator-data <command> [--help]   (creator-data --version prints the version)\n${lines.join('\n')}\n`;
}

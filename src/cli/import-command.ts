import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Config } from '../config.js';
import { importKinds, runImport, type ImportKind } from './import.js';
import { flags, UsageError } from './main.js';
import { withStore } from './store.js';
import { usageLine } from './usage.js';

/** `import <kind> <file.ndjson|->`: exits 1 when any line was rejected (the rest is loaded). */
export async function importCommand(config: Config, args: string[]): Promise<number> {
  const { positionals } = flags(args, {}, usageLine('import'));
  const [kind, file] = positionals;
  const problem =
    kind === undefined || file === undefined
      ? 'name a kind and a file'
      : !importKinds.includes(kind as ImportKind)
        ? `unknown kind ${JSON.stringify(kind)}`
        : positionals.length > 2
          ? `unexpected argument ${JSON.stringify(positionals[2])}`
          : null;
  if (problem) throw new UsageError(`${problem} (usage: ${usageLine('import')})`);
  // A directory opens like a file and fails at the first read, deep in the import: refused here.
  if (file !== '-' && (await stat(file).catch(() => null))?.isDirectory()) throw new UsageError(`cannot read ${file}: EISDIR (a directory)`);
  const input = file === '-' ? process.stdin : createReadStream(file);
  const opened = new Promise<void>((resolve, reject) => {
    if (file === '-') return resolve();
    input.once('open', () => resolve());
    input.once('error', (error: NodeJS.ErrnoException) => reject(new UsageError(`cannot read ${file}: ${error.code ?? 'error'}`)));
  });
  await opened;
  return withStore(config, async (store) => {
    const result = await runImport(store, kind as ImportKind, input, process.stderr);
    return result.rejected > 0 ? 1 : 0;
  });
}

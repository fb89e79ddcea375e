import { createReadStream, fstatSync, readFileSync, statSync } from 'node:fs';
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
  const name = file === '-' ? 'stdin' : file;
  if (file === '-' && stdinWasClosed()) {
    process.stderr.write('creator-data: cannot read stdin: it is closed (give the file, or redirect it with <)\n');
    return 1;
  }
  // A directory opens like a file and fails at the first read, deep in the import: refused here.
  if (file !== '-' && (await stat(file).catch(() => null))?.isDirectory()) throw new UsageError(`cannot read ${file}: EISDIR (a directory)`);
  const input = file === '-' ? process.stdin : createReadStream(file);
  const opened = new Promise<void>((resolve, reject) => {
    if (file === '-') return resolve();
    input.once('open', () => resolve());
    input.once('error', (error: NodeJS.ErrnoException) => reject(new UsageError(`cannot read ${file}: ${error.code ?? 'error'}`)));
  });
  await opened;
  // A read that fails midway (stdin opened write-only: EBADF; a disk's EIO) ends the import with
  // one line naming the input, not a stack. Batches loaded before it stay loaded.
  let readError: NodeJS.ErrnoException | undefined;
  input.on('error', (error: NodeJS.ErrnoException) => (readError ??= error));
  // SIGINT or SIGTERM: the import stops reading, commits the batch being written, says how many
  // lines it loaded and exits 130 or 143 (128 + the signal's number). A second one ends the process
  // at once (node's default once the handler is gone), rolling back what is not committed.
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(signal);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await withStore(config, async (store) => {
      try {
        const result = await runImport(store, kind as ImportKind, input, process.stderr, { signal: stop.signal });
        if (result.stopped) return stop.signal.reason === 'SIGTERM' ? 143 : 130;
        return result.rejected > 0 ? 1 : 0;
      } catch (error) {
        if (!readError || error !== readError) throw error;
        process.stderr.write(`creator-data: cannot read ${name}: ${readError.code ?? readError.message}; running the import again is safe (it upserts)\n`);
        return 1;
      }
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * Whether the command was started with stdin closed (`import creators - <&-`). Node opens
 * /dev/null in place of a closed standard descriptor before any script runs, so the import would
 * read an empty file and report success. The one trace left is how it opened it: read-write, where
 * a redirection (`< /dev/null`, a valid empty import) or a spawn's ignored stdin opens it read-only.
 * Linux only (/proc/self/fdinfo); elsewhere a closed stdin still reads as empty.
 */
function stdinWasClosed(): boolean {
  try {
    const stdin = fstatSync(0);
    if (!stdin.isCharacterDevice() || stdin.rdev !== statSync('/dev/null').rdev) return false;
    const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync('/proc/self/fdinfo/0', 'utf8'));
    const O_ACCMODE = 0o3;
    const O_RDWR = 0o2;
    return flags !== null && (parseInt(flags[1], 8) & O_ACCMODE) === O_RDWR;
  } catch {
    return false;
  }
}

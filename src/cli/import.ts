import { performance } from 'node:perf_hooks';
import type { Row } from '../store/bulk-tables.js';
import { statementTransport, type WriteRows } from '../store/bulk.js';
import type { EncodedRows } from '../store/copy-text.js';
import type { Store } from '../store/connect.js';
import { refusedReferences, resolveRows, type Rejection } from '../store/imports.js';
import { importers, importKinds, type ImportKind, type LineMessage, type ProcessedBatch } from './import-batch.js';
import { inThreadValidator, workerValidator, type Validator } from './import-validators.js';

export { importKinds, type ImportKind };

export interface ImportResult {
  loaded: number;
  rejected: number;
}

/** Lines per batch: validated together, checked against the database together, written by one COPY or a few statements. */
const BATCH_LINES = 5_000;
const PROGRESS_EVERY_LINES = 10_000;
const formatCount = (value: number) => value.toLocaleString('en-US');

/**
 * Loads an NDJSON stream of one kind (docs/contract/decisions.md §7), streaming: memory holds a few batches of
 * lines, those being validated and the one being loaded. Every rejected line is reported on
 * `stderr` as `line N: <field>: <reason>` (a line that is not JSON: `line N: not valid JSON (…)`),
 * the valid ones are upserted by id through the store's bulk transport. Blank lines are skipped;
 * line numbers count them. The table is vacuumed and analysed afterwards.
 *
 * With a transport that takes COPY text (PostgreSQL), input longer than one batch is validated
 * and encoded in worker threads; batches still load one at a time and in line order.
 */
export async function runImport(
  store: Pick<Store, 'db' | 'bulk'>,
  kind: ImportKind,
  input: NodeJS.ReadableStream,
  stderr: NodeJS.WritableStream,
): Promise<ImportResult> {
  const { kind: recordKind } = importers[kind];
  // Categories resolve levels against the categories committed before each batch: statements, a
  // transaction per batch, never a load held open in one transaction.
  const bulk = recordKind.resolveBatch ? statementTransport(store.db) : store.bulk;
  const encoding = bulk.takesEncodedRows ? 'copy' : 'objects';
  const started = performance.now();
  let lineNumber = 0;
  let loaded = 0;
  let rejected = 0;
  let reportedProgress = 0;

  /** Checks a validated batch against the database, writes what loads, reports its rejected lines. */
  const load = async (write: WriteRows, batch: ProcessedBatch, lastLine: number, dropped: LineMessage[]) => {
    const { rows, rejections } = await loadable(store, batch);
    if (Array.isArray(rows) ? rows.length > 0 : rows.copyText !== '') await write(rows);
    const messages: LineMessage[] = [
      ...dropped,
      ...batch.messages,
      ...rejections.map((rejection) => ({ line: batch.lines[rejection.index], text: `${rejection.field}: ${rejection.reason}` })),
    ];
    loaded += batch.lines.length - rejections.length;
    rejected += messages.length;
    messages.sort((a, b) => a.line - b.line);
    for (const message of messages) stderr.write(`line ${message.line}: ${message.text}\n`);
    if (lastLine - reportedProgress >= PROGRESS_EVERY_LINES) {
      reportedProgress = lastLine - (lastLine % PROGRESS_EVERY_LINES);
      stderr.write(`import ${kind}: ${formatCount(lastLine)} lines, ${formatCount(loaded)} loaded, ${formatCount(rejected)} rejected\n`);
    }
  };

  const note = (text: string) => stderr.write(`import ${kind}: ${text}\n`);
  await bulk.load(
    recordKind.table,
    'update-changed',
    async (write) => {
      // A short input never starts the worker threads.
      let validator: Validator = inThreadValidator(kind, encoding);
      let batches = 0;
      // Loads chain in line order; reading runs ahead by at most one batch per validation thread.
      let loading: Promise<void> = Promise.resolve();
      const ahead: Promise<void>[] = [];
      try {
        for await (const { text, firstLine, lines, tooLong } of readBatches(input, BATCH_LINES)) {
          if (batches++ === 1 && bulk.takesEncodedRows) validator = workerValidator(kind, encoding);
          lineNumber = firstLine + lines - 1;
          const lastLine = lineNumber;
          const validated = validator.validate(text, firstLine);
          const dropped = tooLong.map((line) => ({ line, text: `longer than ${MAX_LINE_CHARS} characters: not read` }));
          loading = loading.then(async () => load(write, await validated, lastLine, dropped));
          // A failure is thrown where the chain is awaited; until then it must not count as unhandled.
          validated.catch(() => {});
          loading.catch(() => {});
          ahead.push(loading);
          if (ahead.length > validator.threads + 1) await ahead.shift();
        }
        await loading;
      } finally {
        await validator.close();
      }
    },
    note,
  );
  await bulk.vacuumAnalyze(recordKind.table, note);

  const seconds = (performance.now() - started) / 1000;
  stderr.write(
    `import ${kind}: done, ${formatCount(lineNumber)} lines, ${formatCount(loaded)} loaded, ${formatCount(rejected)} rejected` +
      ` in ${seconds.toFixed(1)} s (${formatCount(Math.round(lineNumber / Math.max(seconds, 0.001)))} lines/s)\n`,
  );
  return { loaded, rejected };
}

/**
 * The rows of a validated batch that load, and the rejections of the database's checks (by index
 * into the batch's accepted records). COPY text is cut here to one row per key, the last one; rows
 * as objects go through the same checks in imports.ts and the transport keeps the last per key.
 */
async function loadable({ db }: Pick<Store, 'db'>, batch: ProcessedBatch): Promise<{ rows: Row[] | EncodedRows; rejections: Rejection[] }> {
  const kind = importers[batch.kind].kind;
  if (Array.isArray(batch.rows)) return resolveRows(db, kind as never, batch.rows, batch.references);
  const rejections = kind.reference ? await refusedReferences(db, kind.reference, batch.references) : [];
  const refused = new Set(rejections.map((rejection) => rejection.index));
  const lastOfKey = new Map<string, number>();
  batch.keys.forEach((key, index) => {
    if (!refused.has(index)) lastOfKey.set(key, index);
  });
  const { copyText, ends, everyRowStamped } = batch.rows;
  if (lastOfKey.size === ends.length) return { rows: { copyText, everyRowStamped }, rejections };
  const kept = [...lastOfKey.values()].map((index) => copyText.slice(index === 0 ? 0 : ends[index - 1], ends[index]));
  return { rows: { copyText: kept.join(''), everyRowStamped }, rejections };
}

/** A line longer than this is not read: no record comes near it, and a string has a size limit. */
export const MAX_LINE_CHARS = 1 << 20;
/** A batch is also cut at this many characters, so big lines cannot add up past a string's limit. */
const MAX_BATCH_CHARS = 32 << 20;

export interface LineBatch {
  text: string;
  firstLine: number;
  lines: number;
  /** Lines longer than the limit, left out of `text` (an empty line stands in for each). */
  tooLong: number[];
}

/**
 * Cuts a byte or text stream into batches of `size` whole lines (the last batch may be shorter, and
 * a batch is cut early past MAX_BATCH_CHARS), holding one batch and one chunk at most; iterating
 * the stream waits for each chunk, so a slow database slows the reading down. A byte-order mark is
 * not part of the first line. A line past `maxLineChars` is dropped as it streams in (V8 cannot
 * hold a string past ~512 MB: such a line, or a batch of big ones, crashed the import) and named
 * in `tooLong`.
 */
export async function* readBatches(input: NodeJS.ReadableStream, size: number, maxLineChars = MAX_LINE_CHARS): AsyncGenerator<LineBatch> {
  const decoder = new TextDecoder('utf-8');
  // The current batch's text: its complete lines, then the start of a line.
  const parts: string[] = [];
  let partsChars = 0;
  // Where the line being read starts in the batch's text; whether it is being dropped.
  let lineStart = 0;
  let dropping = false;
  let tooLong: number[] = [];
  let complete = 0;
  let firstLine = 1;
  let first = true;
  const take = (piece: string) => {
    if (piece === '') return;
    parts.push(piece);
    partsChars += piece.length;
  };
  /** Cuts the line being read out of the batch's text (rare: a join). */
  const dropLine = () => {
    const kept = parts.join('').slice(0, lineStart);
    parts.length = 0;
    partsChars = 0;
    take(kept);
  };
  /** The chunk's end, part of a line not yet complete: dropped once that line passes the limit. */
  const takeTail = (tail: string) => {
    if (dropping) return;
    take(tail);
    if (partsChars - lineStart <= maxLineChars) return;
    dropLine();
    dropping = true;
  };
  for await (const chunk of input) {
    let text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    let from = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', newline + 1)) {
      if (dropping) {
        // The dropped line ends here: its newline stands in for it (a blank line, counted).
        tooLong.push(firstLine + complete);
        dropping = false;
        from = newline;
      } else if (partsChars + newline - from - lineStart > maxLineChars) {
        // Past the limit by the end of this chunk's part of it: the line goes, its newline stays.
        take(text.slice(from, newline));
        dropLine();
        tooLong.push(firstLine + complete);
        from = newline;
      }
      complete += 1;
      const batchChars = partsChars + newline + 1 - from;
      if (complete < size && batchChars < MAX_BATCH_CHARS) {
        lineStart = batchChars;
        continue;
      }
      take(text.slice(from, newline + 1));
      yield { text: parts.join(''), firstLine, lines: complete, tooLong };
      parts.length = 0;
      partsChars = 0;
      lineStart = 0;
      tooLong = [];
      firstLine += complete;
      complete = 0;
      from = newline + 1;
    }
    takeTail(text.slice(from));
  }
  takeTail(decoder.decode());
  const rest = parts.join('');
  // A last line without a newline counts; dropped, it is named too.
  const unterminated = dropping || (rest !== '' && !rest.endsWith('\n'));
  if (dropping) tooLong.push(firstLine + complete);
  if (rest !== '' || dropping) yield { text: rest, firstLine, lines: complete + (unterminated ? 1 : 0), tooLong };
}

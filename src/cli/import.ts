import { isUtf8 } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
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
  /** True when `signal` stopped the import before its input ended. */
  stopped?: boolean;
}

export interface ImportOptions {
  /**
   * Stops the import (SIGINT, SIGTERM: its reason names the signal): reading stops, the batch being
   * written is finished and committed, batches read but not yet being written are dropped, and the
   * closing line says how many lines were loaded. Once the input has ended it changes nothing.
   */
  signal?: AbortSignal;
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
  { signal }: ImportOptions = {},
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
  // The last line of the last batch written, and whether a signal stopped the reading before the end.
  let writtenThrough = 0;
  let readEnded = false;
  let stopped = false;
  const stopping = new Promise<void>((resolve) => {
    const stop = () => {
      if (readEnded) return;
      stopped = true;
      resolve();
    };
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
  });

  /** Checks a validated batch against the database, writes what loads, reports its rejected lines. */
  const load = async (write: WriteRows, batch: ProcessedBatch, lastLine: number, dropped: LineMessage[]) => {
    // Read before the signal, not yet being written: dropped with the rest of the input.
    if (stopped) return;
    const { rows, rejections } = await loadable(store, batch);
    if (Array.isArray(rows) ? rows.length > 0 : rows.copyText !== '') await write(rows);
    const messages: LineMessage[] = [
      ...dropped,
      ...batch.messages,
      ...rejections.map((rejection) => ({ line: batch.lines[rejection.index], text: `${rejection.field}: ${rejection.reason}` })),
    ];
    loaded += batch.lines.length - rejections.length;
    rejected += messages.length;
    writtenThrough = lastLine;
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
      const reading = readBatches(input, BATCH_LINES);
      const stopped$ = stopping.then(() => null);
      try {
        for (;;) {
          // A signal stops the reading at once, even while the input is silent (a pipe held open).
          const next = reading.next();
          const step = await Promise.race([next, stopped$]);
          if (step === null) {
            next.catch(() => {});
            (input as Partial<Readable>).destroy?.();
            break;
          }
          if (step.done) break;
          const { text, firstLine, lines, dropped } = step.value;
          if (batches++ === 1 && bulk.takesEncodedRows) validator = workerValidator(kind, encoding);
          lineNumber = firstLine + lines - 1;
          const lastLine = lineNumber;
          const validated = validator.validate(text, firstLine);
          loading = loading.then(async () => load(write, await validated, lastLine, dropped));
          // A failure is thrown where the chain is awaited; until then it must not count as unhandled.
          validated.catch(() => {});
          loading.catch(() => {});
          ahead.push(loading);
          if (ahead.length > validator.threads + 1) await ahead.shift();
        }
        readEnded = !stopped;
        await loading;
      } finally {
        await validator.close();
      }
    },
    note,
  );
  if (stopped) {
    // Every batch written is committed now; its rows would be written again the same way.
    stderr.write(
      `import ${kind}: stopped by ${String(signal?.reason ?? 'a signal')} after line ${formatCount(writtenThrough)}: ${formatCount(loaded)} loaded, ` +
        `${formatCount(rejected)} rejected; running the import again is safe (it upserts)\n`,
    );
    return { loaded, rejected, stopped };
  }
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
  /** Lines left out of `text`, and why (an empty line stands in for each). */
  dropped: LineMessage[];
}

const TOO_LONG = `longer than ${MAX_LINE_CHARS} characters: not read`;
const NOT_UTF8 = 'not valid UTF-8: not read';

/**
 * Cuts a byte or text stream into batches of `size` whole lines (the last batch may be shorter, and
 * a batch is cut early past MAX_BATCH_CHARS), holding one batch and one chunk at most; iterating
 * the stream waits for each chunk, so a slow database slows the reading down. A byte-order mark is
 * not part of the first line. A line past `maxLineChars` is dropped as it streams in (V8 cannot
 * hold a string past ~512 MB: such a line, or a batch of big ones, crashed the import), and so is
 * a line of bytes that are not UTF-8 (decoding would turn them into U+FFFD and store a name no one
 * wrote, as a Latin-1 file would); both are named in `dropped`.
 */
export async function* readBatches(input: NodeJS.ReadableStream, size: number, maxLineChars = MAX_LINE_CHARS): AsyncGenerator<LineBatch> {
  const decoder = new TextDecoder('utf-8');
  const bytesCheck = new Utf8Lines();
  // The current batch's text: its complete lines, then the start of a line.
  const parts: string[] = [];
  let partsChars = 0;
  // Where the line being read starts in the batch's text; whether it is being dropped.
  let lineStart = 0;
  let dropping = false;
  let dropped: LineMessage[] = [];
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
    const badLines = typeof chunk === 'string' ? undefined : bytesCheck.invalidLines(chunk as Uint8Array, firstLine + complete);
    let text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    let from = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', newline + 1)) {
      const line = firstLine + complete;
      if (dropping) {
        // The dropped line ends here: its newline stands in for it (a blank line, counted).
        dropped.push({ line, text: TOO_LONG });
        dropping = false;
        from = newline;
      } else if (partsChars + newline - from - lineStart > maxLineChars || badLines?.has(line)) {
        // Past the limit by the end of this chunk's part of it, or not text: the line goes, its newline stays.
        take(text.slice(from, newline));
        dropLine();
        dropped.push({ line, text: badLines?.has(line) ? NOT_UTF8 : TOO_LONG });
        from = newline;
      }
      complete += 1;
      const batchChars = partsChars + newline + 1 - from;
      if (complete < size && batchChars < MAX_BATCH_CHARS) {
        lineStart = batchChars;
        continue;
      }
      take(text.slice(from, newline + 1));
      yield { text: parts.join(''), firstLine, lines: complete, dropped };
      parts.length = 0;
      partsChars = 0;
      lineStart = 0;
      dropped = [];
      firstLine += complete;
      complete = 0;
      from = newline + 1;
    }
    takeTail(text.slice(from));
  }
  takeTail(decoder.decode());
  // A last line without a newline counts; dropped, it is named too.
  const lastBad = bytesCheck.endIsInvalid();
  if (lastBad && !dropping) dropLine();
  const rest = parts.join('');
  const unterminated = dropping || lastBad || (rest !== '' && !rest.endsWith('\n'));
  if (dropping || lastBad) dropped.push({ line: firstLine + complete, text: dropping ? TOO_LONG : NOT_UTF8 });
  if (rest !== '' || dropping || lastBad) yield { text: rest, firstLine, lines: complete + (unterminated ? 1 : 0), dropped };
}

/**
 * Finds the lines of a byte stream that are not UTF-8, chunk by chunk. A newline byte is never
 * part of a longer character, so lines are cut on bytes; a character cut by a chunk's end is
 * carried to the next. Valid chunks, nearly all of them, cost one `isUtf8` pass.
 */
class Utf8Lines {
  #carry: Uint8Array | undefined;
  /** Whether the line continuing from the last chunk already had bytes that are not UTF-8. */
  #lineBad = false;

  /** The numbers of the lines of this chunk (the first being `firstLine`) with bytes that are not UTF-8. */
  invalidLines(chunk: Uint8Array, firstLine: number): Set<number> | undefined {
    const bytes = this.#carry ? Buffer.concat([this.#carry, chunk]) : chunk;
    const end = bytes.length - incompleteTail(bytes);
    // A copy: the stream may reuse its chunk's memory.
    this.#carry = end < bytes.length ? Uint8Array.prototype.slice.call(bytes, end) : undefined;
    if (!this.#lineBad && isUtf8(bytes.subarray(0, end))) return undefined;
    const bad = new Set<number>();
    let line = firstLine;
    let start = 0;
    for (let newline = bytes.indexOf(0x0a); newline !== -1 && newline < end; newline = bytes.indexOf(0x0a, newline + 1)) {
      if (this.#lineBad || !isUtf8(bytes.subarray(start, newline))) bad.add(line);
      this.#lineBad = false;
      line += 1;
      start = newline + 1;
    }
    if (!isUtf8(bytes.subarray(start, end))) this.#lineBad = true;
    if (this.#lineBad) bad.add(line);
    return bad;
  }

  /** Whether the stream's last line (after its last newline) is not UTF-8, a character cut short included. */
  endIsInvalid(): boolean {
    return this.#lineBad || this.#carry !== undefined;
  }
}

/** How many bytes at the end of `bytes` start a character that continues past it (0–3). */
function incompleteTail(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

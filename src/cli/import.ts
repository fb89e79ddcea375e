import { performance } from 'node:perf_hooks';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { categoryRecord, channelRecord, creatorRecord, liveStreamRecord, videoRecord } from '../inputs/records.js';
import type { Database } from '../store/database.js';
import {
  UPSERT_BATCH_SIZE,
  upsertCategories,
  upsertChannels,
  upsertCreators,
  upsertLiveStreams,
  upsertVideos,
  type Rejection,
} from '../store/imports.js';

export const importKinds = ['categories', 'creators', 'channels', 'videos', 'live-streams'] as const;
export type ImportKind = (typeof importKinds)[number];

export interface ImportResult {
  loaded: number;
  rejected: number;
}

interface Importer<T> {
  schema: z.ZodType<T>;
  upsert(db: Kysely<Database>, records: readonly T[]): Promise<Rejection[]>;
}

interface Batch<T> {
  records: T[];
  recordLines: number[];
  messages: { line: number; text: string }[];
  lastLine: number;
}

const PROGRESS_EVERY_LINES = 10_000;
const formatCount = (value: number) => value.toLocaleString('en-US');

/**
 * Loads an NDJSON stream of one kind (decisions.md §7), streaming: memory holds two batches of
 * lines at most, the one being read and the one being loaded. Every rejected line is reported on
 * `stderr` as `line N: <field>: <reason>` (a line that is not JSON: `line N: not valid JSON (…)`),
 * the valid ones are upserted by id. Blank lines are skipped; line numbers count them.
 */
export async function runImport(
  db: Kysely<Database>,
  kind: ImportKind,
  input: NodeJS.ReadableStream,
  stderr: NodeJS.WritableStream,
): Promise<ImportResult> {
  switch (kind) {
    case 'categories':
      return importLines(db, kind, { schema: categoryRecord, upsert: upsertCategories }, input, stderr);
    case 'creators':
      return importLines(db, kind, { schema: creatorRecord, upsert: upsertCreators }, input, stderr);
    case 'channels':
      return importLines(db, kind, { schema: channelRecord, upsert: upsertChannels }, input, stderr);
    case 'videos':
      return importLines(db, kind, { schema: videoRecord, upsert: upsertVideos }, input, stderr);
    case 'live-streams':
      return importLines(db, kind, { schema: liveStreamRecord, upsert: upsertLiveStreams }, input, stderr);
  }
}

async function importLines<T>(
  db: Kysely<Database>,
  kind: ImportKind,
  importer: Importer<T>,
  input: NodeJS.ReadableStream,
  stderr: NodeJS.WritableStream,
): Promise<ImportResult> {
  const started = performance.now();
  let lineNumber = 0;
  let loaded = 0;
  let rejected = 0;
  let reportedProgress = 0;
  // The batch being read: its valid records with their line numbers, and the messages of its
  // rejected lines, printed together in line order once the batch is loaded.
  let batch: Batch<T> = { records: [], recordLines: [], messages: [], lastLine: 0 };

  const load = async ({ records, recordLines, messages, lastLine }: Batch<T>) => {
    const refused = records.length > 0 ? await importer.upsert(db, records) : [];
    for (const rejection of refused) {
      messages.push({ line: recordLines[rejection.index], text: `${rejection.field}: ${rejection.reason}` });
    }
    loaded += records.length - refused.length;
    rejected += messages.length;
    messages.sort((a, b) => a.line - b.line);
    for (const message of messages) stderr.write(`line ${message.line}: ${message.text}\n`);
    if (lastLine - reportedProgress >= PROGRESS_EVERY_LINES) {
      reportedProgress = lastLine - (lastLine % PROGRESS_EVERY_LINES);
      stderr.write(`import ${kind}: ${formatCount(lastLine)} lines, ${formatCount(loaded)} loaded, ${formatCount(rejected)} rejected\n`);
    }
  };
  // The next batch is read and validated while the database loads the previous one. Batches load
  // one at a time and in order: a batch may need the rows of the one before (a category's parent).
  let loading: Promise<void> = Promise.resolve();
  const flush = async () => {
    const full = { ...batch, lastLine: lineNumber };
    batch = { records: [], recordLines: [], messages: [], lastLine: 0 };
    await loading;
    loading = load(full);
    // Its failure is thrown at the next flush; until then it must not count as unhandled.
    loading.catch(() => {});
  };

  for await (const line of readLines(input)) {
    lineNumber++;
    if (line.trim() !== '') {
      const parsed = parseLine(importer.schema, line);
      if ('value' in parsed) {
        batch.records.push(parsed.value);
        batch.recordLines.push(lineNumber);
      } else {
        batch.messages.push({ line: lineNumber, text: parsed.error });
      }
    }
    if (lineNumber % UPSERT_BATCH_SIZE === 0) await flush();
  }
  await flush();
  await loading;

  const seconds = (performance.now() - started) / 1000;
  stderr.write(
    `import ${kind}: done, ${formatCount(lineNumber)} lines, ${formatCount(loaded)} loaded, ${formatCount(rejected)} rejected` +
      ` in ${seconds.toFixed(1)} s (${formatCount(Math.round(lineNumber / Math.max(seconds, 0.001)))} lines/s)\n`,
  );
  return { loaded, rejected };
}

function parseLine<T>(schema: z.ZodType<T>, line: string): { value: T } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (error) {
    return { error: `not valid JSON (${(error as Error).message})` };
  }
  const result = schema.safeParse(json, {
    error: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined),
  });
  if (result.success) return { value: result.data };
  const problems = result.error.issues.flatMap((issue) => {
    const field = issue.path.length > 0 ? issue.path.join('.') : 'record';
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => `${[...issue.path, key].join('.')}: unknown field`);
    }
    return [`${field}: ${issue.message}`];
  });
  return { error: problems.join('; ') };
}

/**
 * Splits a byte or text stream into lines without holding more than one chunk and one partial
 * line; iterating the stream waits for each chunk, so a slow database slows the reading down.
 */
async function* readLines(input: NodeJS.ReadableStream): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let first = true;
  for await (const chunk of input) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (first && pending.length > 0) {
      // A byte-order mark is not part of the first record.
      if (pending.charCodeAt(0) === 0xfeff) pending = pending.slice(1);
      first = false;
    }
    let start = 0;
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n', start)) {
      yield stripCarriageReturn(pending.slice(start, newline));
      start = newline + 1;
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending !== '') yield stripCarriageReturn(pending);
}

const stripCarriageReturn = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);

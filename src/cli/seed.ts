import { performance } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import { assignableCategoryIds, demoCategories } from '../demo/categories.js';
import { makeCreator } from '../demo/creators.js';
import { demoDataSet } from '../demo/data-set.js';
import { makeLiveStream } from '../demo/live-streams.js';
import { makeChannel, makeVideo, type ChannelProfile } from '../demo/videos.js';
import { categoriesTable, channelsTable, creatorsTable, liveStreamsTable, videosTable, type BulkTable, type Row } from '../store/bulk-tables.js';
import { vacuumAnalyze, type BulkTransport, type LoadOptions } from '../store/bulk.js';
import type { Store } from '../store/connect.js';
import type { Database } from '../store/database.js';
import { channelRow, creatorRow, liveStreamRow, videoRow, type Rejection } from '../store/imports.js';
import { upsertCategories, upsertChannels, upsertCreators, upsertLiveStreams, upsertVideos } from '../store/upserts.js';

const formatCount = (value: number) => value.toLocaleString('en-US');
const seconds = (since: number) => (performance.now() - since) / 1000;

export interface DemoCounts {
  categories: number;
  creators: number;
  channels: number;
  videos: number;
  liveStreams: number;
}

/** True when there are no creators, channels or videos: `start` loads the demo set only then. */
export async function isStoreEmpty(db: Kysely<Database>): Promise<boolean> {
  const { rows } = await sql<{ empty: boolean }>`SELECT NOT (
    EXISTS (SELECT 1 FROM creators) OR EXISTS (SELECT 1 FROM channels) OR EXISTS (SELECT 1 FROM videos)
  ) AS empty`.execute(db);
  return rows[0].empty;
}

/**
 * Loads the deterministic demo data set (src/demo) through the import upserts, in one
 * transaction, then vacuums and analyses its tables. Loading it again changes nothing.
 */
export async function seedDemo(db: Kysely<Database>, stderr: NodeJS.WritableStream): Promise<DemoCounts> {
  const started = performance.now();
  const data = demoDataSet();
  const expectAccepted = (kind: string, rejections: Rejection[]) => {
    if (rejections.length > 0) {
      throw new Error(`the demo ${kind} were refused: ${rejections.slice(0, 3).map((r) => `${r.field}: ${r.reason}`).join('; ')}`);
    }
  };
  await db.transaction().execute(async (trx) => {
    expectAccepted('categories', await upsertCategories(trx, data.categories));
    expectAccepted('creators', await upsertCreators(trx, data.creators));
    expectAccepted('channels', await upsertChannels(trx, data.channels));
    expectAccepted('videos', await upsertVideos(trx, data.videos));
    expectAccepted('live streams', await upsertLiveStreams(trx, data.liveStreams));
  });
  for (const table of [categoriesTable, creatorsTable, channelsTable, videosTable, liveStreamsTable]) await vacuumAnalyze(db, table);
  const counts: DemoCounts = {
    categories: data.categories.length,
    creators: data.creators.length,
    channels: data.channels.length,
    videos: data.videos.length,
    liveStreams: data.liveStreams.length,
  };
  stderr.write(
    `seed: demo data set loaded: ${formatCount(counts.categories)} categories, ${formatCount(counts.creators)} creators, ` +
      `${formatCount(counts.channels)} channels, ${formatCount(counts.videos)} videos, ` +
      `${formatCount(counts.liveStreams)} live streams in ${seconds(started).toFixed(1)} s\n`,
  );
  return counts;
}

export interface ScaleCounts {
  creators: number;
  videos: number;
  channels: number;
  live: number;
}

/** Rows per write: a transaction each when the table has rows, and how often progress is printed. */
const ROWS_PER_WRITE = 100_000;

/**
 * Benchmark data: `counts` rows of each kind, generated like the demo records but under ids of
 * their own (creators `9…`, channels `UCscale…`, videos `sv…`, streams `9…`), written through the
 * store's bulk transport: COPY on PostgreSQL (an empty table gets its indexes built after the
 * load, and tables load side by side), unnest INSERTs on the embedded store. Deterministic; rows
 * that already exist are kept, so a second run adds only what is missing. Also upserts the demo
 * taxonomy, so the creators' category ids exist. Every table written is vacuumed and analysed
 * once all loads have ended. Returns the rows inserted.
 */
export async function seedScale(store: Pick<Store, 'db' | 'bulk'>, counts: ScaleCounts, stderr: NodeJS.WritableStream): Promise<ScaleCounts> {
  for (const [name, value] of Object.entries(counts)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`);
  }
  if (counts.videos > 0 && counts.channels === 0) throw new RangeError('videos need at least one channel');
  if (counts.videos > 1e9) throw new RangeError('videos must be at most 1,000,000,000');
  const started = performance.now();

  const categories = demoCategories();
  const refused = await upsertCategories(store.db, categories);
  if (refused.length > 0) throw new Error(`the demo categories were refused: ${refused[0].reason}`);
  const categoryIds = assignableCategoryIds(categories);

  // Every video draws on its channel's profile: each is made once, not once per video.
  const channels: ChannelProfile[] = [];
  const channel = (index: number) => (channels[index] ??= makeChannel(`scale:channel:${index}`, scaleChannelId(index)));
  const jobs = {
    channels: scaleJob('channels', counts.channels, channelsTable, (i) => channelRow(channel(i).record)),
    videos: scaleJob('videos', counts.videos, videosTable, (i) =>
      videoRow(makeVideo(`scale:video:${i}`, `sv${String(i).padStart(9, '0')}`, channel(i % counts.channels), i)),
    ),
    creators: scaleJob('creators', counts.creators, creatorsTable, (i) =>
      creatorRow(makeCreator(`scale:creator:${i}`, `9${String(i).padStart(12, '0')}`, i, categoryIds)),
    ),
    live: scaleJob('live streams', counts.live, liveStreamsTable, (i) =>
      liveStreamRow(makeLiveStream(`scale:stream:${i}`, `9${String(i).padStart(10, '0')}`, `8${String(i).padStart(10, '0')}`, i)),
    ),
  };
  const load = (job: ScaleJob, options?: LoadOptions) => loadGenerated(store.bulk, job, stderr, options);

  let inserted: ScaleCounts;
  if (store.bulk.concurrent) {
    // Side by side: one table's indexes build while another's rows are generated. Videos need
    // their channels stored, but only by the time their references are checked (bulk-copy.ts).
    const channelsStored = load(jobs.channels);
    const [channels, videos, creators, live] = await settleAll([
      channelsStored,
      load(jobs.videos, { referencedRowsStored: channelsStored }),
      load(jobs.creators),
      load(jobs.live),
    ] as const);
    inserted = { channels, videos, creators, live };
  } else {
    inserted = { channels: await load(jobs.channels), videos: await load(jobs.videos), creators: await load(jobs.creators), live: await load(jobs.live) };
  }

  // Only now: while any load was open, the rows of the others could not be marked visible to all.
  // One at a time: side by side, VACUUMs were seen to leave pages unmarked (PostgreSQL 15). The
  // large tables arrive frozen (bulk-copy.ts), so this is mostly ANALYZE.
  const written = [{ label: 'categories', table: categoriesTable }, ...Object.values(jobs).filter((job) => job.total > 0)];
  for (const { label, table } of written) await store.bulk.vacuumAnalyze(table, (text) => stderr.write(`seed: ${label}: ${text}\n`));

  stderr.write(`seed: done in ${seconds(started).toFixed(1)} s\n`);
  return inserted;
}

interface ScaleJob {
  label: string;
  total: number;
  table: BulkTable;
  makeRow: (index: number) => Row;
}

const scaleJob = (label: string, total: number, table: BulkTable, makeRow: (index: number) => Row): ScaleJob => ({ label, total, table, makeRow });

const scaleChannelId = (index: number) => `UCscale${String(index).padStart(17, '0')}`;

/** Like Promise.all, but waits for every load to end before throwing: none may outlive the store. */
async function settleAll<T extends readonly unknown[]>(promises: readonly [...{ [K in keyof T]: Promise<T[K]> }]): Promise<T> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return results.map((result) => (result as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

function* generated(makeRow: (index: number) => Row, start: number, end: number): Generator<Row> {
  for (let index = start; index < end; index++) yield makeRow(index);
}

/** Generates and writes `total` rows, 100,000 per write; rows are made as the transport takes them. */
async function loadGenerated(bulk: BulkTransport, job: ScaleJob, stderr: NodeJS.WritableStream, options?: LoadOptions): Promise<number> {
  if (job.total === 0) return 0;
  const started = performance.now();
  const note = (text: string) => stderr.write(`seed: ${job.label}: ${text}\n`);
  const inserted = await bulk.load(
    job.table,
    'keep-stored',
    async (write) => {
      for (let start = 0; start < job.total; start += ROWS_PER_WRITE) {
        const end = Math.min(job.total, start + ROWS_PER_WRITE);
        await write(generated(job.makeRow, start, end));
        const rate = Math.round(end / Math.max(seconds(started), 0.001));
        stderr.write(`seed: ${job.label} ${formatCount(end)} / ${formatCount(job.total)} (${formatCount(rate)} rows/s)\n`);
      }
    },
    note,
    options,
  );
  note(`${formatCount(inserted)} rows inserted in ${seconds(started).toFixed(1)} s`);
  return inserted;
}

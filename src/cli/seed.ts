import { performance } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import { assignableCategoryIds, demoCategories } from '../demo/categories.js';
import { makeCreator } from '../demo/creators.js';
import { demoDataSet } from '../demo/data-set.js';
import { makeLiveStream } from '../demo/live-streams.js';
import { makeChannel, makeVideo } from '../demo/videos.js';
import type { Database } from '../store/database.js';
import {
  channelRow,
  creatorRow,
  liveStreamRow,
  upsertCategories,
  upsertChannels,
  upsertCreators,
  upsertLiveStreams,
  upsertVideos,
  videoRow,
  type Rejection,
} from '../store/imports.js';

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
 * transaction. Loading it again changes nothing.
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

/** Rows per INSERT: one bind parameter per column (an array each), so the size is free of PostgreSQL's limit. */
const BULK_BATCH_ROWS = 5_000;
/** Rows per transaction, and how often progress is printed. */
const ROWS_PER_TRANSACTION = 100_000;

/**
 * Benchmark data: `counts` rows of each kind, generated like the demo records but under ids of
 * their own (creators `9…`, channels `UCscale…`, videos `sv…`, streams `9…`), inserted with
 * `INSERT … SELECT FROM unnest(arrays)` in batches of 5,000, 100,000 rows per transaction.
 * Deterministic; rows that already exist are kept, so a second run adds only what is missing.
 * Also upserts the demo taxonomy, so the creators' category ids exist. Returns the rows inserted.
 */
export async function seedScale(db: Kysely<Database>, counts: ScaleCounts, stderr: NodeJS.WritableStream): Promise<ScaleCounts> {
  for (const [name, value] of Object.entries(counts)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`);
  }
  if (counts.videos > 0 && counts.channels === 0) throw new RangeError('videos need at least one channel');
  if (counts.videos > 1e9) throw new RangeError('videos must be at most 1,000,000,000');

  const categories = demoCategories();
  const refused = await upsertCategories(db, categories);
  if (refused.length > 0) throw new Error(`the demo categories were refused: ${refused[0].reason}`);
  const categoryIds = assignableCategoryIds(categories);

  const channel = (index: number) => makeChannel(`scale:channel:${index}`, scaleChannelId(index));
  const load = (label: string, total: number, table: BulkTable, makeRow: (index: number) => Record<string, unknown>) =>
    bulkLoad(db, { label, total, table, makeRow }, stderr);
  return {
    channels: await load('channels', counts.channels, channelsTable, (i) => channelRow(channel(i).record)),
    videos: await load('videos', counts.videos, videosTable, (i) =>
      videoRow(makeVideo(`scale:video:${i}`, `sv${String(i).padStart(9, '0')}`, channel(i % counts.channels), i)),
    ),
    creators: await load('creators', counts.creators, creatorsTable, (i) =>
      creatorRow(makeCreator(`scale:creator:${i}`, `9${String(i).padStart(12, '0')}`, i, categoryIds)),
    ),
    live: await load('live streams', counts.live, liveStreamsTable, (i) =>
      liveStreamRow(makeLiveStream(`scale:stream:${i}`, `9${String(i).padStart(10, '0')}`, `8${String(i).padStart(10, '0')}`, i)),
    ),
  };
}

const scaleChannelId = (index: number) => `UCscale${String(index).padStart(17, '0')}`;

/** A table's columns for unnest: the element type of the array bound, and a cast for array-valued columns. */
interface BulkTable {
  name: keyof Database;
  columns: readonly (readonly [column: string, elementType: string, cast?: string])[];
}

const creatorsTable: BulkTable = {
  name: 'creators',
  columns: [
    ['platform', 'text'], ['user_id', 'text'], ['username', 'text'], ['full_name', 'text'], ['avatar', 'text'],
    ['country', 'text'], ['language', 'text'], ['gender', 'int2'], ['follower_count', 'int8'], ['is_verified', 'bool'],
    ['has_email', 'bool'], ['avg_engagement_rate', 'numeric'], ['avg_video_engagement_rate', 'numeric'],
    ['avg_comment_count', 'numeric'], ['avg_like_count', 'numeric'], ['avg_retweet_count', 'numeric'],
    ['avg_view_count', 'numeric'], ['retweet_ratio', 'numeric'], ['reply_ratio', 'numeric'], ['post_count', 'int8'],
    ['video_count', 'int8'], ['last_publish_at', 'timestamptz'], ['recent_month_publish_count', 'int4'],
    ['recent_week_publish_count', 'int4'], ['last_post', 'text', 'jsonb'], ['evaluation_min', 'numeric'],
    ['evaluation_max', 'numeric'], ['category_ids', 'text', 'integer[]'], ['last_update_at', 'timestamptz'],
  ],
};

const channelsTable: BulkTable = {
  name: 'channels',
  columns: [
    ['channel_id', 'text'], ['title', 'text'], ['avatar', 'text'], ['country', 'text'], ['language', 'text'],
    ['gender', 'int2'], ['follower_count', 'int8'], ['avg_engagement_rate', 'numeric'], ['avg_play_count', 'numeric'],
    ['avg_like_count', 'numeric'], ['avg_comment_count', 'numeric'], ['video_count', 'int8'],
    ['recent_month_publish_count', 'int4'], ['evaluation_min', 'numeric'], ['evaluation_max', 'numeric'],
    ['last_update_at', 'timestamptz'],
  ],
};

const videosTable: BulkTable = {
  name: 'videos',
  columns: [
    ['video_id', 'text'], ['channel_id', 'text'], ['title', 'text'], ['description', 'text'], ['cover_url', 'text'],
    ['create_at', 'timestamptz'], ['duration_seconds', 'int4'], ['video_url', 'text'], ['video_type', 'int2'],
    ['category_id', 'int4'], ['like_count', 'int8'], ['comment_count', 'int8'], ['play_count', 'int8'],
    ['engagement_rate', 'numeric'], ['last_update_at', 'timestamptz'],
  ],
};

const liveStreamsTable: BulkTable = {
  name: 'live_streams',
  columns: [
    ['id', 'text'], ['user_id', 'text'], ['user_login', 'text'], ['user_name', 'text'], ['game_id', 'text'],
    ['game_name', 'text'], ['type', 'text'], ['title', 'text'], ['viewer_count', 'int8'], ['started_at', 'timestamptz'],
    ['language', 'text'], ['thumbnail_url', 'text'], ['tags', 'text', 'text[]'], ['is_mature', 'bool'],
    ['last_update_at', 'timestamptz'],
  ],
};

/**
 * A PostgreSQL array literal ({1,NULL,"a \\"b\\""}), bound as one text parameter and cast. Written
 * here because the driver's own array serialisation costs more than generating the rows.
 */
function arrayLiteral(values: readonly unknown[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) parts[i] = 'NULL';
    else if (typeof value === 'number' || typeof value === 'boolean') parts[i] = String(value);
    else {
      const text = value instanceof Date ? value.toISOString() : Array.isArray(value) ? arrayLiteral(value) : String(value);
      parts[i] = `"${text.replace(/[\\"]/g, '\\$&')}"`;
    }
  }
  return `{${parts.join(',')}}`;
}

function insertStatement(table: BulkTable, rows: readonly Record<string, unknown>[]) {
  const arrays = table.columns.map(([column, type]) => sql`${arrayLiteral(rows.map((row) => row[column]))}::${sql.raw(type)}[]`);
  const names = table.columns.map(([column]) => sql.id(column));
  const selected = table.columns.map(([column, , cast]) => (cast ? sql`${sql.id(column)}::${sql.raw(cast)}` : sql.id(column)));
  return sql`INSERT INTO ${sql.id(table.name)} (${sql.join(names)})
    SELECT ${sql.join(selected)} FROM unnest(${sql.join(arrays)}) AS u(${sql.join(names)})
    ON CONFLICT DO NOTHING`;
}

/**
 * Generates and inserts `total` rows. Generating a batch overlaps with the database inserting the
 * previous one, so on PostgreSQL neither side waits for the other.
 */
async function bulkLoad(
  db: Kysely<Database>,
  job: { label: string; total: number; table: BulkTable; makeRow: (index: number) => Record<string, unknown> },
  stderr: NodeJS.WritableStream,
): Promise<number> {
  const started = performance.now();
  let inserted = 0;
  for (let start = 0; start < job.total; start += ROWS_PER_TRANSACTION) {
    const end = Math.min(job.total, start + ROWS_PER_TRANSACTION);
    await db.transaction().execute(async (trx) => {
      let pending: Promise<void> | null = null;
      for (let batchStart = start; batchStart < end; batchStart += BULK_BATCH_ROWS) {
        const rows: Record<string, unknown>[] = [];
        for (let index = batchStart; index < Math.min(end, batchStart + BULK_BATCH_ROWS); index++) rows.push(job.makeRow(index));
        await pending;
        pending = insertStatement(job.table, rows)
          .execute(trx)
          .then((result) => {
            inserted += Number(result.numAffectedRows ?? 0);
          });
      }
      await pending;
    });
    const elapsed = seconds(started);
    stderr.write(
      `seed: ${job.label} ${formatCount(end)} / ${formatCount(job.total)} (${formatCount(Math.round(end / Math.max(elapsed, 0.001)))} rows/s)\n`,
    );
  }
  return inserted;
}

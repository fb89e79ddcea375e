// The bench database: created and seeded at scale when rows are missing (through the service's own
// `creator-data seed`, as a child), vacuumed and analysed after seeding; then read once for the
// workloads' vocabulary and the facts the results are printed with.
import { cpus, loadavg, totalmem } from 'node:os';
import pg from 'pg';
import { SQL_PATH_FILTER_INDEXES } from '../migrations/2026_11_28_0002_sql_path_filter_indexes.js';
import { SQL_PATH_VIDEO_TEXT_INDEXES } from '../migrations/2026_11_29_0001_sql_path_video_text_indexes.js';
import { childEnv, runCommand } from './systems.js';
import type { Vocabulary } from './workloads.js';

export interface Scale {
  creators: number;
  channels: number;
  videos: number;
  live: number;
}

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
const formatCount = (n: number) => n.toLocaleString('en-US');

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function ensureDatabase(url: string): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  await withClient(admin.toString(), async (client) => {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      log(`creating database ${name}`);
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    }
  });
}

/** Rows per catalogue table; zero for tables not created yet (a database never migrated). */
async function rowCounts(client: pg.Client): Promise<Scale> {
  const { rows } = await client.query<{ ready: boolean }>(`SELECT to_regclass('public.live_streams') IS NOT NULL AS ready`);
  if (!rows[0].ready) return { creators: 0, channels: 0, videos: 0, live: 0 };
  const counts = await client.query<Scale>(`SELECT
    (SELECT count(*) FROM creators)::int AS creators, (SELECT count(*) FROM channels)::int AS channels,
    (SELECT count(*) FROM videos)::int AS videos, (SELECT count(*) FROM live_streams)::int AS live`);
  return counts.rows[0];
}

/** True when a catalogue table was never vacuumed or analysed (a seed that stopped half-way). */
async function needsVacuum(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ stale: number }>(`SELECT count(*)::int AS stale FROM pg_stat_user_tables
    WHERE relname IN ('creators', 'channels', 'videos', 'live_streams')
      AND (coalesce(last_vacuum, last_autovacuum) IS NULL OR coalesce(last_analyze, last_autoanalyze) IS NULL)`);
  return rows[0].stale > 0;
}

/**
 * Seeds whatever the wanted scale lacks (the seed is deterministic and keeps existing rows, so it
 * fills only the gap), then VACUUM ANALYZE so the planner and index-only scans see real figures.
 * `comparisonIndexes`: PostGraphile or the floor run, so their filter indexes are made (minutes
 * at x10; a run of the service alone does without them).
 * Returns the rows present afterwards (more than wanted if the database already had more), and
 * how long the seed took when this run seeded.
 */
export async function prepareDatabase(
  url: string,
  wanted: Scale,
  comparisonIndexes: boolean,
): Promise<{ rows: Scale; seedSeconds: number | null }> {
  await ensureDatabase(url);
  const have = await withClient(url, rowCounts);
  const missing = (Object.keys(wanted) as (keyof Scale)[]).filter((table) => have[table] < wanted[table]);
  let seedSeconds: number | null = null;
  if (missing.length > 0) {
    log(`seeding ${missing.map((t) => `${t} ${formatCount(have[t])} → ${formatCount(wanted[t])}`).join(', ')} (progress below)`);
    const flags = Object.entries(wanted).flatMap(([table, n]) => [`--${table}`, String(n)]);
    const started = performance.now();
    await runCommand(process.execPath, ['bin/creator-data.js', 'seed', ...flags], childEnv(url));
    seedSeconds = (performance.now() - started) / 1000;
  }
  // Migrated before the comparison's indexes are made: a database seeded by an older build would
  // lose them to the service's own migration at its start.
  await runCommand(process.execPath, ['bin/creator-data.js', 'migrate'], childEnv(url));
  if (comparisonIndexes) await ensureComparisonIndexes(url);
  const rows = await withClient(url, async (client) => {
    if (missing.length > 0 || (await needsVacuum(client))) {
      log('VACUUM ANALYZE');
      await client.query('VACUUM ANALYZE');
    }
    return rowCounts(client);
  });
  return { rows, seedSeconds };
}

/**
 * The filter and video text indexes the service's schema dropped (they served only its SQL path),
 * made again for PostGraphile and the floor, whose every search is SQL: an operator of PostGraphile
 * would index the filters its schema exposes, and the comparison should not gain from their
 * absence. Not part of the seed's time.
 */
async function ensureComparisonIndexes(url: string): Promise<void> {
  const rows = await withClient(url, (client) => client.query<{ name: string }>('SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema()'));
  const present = new Set(rows.rows.map((row) => row.name));
  const missing = [...SQL_PATH_FILTER_INDEXES, ...SQL_PATH_VIDEO_TEXT_INDEXES].filter((index) => !present.has(index.name));
  if (missing.length === 0) return;
  const started = performance.now();
  // Two at a time, each on a connection of its own: a GIN build runs on one process (the videos'
  // text indexes take minutes at x10), and builds on one table do not block each other.
  const queue = [...missing];
  const build = async (client: pg.Client) => {
    for (let index = queue.shift(); index; index = queue.shift()) {
      const began = performance.now();
      await client.query(`CREATE INDEX ${pg.escapeIdentifier(index.name)} ${index.definition}`);
      log(`index ${index.name} made for PostGraphile and the floor in ${((performance.now() - began) / 1000).toFixed(1)} s`);
    }
  };
  await Promise.all([withClient(url, build), withClient(url, build)]);
  log(`${missing.length} indexes made for PostGraphile and the floor (not the service's) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

const SAMPLED_ROWS = 400;
/** Keys of each type that `nodes` sessions draw from. */
const SAMPLED_KEYS = 5_000;

export async function readVocabulary(url: string): Promise<Vocabulary> {
  return withClient(url, async (client) => {
    const weighted = async (sql: string) =>
      (await client.query<{ value: string; n: number }>(sql)).rows.map((r): [string, number] => [r.value, r.n]);
    // md5 of the id: a sample that is the same on every run, whatever the physical row order.
    const texts = async (sql: string) => (await client.query<{ a: string; b: string }>(sql)).rows.flatMap((r) => [r.a, r.b]).filter(Boolean);
    const keys = async (sql: string) => (await client.query<{ key: string }>(sql)).rows.map((r) => r.key);
    const days = async (sql: string) => {
      const { rows } = await client.query<{ first: string; last: string }>(sql);
      return rows[0];
    };
    return {
      creatorCountries: await weighted(`SELECT country AS value, count(*)::int AS n FROM creators WHERE platform = 'twitter' AND country <> '' GROUP BY 1 ORDER BY 1`),
      creatorLanguages: await weighted(`SELECT language AS value, count(*)::int AS n FROM creators WHERE platform = 'twitter' AND language <> '' GROUP BY 1 ORDER BY 1`),
      channelCountries: await weighted(`SELECT country AS value, count(*)::int AS n FROM channels WHERE country <> '' GROUP BY 1 ORDER BY 1`),
      nameTexts: await texts(`SELECT username AS a, full_name AS b FROM creators WHERE platform = 'twitter' ORDER BY md5(user_id) LIMIT ${SAMPLED_ROWS}`),
      videoTexts: await texts(`SELECT title AS a, description AS b FROM videos ORDER BY md5(video_id) LIMIT ${SAMPLED_ROWS}`),
      taxonomy: (await client.query('SELECT id, parent_id AS "parentId", level FROM categories ORDER BY id')).rows,
      videoCategoryIds: (await client.query<{ id: number }>('SELECT DISTINCT category_id AS id FROM videos ORDER BY 1')).rows.map((r) => r.id),
      creatorDays: await days(`SELECT to_char(min(last_publish_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS first,
        to_char(max(last_publish_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS last FROM creators WHERE platform = 'twitter'`),
      videoDays: await days(`SELECT to_char(min(create_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS first,
        to_char(max(create_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS last FROM videos`),
      liveLanguages: await weighted(`SELECT language AS value, count(*)::int AS n FROM live_streams GROUP BY 1 ORDER BY 1`),
      liveGames: await weighted(`SELECT game_id AS value, count(*)::int AS n FROM live_streams GROUP BY 1 ORDER BY 1`),
      nodeKeys: {
        Creator: await keys(`SELECT user_id AS key FROM creators WHERE platform = 'twitter' ORDER BY md5(user_id) LIMIT ${SAMPLED_KEYS}`),
        Channel: await keys(`SELECT channel_id AS key FROM channels ORDER BY md5(channel_id) LIMIT ${SAMPLED_KEYS}`),
        Video: await keys(`SELECT video_id AS key FROM videos ORDER BY md5(video_id) LIMIT ${SAMPLED_KEYS}`),
      },
    };
  });
}

export const SETTINGS_SHOWN = [
  'shared_buffers',
  'work_mem',
  'effective_cache_size',
  'jit',
  'max_parallel_workers_per_gather',
  'random_page_cost',
  'synchronous_commit',
] as const;

/** The 1, 5 and 15-minute load averages: how busy the shared machine was around the run. */
export const loadAverage = () => loadavg().map((n) => n.toFixed(2)).join(' ');

export interface MachineFacts {
  cpu: string;
  cores: number;
  memoryGiB: number;
  loadAverage: string;
  node: string;
  postgres: string;
  settings: Record<string, string>;
}

export async function machineFacts(url: string): Promise<MachineFacts> {
  return withClient(url, async (client) => {
    const show = async (name: string) => (await client.query(`SHOW ${name}`)).rows[0][name] as string;
    const settings: Record<string, string> = {};
    for (const name of SETTINGS_SHOWN) settings[name] = await show(name);
    return {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      loadAverage: loadAverage(),
      node: process.version,
      postgres: await show('server_version'),
      settings,
    };
  });
}

// npm run bench:bulk: `seed` and `import` throughput on a real PostgreSQL, in a database of its own
// that it drops and recreates (BENCH_BULK_DATABASE_URL, default `creator_data_seed_bench` on
// localhost). BENCH_SEED_SCALE (default 0.1) scales the seed of 1,000,000 creators,
// 200,000 channels, 2,000,000 videos and 20,000 live streams; BENCH_IMPORT_LINES (default 300,000)
// sizes the generated creators and videos files (channels: a tenth of it). The database is dropped
// at the end unless BENCH_KEEP is set. Progress goes to stderr, the summary to stdout. It runs the
// built code, as `creator-data import` does: through tsx, each closure paid for esbuild's `__name`
// helper (3-5% of a validating thread).
import { createWriteStream, createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import pg from 'pg';
import { runImport, type ImportKind } from '../dist/cli/import.js';
import { seedScale } from '../dist/cli/seed.js';
import { assignableCategoryIds, demoCategories } from '../dist/demo/categories.js';
import { makeCreator } from '../dist/demo/creators.js';
import { makeChannel, makeVideo } from '../dist/demo/videos.js';
import { openStore, type Store } from '../dist/store/connect.js';
import { migrateToLatest } from '../dist/store/migrate.js';

const databaseUrl = process.env.BENCH_BULK_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/creator_data_seed_bench';
const scale = Number(process.env.BENCH_SEED_SCALE ?? 0.1);
const importLines = Number(process.env.BENCH_IMPORT_LINES ?? 300_000);
const seedCounts = {
  creators: Math.round(1_000_000 * scale),
  channels: Math.round(200_000 * scale),
  videos: Math.round(2_000_000 * scale),
  live: Math.round(20_000 * scale),
};

const rate = (rows: number, seconds: number) => Math.round(rows / seconds).toLocaleString('en-US');
const since = (started: number) => (performance.now() - started) / 1000;

async function adminQuery(statement: string): Promise<void> {
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

const databaseName = () => `"${new URL(databaseUrl).pathname.slice(1).replace(/"/g, '')}"`;

/** A fresh, migrated database: every table empty. */
async function freshStore(): Promise<Store> {
  await adminQuery(`DROP DATABASE IF EXISTS ${databaseName()} WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE ${databaseName()}`);
  const store = await openStore({ databaseUrl });
  await migrateToLatest(store.db);
  return store;
}

/** Forwards progress to stderr and keeps it, for the summary. */
function progress() {
  let text = '';
  const stream = new Writable({
    // Done at once: a write still buffered here would be missing from the summary.
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      process.stderr.write(chunk);
      done();
    },
  });
  return { stream, seconds: (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN) };
}

async function benchSeed(summary: string[]): Promise<void> {
  const store = await freshStore();
  try {
    const log = progress();
    const started = performance.now();
    const inserted = await seedScale(store, seedCounts, log.stream);
    const total = since(started);
    const rows = inserted.creators + inserted.channels + inserted.videos + inserted.live;
    summary.push(`seed ${JSON.stringify(seedCounts)}: ${total.toFixed(1)} s in all (${rate(rows, total)} rows/s)`);
    for (const label of ['channels', 'videos', 'creators', 'live streams']) {
      const load = log.seconds(new RegExp(`^seed: ${label}: [\\d,]+ rows inserted in ([\\d.]+) s$`, 'm'));
      const indexes = log.seconds(new RegExp(`^seed: ${label}: \\d+ indexes built in ([\\d.]+) s$`, 'm'));
      const vacuum = log.seconds(new RegExp(`^seed: ${label}: vacuumed and analysed in ([\\d.]+) s$`, 'm'));
      summary.push(`  ${label}: ${load.toFixed(1)} s, of which index builds ${indexes.toFixed(1)} s, vacuum and analyse ${vacuum.toFixed(1)} s`);
    }
  } finally {
    await store.close();
  }
}

async function writeLines(path: string, count: number, record: (index: number) => unknown): Promise<void> {
  const out = createWriteStream(path);
  for (let index = 0; index < count; index++) {
    if (!out.write(`${JSON.stringify(record(index))}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
  // On disk before any import is timed: the kernel writing the files back competed with the
  // imports for the disk (creators streamed 37,600 lines/s right after writing, 51,000 without).
  const handle = await open(path, 'r');
  await handle.sync();
  await handle.close();
}

async function benchImport(summary: string[]): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'creator-data-bench-'));
  const store = await freshStore();
  try {
    process.stderr.write(`bench: writing ${importLines.toLocaleString('en-US')}-line NDJSON files to ${folder}\n`);
    const categories = demoCategories();
    const categoryIds = assignableCategoryIds(categories);
    const channels = Array.from({ length: Math.max(1, Math.round(importLines / 10)) }, (_, i) => makeChannel(`bench:channel:${i}`, `UCbench${i}`));
    const file = (kind: ImportKind) => join(folder, `${kind}.ndjson`);
    await writeLines(file('categories'), categories.length, (i) => categories[i]);
    await writeLines(file('creators'), importLines, (i) => makeCreator(`bench:creator:${i}`, `4${i}`, i, categoryIds));
    await writeLines(file('channels'), channels.length, (i) => channels[i].record);
    await writeLines(file('videos'), importLines, (i) => makeVideo(`bench:video:${i}`, `bv${i}`, channels[i % channels.length], i));

    const run = async (kind: ImportKind, lines: number, what: string) => {
      // The step before's writes (the seed, an index build) are not checkpointed on this import's time.
      await adminQuery('CHECKPOINT');
      const log = progress();
      const started = performance.now();
      const result = await runImport(store, kind, createReadStream(file(kind)), log.stream);
      const total = since(started);
      // A rejected line is not loaded: its rate would measure a different import.
      if (result.rejected > 0) throw new Error(`import ${kind} (${what}): ${result.rejected} lines rejected (see above)`);
      const indexes = log.seconds(new RegExp(`^import ${kind}: \\d+ indexes built in ([\\d.]+) s$`, 'm'));
      const vacuum = log.seconds(new RegExp(`^import ${kind}: vacuumed and analysed in ([\\d.]+) s$`, 'm'));
      const streaming = total - (Number.isNaN(indexes) ? 0 : indexes) - vacuum;
      summary.push(
        `import ${kind} (${what}): ${lines.toLocaleString('en-US')} lines, ${result.loaded.toLocaleString('en-US')} loaded, ` +
          `${total.toFixed(1)} s = ${rate(lines, total)} lines/s; streaming ${rate(lines, streaming)} lines/s` +
          (Number.isNaN(indexes) ? '' : `, index builds ${indexes.toFixed(1)} s`) +
          `, vacuum and analyse ${vacuum.toFixed(1)} s`,
      );
    };
    // References first, as docs/cli.md asks: a creator's categories, a video's channel.
    await run('categories', categories.length, 'empty table');
    await run('creators', importLines, 'empty table');
    await run('channels', channels.length, 'empty table');
    await run('videos', importLines, 'empty table');
    await run('creators', importLines, 'the same file again');
    await run('videos', importLines, 'the same file again');
  } finally {
    await store.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const summary: string[] = [];
  try {
    await benchSeed(summary);
    await benchImport(summary);
  } finally {
    if (!process.env.BENCH_KEEP) await adminQuery(`DROP DATABASE IF EXISTS ${databaseName()} WITH (FORCE)`);
  }
  process.stdout.write(`${summary.join('\n')}\n`);
}

await main();

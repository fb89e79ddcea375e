import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { seedDemo } from '../src/cli/seed.js';
import { loadConfig } from '../src/config.js';
import type { FacetRequest } from '../src/domain/facets.js';
import type { ChannelIndexRow, CreatorIndexRow, VideoIndexRow } from '../src/domain/index-rows.js';
import type { CreatorSearch } from '../src/inputs/creators.js';
import { defaultVideoSort, type VideoSearch, videosArgs } from '../src/inputs/videos.js';
import { creatorOrders, videoSorts } from '../src/domain/orders.js';
import { cursorsOf } from '../src/search/tables/paging.js';
import type { Logger } from '../src/observability/log.js';
import { SearchIndex } from '../src/search/runtime/search-index.js';
import { SNAPSHOT_FORMAT, snapshotPath } from '../src/search/runtime/snapshots.js';
import { createSearch } from '../src/search/runtime/thread.js';
import { ChangePruner, pruneChanges, transactionHorizon } from '../src/store/changes.js';
import { channelIndexRows } from '../src/store/channels.js';
import { creatorIndexRows } from '../src/store/creators.js';
import { videoIndexRows } from '../src/store/videos.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { pick, randomCreatorSearch, randomPage, randomVideoFilter } from './support/random-searches.js';
import { createTestStore, type TestStore } from './support/store.js';

// The index written to disk and read back (src/search/runtime/snapshots.ts): a start from a
// snapshot, caught up from the change feed, answers exactly what an index built from the database
// answers; a snapshot that is damaged, of another format, of another database or older than the
// feed's retention is detected and the index rebuilt from the database instead, never used.

let store: TestStore;
let root: string;
let rows: CreatorIndexRow[];
let categoryIds: number[];
let videoRows: VideoIndexRow[];
let channelRows: ChannelIndexRow[];

interface Line {
  level: string;
  message: string;
  details?: Record<string, unknown>;
}

function recorder(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (message: string, details?: Record<string, unknown>) => void lines.push({ level, message, details });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** An index over `db` (the test store unless given); snapshots in `dir` unless it is null. */
function indexOver(dir: string | null, log = recorder(), db = store.db): SearchIndex {
  return new SearchIndex({ db, log, pollMs: 3_600_000, ...(dir === null ? {} : { snapshots: { dir, everyMs: 0 } }) });
}

/** Started, and stopped when the test ends: one a failed check left following the feed would hold it for the next tests. */
async function started(index: SearchIndex): Promise<SearchIndex> {
  onTestFinished(() => index.stop());
  await index.start();
  return index;
}

const creatorFacets: FacetRequest<'country' | 'followerCount' | 'category'>[] = [
  { facet: 'country', excludeOwn: false },
  { facet: 'category', excludeOwn: true },
  { facet: 'followerCount', excludeOwn: true, edges: [0, 1_000, 100_000, 1_000_000] },
];
const videoFacets: FacetRequest<'category' | 'channelCountry' | 'month'>[] = [
  { facet: 'category', excludeOwn: false },
  { facet: 'channelCountry', excludeOwn: true },
  { facet: 'month', excludeOwn: false },
];

/**
 * Random creator and video searches (with facets, and one page on from the first's last cursor)
 * asked of both indexes: every answer must be the same, ids, places, totals, flags and facets.
 */
async function expectSameAnswers(loaded: SearchIndex, built: SearchIndex, seed: string, runs: number): Promise<number> {
  const rng = seededRandom(seed);
  let compared = 0;
  for (let run = 0; run < runs; run++) {
    const search = await randomCreatorSearch(rng, store.db, rows, categoryIds);
    if (search) {
      const page = randomPage(rng);
      const answer = loaded.creators(search, page, creatorFacets);
      expect(answer, JSON.stringify({ search, page })).toEqual(built.creators(search, page, creatorFacets));
      if (answer && answer.ids.length > 0 && page.offset == null) {
        const next = { first: 10, after: cursorsOf(creatorOrders[search.sort], answer).at(-1) };
        expect(loaded.creators(search, next), JSON.stringify({ search, next })).toEqual(built.creators(search, next));
      }
      compared++;
    }
    const videos = videosArgs.safeParse({ filter: randomVideoFilter(rng, videoRows, channelRows), sortBy: pick(rng, [undefined, ...videoSorts]) });
    if (videos.success) {
      const filter = videos.data.filter ?? {};
      const search: VideoSearch = { filter, sort: videos.data.sortBy ?? defaultVideoSort(filter) };
      const page = randomPage(rng);
      expect(loaded.videos(search, page, videoFacets), JSON.stringify({ search, page })).toEqual(built.videos(search, page, videoFacets));
      compared++;
    }
  }
  return compared;
}

/** Rows added, changed and removed in each table the snapshot holds (through the change feed's triggers). */
async function writeSome(tag: string): Promise<void> {
  await sql`UPDATE creators SET follower_count = follower_count * 3 + 11, username = username || ${tag}
            WHERE user_id IN (SELECT user_id FROM creators ORDER BY user_id LIMIT 40)`.execute(store.db);
  await sql`DELETE FROM creators WHERE user_id IN (SELECT user_id FROM creators ORDER BY user_id DESC LIMIT 5)`.execute(store.db);
  await sql`UPDATE channels SET country = 'JP', follower_count = follower_count + 1
            WHERE channel_id IN (SELECT channel_id FROM channels ORDER BY channel_id LIMIT 5)`.execute(store.db);
  await sql`UPDATE videos SET play_count = play_count + 1000, title = title || ${tag}
            WHERE video_id IN (SELECT video_id FROM videos ORDER BY video_id LIMIT 30)`.execute(store.db);
  await sql`DELETE FROM videos WHERE video_id IN (SELECT video_id FROM videos ORDER BY video_id DESC LIMIT 7)`.execute(store.db);
  await store.db.transaction().execute(async (trx) => {
    await sql`CREATE TEMP TABLE new_videos ON COMMIT DROP AS SELECT * FROM videos ORDER BY video_id LIMIT 12`.execute(trx);
    await sql`UPDATE new_videos SET video_id = ${tag} || video_id, create_at = create_at + interval '3 days'`.execute(trx);
    await sql`INSERT INTO videos SELECT * FROM new_videos`.execute(trx);
  });
}

/**
 * The transaction horizon once it is above `xid` (by default every change in this database's
 * feed). Transaction ids are the cluster's: a write transaction another test file keeps open in a
 * database of its own holds the horizon back, so a test that needs its changes below a sample
 * waits for them to be (as the pruner, rightly, would).
 */
async function settledHorizon(xid?: bigint): Promise<string> {
  const { rows } = await sql<{ newest: string | null }>`SELECT max(txid)::text AS newest FROM catalog_changes`.execute(store.db);
  const above = xid ?? BigInt(rows[0].newest ?? 0);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const horizon = await transactionHorizon(store.db);
    if (BigInt(horizon) > above) return horizon;
    if (Date.now() > deadline) throw new Error(`another transaction in the cluster held the horizon at or below ${above} for 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  store = await createTestStore();
  await seedDemo(store.db, { write: () => true } as unknown as NodeJS.WritableStream);
  rows = await creatorIndexRows(store.db, null, 1_000_000);
  categoryIds = (await store.db.selectFrom('categories').select(['id', 'level']).execute()).filter((c) => c.level > 1).map((c) => c.id);
  videoRows = await videoIndexRows(store.db, null, 1_000_000);
  channelRows = await channelIndexRows(store.db, null, 1_000_000);
  root = mkdtempSync(join(tmpdir(), 'cds-snapshots-'));
}, 120_000);

afterAll(async () => {
  await store?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('search index snapshots', () => {
  let dir: string;
  let good: Buffer;

  it('are written after a full load, and a start from one, caught up from the feed, answers as a new build does', { timeout: 300_000 }, async () => {
    dir = join(root, 'main');
    const first = await started(indexOver(dir));
    expect(first.stats().loadedFrom).toBe('database');
    await first.stop();
    const path = await snapshotPath(store.db, dir);
    expect(existsSync(path)).toBe(true);
    good = readFileSync(path);

    await writeSome('after-');
    const log = recorder();
    // While it catches up, the snapshot's index is not ready and answers nothing (SQL does).
    const duringCatchUp: unknown[] = [];
    const search: CreatorSearch = { platform: 'twitter', filter: {}, categoryIds: null, sort: 'FOLLOWER_COUNT' };
    const loaded: SearchIndex = new SearchIndex({
      db: store.db,
      log,
      pollMs: 3_600_000,
      snapshots: { dir, everyMs: 0 },
      onRowsChanged: () => void duringCatchUp.push([loaded.ready, loaded.creators(search, { first: 1 })]),
    });
    await loaded.start();
    expect(duringCatchUp.length).toBeGreaterThan(1);
    expect(new Set(duringCatchUp.map((seen) => JSON.stringify(seen)))).toEqual(new Set(['[false,null]']));
    expect(loaded.creators(search, { first: 1 })?.total).toBeGreaterThan(0);
    const built = await started(indexOver(null));
    expect(loaded.stats().loadedFrom).toBe('snapshot');
    expect(built.stats().loadedFrom).toBe('database');
    expect(log.lines.find((line) => line.message === 'search index loaded from its snapshot')?.details).toMatchObject({ bytes: good.length });
    expect(loaded.stats()).toMatchObject({ creators: built.stats().creators, videos: built.stats().videos, channels: built.stats().channels });
    // The writes are in: the changed title is found, and answers match the new build's.
    const changed = loaded.videos({ filter: { query: 'after-' }, sort: 'NEWEST' }, { first: 50 });
    expect(changed?.total).toBeGreaterThanOrEqual(30);
    expect(await expectSameAnswers(loaded, built, "snapshot", 120)).toBeGreaterThan(150);
    await loaded.stop();
    await built.stop();
  });

  it('are written again at shutdown once the index moved on, and a start reads that one', { timeout: 120_000 }, async () => {
    const path = await snapshotPath(store.db, dir);
    const before = readFileSync(path);
    const log = recorder();
    const index = await started(indexOver(dir, log));
    await writeSome('shutdown-');
    await index.refresh();
    await index.stop();
    expect(log.lines.find((line) => line.message === 'search index snapshot written')?.details).toMatchObject({ why: 'at shutdown' });
    expect(readFileSync(path).equals(before)).toBe(false);

    // Nothing changed since: the next stop leaves the file alone.
    const again = recorder();
    const next = await started(indexOver(dir, again));
    expect(next.stats().loadedFrom).toBe('snapshot');
    const found = next.videos({ filter: { query: 'shutdown-' }, sort: 'NEWEST' }, { first: 50 });
    expect(found?.total).toBeGreaterThanOrEqual(30);
    await next.stop();
    expect(again.lines.filter((line) => line.message === 'search index snapshot written')).toEqual([]);
    good = readFileSync(path);
  });

  it('load nothing without a snapshot file: the index is built from the database', async () => {
    const log = recorder();
    const index = await started(indexOver(join(root, 'empty'), log));
    expect(index.stats().loadedFrom).toBe('database');
    expect(log.lines.map((line) => line.message)).toContain('search index: no snapshot yet; loading from the database');
    await index.stop();
  });

  const damaged: [string, (file: Buffer) => Buffer, RegExp][] = [
    ['a byte changed in the middle', (file) => {
      const copy = Buffer.from(file);
      copy[Math.floor(copy.length / 2)] ^= 0x5a;
      return copy;
    }, /checksum|add up|kind|past the end|past its|inconsistent/],
    ['a byte changed in its last record', (file) => {
      const copy = Buffer.from(file);
      copy[copy.length - 40] ^= 0x01;
      return copy;
    }, /checksum/],
    ['cut short', (file) => file.subarray(0, Math.floor(file.length * 0.6)), /end|past the end|add up/],
    ['cut by its trailer only', (file) => file.subarray(0, file.length - 10), /end|trailer|length/],
    ['of another format version', (file) => {
      const copy = Buffer.from(file);
      copy.writeUInt32LE(SNAPSHOT_FORMAT + 1, 8);
      return copy;
    }, new RegExp(`format ${SNAPSHOT_FORMAT + 1}, not ${SNAPSHOT_FORMAT}`)],
    ['not a snapshot at all', () => Buffer.from('{"hello": "world"}\n'.repeat(10)), /not a snapshot|shorter/],
  ];

  it.each(damaged)('are refused when %s; the index is rebuilt from the database, answers exact', { timeout: 120_000 }, async (name, damage, reason) => {
    const caseDir = join(root, name.replace(/\W+/g, '-'));
    const path = await snapshotPath(store.db, caseDir);
    rmSync(caseDir, { recursive: true, force: true });
    await import('node:fs').then((fs) => fs.mkdirSync(caseDir, { recursive: true }));
    writeFileSync(path, damage(good));
    const log = recorder();
    const index = await started(indexOver(caseDir, log));
    expect(index.stats().loadedFrom).toBe('database');
    const refusal = log.lines.find((line) => line.message === 'search index snapshot not used; loading from the database');
    expect(refusal?.level).toBe('warn');
    expect(String(refusal?.details?.reason)).toMatch(reason);
    // The refused file is replaced by a whole one, which the next start uses.
    expect(readFileSync(path).equals(good)).toBe(false);
    const built = await started(indexOver(null));
    expect(await expectSameAnswers(index, built, "refused", 15)).toBeGreaterThan(15);
    await index.stop();
    await built.stop();
    const next = await started(indexOver(caseDir));
    expect(next.stats().loadedFrom).toBe('snapshot');
    await next.stop();
  });

  it("are refused when another database's snapshot is in the folder", { timeout: 180_000 }, async () => {
    const other = await createTestStore();
    try {
      await seedDemo(other.db, { write: () => true } as unknown as NodeJS.WritableStream);
      await sql`UPDATE creators SET follower_count = follower_count + 1 WHERE user_id IN (SELECT user_id FROM creators ORDER BY user_id LIMIT 3)`.execute(other.db);
      const shared = join(root, 'shared');
      const ours = await started(indexOver(shared));
      await ours.stop();
      // On one server the files are named after each database; the same name (two servers, or the
      // embedded store's one database) is the case to refuse.
      const theirs = await snapshotPath(other.db, shared);
      const mine = await snapshotPath(store.db, shared);
      if (theirs !== mine) copyFileSync(mine, theirs);
      const log = recorder();
      const index = await started(indexOver(shared, log, other.db));
      expect(index.stats().loadedFrom).toBe('database');
      const refusal = log.lines.find((line) => line.message === 'search index snapshot not used; loading from the database');
      expect(String(refusal?.details?.reason), basename(theirs)).toMatch(/another database/);
      const built = await started(indexOver(null, recorder(), other.db));
      const counts = ({ creators, videos, channels, liveStreams }: ReturnType<SearchIndex['stats']>) => ({ creators, videos, channels, liveStreams });
      expect(counts(index.stats())).toEqual(counts(built.stats()));
      await index.stop();
      await built.stop();
    } finally {
      await other.close();
    }
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('are written and read by the index in its own thread (PostgreSQL)', { timeout: 120_000 }, async () => {
    const threadDir = join(root, 'thread');
    const first = createSearch({ store, log: recorder(), pollMs: 60_000, thread: true, snapshots: { dir: threadDir, everyMs: 0 } });
    await first.start();
    expect(first.stats().loadedFrom).toBe('database');
    await first.stop();
    const second = createSearch({ store, log: recorder(), pollMs: 60_000, thread: true, snapshots: { dir: threadDir, everyMs: 0 } });
    await second.start();
    expect(second.stats().loadedFrom).toBe('snapshot');
    const { rows: counted } = await sql<{ n: string }>`SELECT count(*) AS n FROM creators`.execute(store.db);
    expect(second.stats().creators).toBe(Number(counted[0].n));
    await second.stop();
  });

  it('are written periodically while the index follows the feed', { timeout: 60_000 }, async () => {
    const log = recorder();
    const index = await started(new SearchIndex({ db: store.db, log, pollMs: 50, snapshots: { dir: join(root, 'periodic'), everyMs: 1 } }));
    await writeSome('periodic-');
    const written = () => log.lines.find((line) => line.message === 'search index snapshot written' && line.details?.why === 'periodic');
    for (const until = Date.now() + 20_000; !written() && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 50));
    await index.stop();
    expect(written()).toBeDefined();
    const next = await started(indexOver(join(root, 'periodic')));
    expect(next.stats().loadedFrom).toBe('snapshot');
    expect(next.videos({ filter: { query: 'periodic-' }, sort: 'NEWEST' }, { first: 50 })?.total).toBeGreaterThanOrEqual(30);
    await next.stop();
  });

  it('that cannot be written leave the index serving, with a warning', { timeout: 60_000 }, async () => {
    // A folder under a regular file: mkdir fails with ENOTDIR, as on a full or read-only disk.
    const blocker = join(root, 'not-a-folder');
    writeFileSync(blocker, 'x');
    const log = recorder();
    const index = await started(indexOver(join(blocker, 'snapshots'), log));
    expect(index.ready).toBe(true);
    expect(index.stats().loadedFrom).toBe('database');
    expect(log.lines.find((line) => line.message === 'search index snapshot not written')?.level).toBe('warn');
    expect(index.creators({ platform: 'twitter', filter: {}, categoryIds: null, sort: 'FOLLOWER_COUNT' }, { first: 1 })?.total).toBeGreaterThan(0);
    await index.stop();
  });

  it('are neither loaded nor written when the index stops during its load: the load is abandoned', { timeout: 60_000 }, async () => {
    // SIGTERM during a start's load (tens of seconds at 1M rows, minutes at 10M) waited for the
    // whole load and its write, and the thread was cut off after 60 s with nothing written.
    /** An index over `dir` stopped as soon as it starts: whether it became ready, and what it logged. */
    const stoppedAtStart = async (dir: string) => {
      const log = recorder();
      const index = indexOver(dir, log);
      const starting = index.start();
      await index.stop();
      await starting;
      return { ready: index.ready, lines: log.lines };
    };
    const fresh = join(root, 'stopped-fresh');
    const loading = await stoppedAtStart(fresh);
    expect(loading.ready).toBe(false);
    expect(existsSync(await snapshotPath(store.db, fresh))).toBe(false);
    expect(loading.lines.filter((line) => line.level !== 'info' || line.message === 'search index loaded')).toEqual([]);

    // Stopped while catching up from a snapshot: never ready with the file's moment.
    const saved = join(root, 'stopped-snapshot');
    mkdirSync(saved, { recursive: true });
    writeFileSync(await snapshotPath(store.db, saved), good);
    const catching = await stoppedAtStart(saved);
    expect(catching.ready).toBe(false);
    expect(catching.lines.filter((line) => line.level !== 'info' || /^search index (loaded|snapshot written)/.test(line.message))).toEqual([]);
  });

  it("catch up on a change whose transaction began before the retention, though another process pruned the feed", { timeout: 120_000 }, async () => {
    // A change's changed_at is its transaction's start: a transaction open for 20 minutes commits
    // changes that look 20 minutes old. Pruning by that time alone deleted them at the next
    // prune, before a process starting from its snapshot had read them, and it kept the row's
    // old values (it was found at the bottom of the follower order, not at the top).
    const path = await snapshotPath(store.db, dir);
    writeFileSync(path, good);
    const { rows: lowest } = await sql<{ user_id: string }>`
      SELECT user_id FROM creators WHERE platform = 'twitter' ORDER BY follower_count, user_id LIMIT 1`.execute(store.db);
    const target = lowest[0].user_id;
    await store.db.transaction().execute(async (trx) => {
      await sql`UPDATE creators SET follower_count = 9000000000000000 WHERE platform = 'twitter' AND user_id = ${target}`.execute(trx);
      await sql`UPDATE catalog_changes SET changed_at = now() - interval '20 minutes' WHERE txid = pg_current_xact_id()`.execute(trx);
    });
    await writeSome('later-');
    // Another process follows the feed, and prunes it at its first read.
    const other = await started(indexOver(null));
    await other.refresh();
    await other.stop();
    const index = await started(indexOver(dir));
    expect(index.stats().loadedFrom).toBe('snapshot');
    const top = index.creators({ platform: 'twitter', filter: {}, categoryIds: null, sort: 'FOLLOWER_COUNT' }, { first: 1 });
    expect(top?.ids).toEqual([target]);
    await index.stop();
  });

  describe("the change feed's pruning", () => {
    const count = async (where = sql`true`) => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM catalog_changes WHERE ${where}`.execute(store.db)).rows[0].n);
    const samples = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM change_horizons`.execute(store.db)).rows[0].n);
    /** Every sample taken `minutes` earlier than it was, as if the pruners had run that long ago. */
    const age = (minutes: number) => sql`UPDATE change_horizons SET sampled_at = sampled_at - make_interval(mins => ${minutes})`.execute(store.db);
    // Each test starts and ends with no sample: the snapshot tests around them expect none.
    const noSamples = () => sql`DELETE FROM change_horizons`.execute(store.db);

    it('prunes on the primary once the transactions ended the retention ago, index or not, after a restart too', { timeout: 120_000 }, async () => {
      await noSamples();
      await writeSome('aged-');
      await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day'`.execute(store.db);
      const before = await count();
      // Its first run samples the transaction horizon: every change so far ended before it, but
      // only just, so nothing is pruned yet; nor at its next run, which takes no second sample
      // within the minute.
      await settledHorizon();
      const pruner = new ChangePruner(store.db);
      await pruner.prune();
      await pruner.prune();
      expect(await count()).toBe(before);
      expect(await samples()).toBe(1);
      // 16 minutes later, in a process started since (a deploy): the sample is the database's, so
      // the new process prunes up to it at its first run, all but the newest change, which
      // readers' positions name. (Kept in each process, samples made a fleet deployed more often
      // than every 15 minutes never prune.)
      await age(16);
      await new ChangePruner(store.db).prune();
      expect(await count()).toBe(1);
      // It sampled again (the newest was 16 minutes old), and kept the one it pruned with.
      expect(await samples()).toBe(2);
      await noSamples();
    });

    it('prunes with the newest sample the retention old, and deletes the older ones', { timeout: 60_000 }, async () => {
      await noSamples();
      await writeSome('sampled-');
      await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day'`.execute(store.db);
      const { rows: ids } = await sql<{ first: string; last: string }>`SELECT min(id)::text AS first, max(id)::text AS last FROM catalog_changes`.execute(store.db);
      const newest = await settledHorizon();
      // Samples of 40, 30 and 20 minutes ago, each below the changes' transactions, one of 16
      // minutes ago above them, and one of 20 seconds ago: the pruner prunes with the 16-minute
      // one, forgets the three before it, and takes no sample of its own.
      await sql`INSERT INTO change_horizons (sampled_at, horizon) VALUES
        (now() - interval '40 minutes', '1'), (now() - interval '30 minutes', '2'), (now() - interval '20 minutes', '3'),
        (now() - interval '16 minutes', ${newest}::xid8), (now() - interval '20 seconds', ${newest}::xid8)`.execute(store.db);
      await new ChangePruner(store.db).prune();
      expect(await count()).toBe(1);
      expect(await count(sql`id = ${ids[0].last}::bigint`)).toBe(1);
      const { rows: left } = await sql<{ minutes: number }>`
        SELECT floor(extract(epoch FROM now() - sampled_at) / 60)::int AS minutes FROM change_horizons ORDER BY sampled_at`.execute(store.db);
      expect(left.map((row) => row.minutes)).toEqual([16, 0]);
      await noSamples();
    });

    it('keeps a change whose transaction was still running when the horizon was sampled', { timeout: 60_000 }, async () => {
      await noSamples();
      // A transaction begun 20 minutes ago, running at a sample taken 16 minutes ago: the sample's
      // horizon is at most its id (the highest it could be is used here). Both written in SQL:
      // the embedded store has one connection, so nothing runs beside a transaction.
      const txid = await store.db.transaction().execute(async (trx) => {
        await sql`UPDATE creators SET username = username || '-long' WHERE user_id = (SELECT min(user_id) FROM creators)`.execute(trx);
        await sql`UPDATE catalog_changes SET changed_at = now() - interval '20 minutes' WHERE txid = pg_current_xact_id()`.execute(trx);
        await sql`INSERT INTO change_horizons (sampled_at, horizon) VALUES (now() - interval '16 minutes', pg_current_xact_id())`.execute(trx);
        return (await sql<{ txid: string }>`SELECT pg_current_xact_id()::text AS txid`.execute(trx)).rows[0].txid;
      });
      await writeSome('after-long-');
      await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day' WHERE txid <> ${txid}::xid8`.execute(store.db);
      await settledHorizon();
      await new ChangePruner(store.db).prune();
      // Every change of a transaction that had ended by the sample is gone; its change is kept,
      // and so are the later ones (their transactions had not even begun).
      expect(await count(sql`txid < ${txid}::xid8`)).toBe(0);
      expect(await count(sql`txid = ${txid}::xid8`)).toBeGreaterThan(0);
      // Once a sample taken after its commit is the retention old, it is pruned too.
      await age(16);
      await new ChangePruner(store.db).prune();
      expect(await count(sql`txid = ${txid}::xid8`)).toBe(0);
      await noSamples();
    });

    it.runIf(process.env.TEST_DATABASE_URL)(
      'keeps a change whose transaction is open in another session while the pruner samples (PostgreSQL)',
      { timeout: 60_000 },
      async () => {
        await noSamples();
        const session = new pg.Client({ connectionString: store.databaseUrl });
        await session.connect();
        let txid: string;
        try {
          await session.query('BEGIN');
          await session.query(`UPDATE creators SET username = username || '-open' WHERE user_id = (SELECT max(user_id) FROM creators)`);
          txid = (await session.query<{ txid: string }>('SELECT pg_current_xact_id()::text AS txid')).rows[0].txid;
          // Every transaction before it ended: the sample is its id, no lower.
          await settledHorizon(BigInt(txid) - 1n);
          await new ChangePruner(store.db).prune();
          await session.query('COMMIT');
        } finally {
          await session.end();
        }
        await writeSome('after-open-');
        await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day'`.execute(store.db);
        await age(16);
        await settledHorizon();
        await new ChangePruner(store.db).prune();
        expect(await count(sql`txid = ${txid}::xid8`)).toBeGreaterThan(0);
        expect(await count(sql`txid < ${txid}::xid8`)).toBe(0);
        await age(16);
        await new ChangePruner(store.db).prune();
        expect(await count(sql`txid = ${txid}::xid8`)).toBe(0);
        await noSamples();
      },
    );

    it.runIf(process.env.TEST_DATABASE_URL)('is run by several processes at once: one sample, one pruning (PostgreSQL)', { timeout: 60_000 }, async () => {
      await noSamples();
      await writeSome('together-');
      await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day'`.execute(store.db);
      await sql`INSERT INTO change_horizons (sampled_at, horizon) VALUES (now() - interval '16 minutes', ${await settledHorizon()}::xid8)`.execute(store.db);
      await Promise.all(Array.from({ length: 4 }, () => new ChangePruner(store.db).prune()));
      expect(await count()).toBe(1);
      // The old sample and one new one, however many ran.
      expect(await samples()).toBe(2);
      await noSamples();
    });
  });

  describe('a position the feed was pruned past', () => {
    const videoTotal = (index: SearchIndex, query: string) => index.videos({ filter: { query }, sort: 'NEWEST' }, { first: 50 })?.total ?? 0;
    /** Readers holding the feed (a load until its first read). */
    const readers = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM change_readers`.execute(store.db)).rows[0].n);
    /** A sample "taken `minutes` ago" of the horizon as it is now: as if what was written since the position were that old. */
    const sampleNow = async (minutes: number) =>
      sql`INSERT INTO change_horizons (sampled_at, horizon) VALUES (now() - make_interval(mins => ${minutes}), ${await settledHorizon()}::xid8)`.execute(store.db);

    it('is not found after a load longer than the retention with nothing pruned after it: the load is kept, its snapshot used', { timeout: 120_000 }, async () => {
      await sql`DELETE FROM change_horizons`.execute(store.db);
      const saved = join(root, 'long-load');
      const log = recorder();
      const slow = await started(indexOver(saved, log));
      // The retention passes with nothing written (a 10M-row load takes 20-25 minutes on a slow
      // machine): a sample 16 minutes old above its position, and a pruning, which deletes no
      // change after it. Its first read keeps the load; a restart uses the snapshot it wrote.
      // Other work moves the transaction horizon on meanwhile (as serving processes' samples do).
      await store.db.transaction().execute((trx) => sql`SELECT pg_current_xact_id()`.execute(trx));
      await sampleNow(16);
      await new ChangePruner(store.db).prune();
      await slow.refresh();
      expect(log.lines.filter((line) => line.level !== 'info')).toEqual([]);
      expect(slow.stats().loadedFrom).toBe('database');
      await slow.stop();
      const restarted = await started(indexOver(saved));
      expect(restarted.stats().loadedFrom).toBe('snapshot');
      await restarted.stop();
      await sql`DELETE FROM change_horizons`.execute(store.db);
    });

    it('is never reached past the lease while the load renews its hold', { timeout: 120_000 }, async () => {
      // Renewed every 100 ms here (every minute by default): a hold last renewed a day ago is
      // renewed again before the pruning looks, so the pruning keeps it and what it has yet to read.
      const index = await started(new SearchIndex({ db: store.db, log: recorder(), pollMs: 3_600_000, feedRenewMs: 100 }));
      const renewedAgo = async () =>
        Number((await sql<{ s: number }>`SELECT extract(epoch FROM now() - renewed_at)::float8 AS s FROM change_readers`.execute(store.db)).rows[0]?.s ?? NaN);
      // Aged and read in one statement: a renewal may land between two (one did, on a busy CI run).
      const aged = await sql<{ s: number }>`UPDATE change_readers SET renewed_at = now() - interval '1 day'
        RETURNING extract(epoch FROM now() - renewed_at)::float8 AS s`.execute(store.db);
      expect(aged.rows.map((row) => row.s)).toEqual([expect.any(Number)]);
      expect(aged.rows[0].s).toBeGreaterThan(86_000);
      const deadline = Date.now() + 5_000;
      while ((await renewedAgo()) > 60 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await renewedAgo(), 'renewed').toBeLessThan(60);
      await new ChangePruner(store.db).prune();
      expect(await readers(), 'still held after the pruning').toBe(1);
      await index.refresh();
      expect(await readers(), 'released at the first read').toBe(0);
    });

    it('is not held again by a renewal sent as the load released its hold', { timeout: 120_000 }, async () => {
      // Renewed every millisecond: a renewal is often on its way when the first read releases (a
      // release that does not wait for it left the reader registered in most runs of 40 rounds).
      for (let round = 0; round < 40; round++) {
        const index = await started(new SearchIndex({ db: store.db, log: recorder(), pollMs: 3_600_000, feedRenewMs: 1 }));
        await new Promise((resolve) => setTimeout(resolve, 20));
        await index.refresh();
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await readers(), `released, round ${round}`).toBe(0);
        await index.stop();
      }
    });

    it('is found at the first read after a full load, which is then done again, with a warning', { timeout: 120_000 }, async () => {
      await sql`DELETE FROM change_horizons`.execute(store.db);
      // Pruning while a load runs is harmless when the load is shorter than the retention: the
      // samples the retention old predate its position. The first read checks, and applies.
      await sampleNow(16);
      const log = recorder();
      const index = await started(indexOver(null, log));
      await writeSome('seen-');
      await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day'`.execute(store.db);
      await new ChangePruner(store.db).prune();
      await index.refresh();
      expect(log.lines.filter((line) => line.level !== 'info')).toEqual([]);
      expect(videoTotal(index, 'seen-')).toBeGreaterThanOrEqual(30);
      await index.stop();

      // A load longer than the retention (20 minutes at 10M rows on a slow machine): rows written
      // while it ran, sampled, and pruned the retention later, before its first read, its hold on
      // the feed lapsed (renewals failed for the lease: the database away).
      await sql`DELETE FROM change_horizons`.execute(store.db);
      const slowLog = recorder();
      const slow = await started(indexOver(null, slowLog));
      await writeSome('unseen-');
      await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day'`.execute(store.db);
      await sampleNow(16);
      await sql`UPDATE change_readers SET renewed_at = now() - make_interval(mins => 6)`.execute(store.db);
      await new ChangePruner(store.db).prune();
      expect(await readers(), 'a lapsed hold is deleted').toBe(0);
      expect(Number((await sql<{ n: string }>`SELECT count(*) AS n FROM catalog_changes`.execute(store.db)).rows[0].n)).toBe(1);
      // Read from its position, the feed now holds one of those changes: the index served the
      // other rows' old values until they changed again. It loads again instead.
      store.queries.length = 0;
      await slow.refresh();
      expect(slowLog.lines.filter((line) => line.level !== 'info').map((line) => line.message)).toEqual([
        'search index: the change feed was pruned past the position of its load (a load longer than the retention); loading again from the database',
      ]);
      expect(videoTotal(slow, 'unseen-')).toBeGreaterThanOrEqual(30);
      // One lookup per load, at its first read, not one per read: the reload's first read checks
      // (that load was quick: nothing is above its position), the next ones do not.
      await slow.refresh();
      await slow.refresh();
      expect(store.queries.filter((query) => query.includes('change_pruned'))).toHaveLength(2);
      expect(slowLog.lines.filter((line) => line.level !== 'info')).toHaveLength(1);
      await slow.stop();
      await sql`DELETE FROM change_horizons`.execute(store.db);
    });

    it('is never reached while a load holds the feed: what it has yet to read is kept until its first read', { timeout: 120_000 }, async () => {
      await sql`DELETE FROM change_horizons`.execute(store.db);
      const changes = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM catalog_changes`.execute(store.db)).rows[0].n);
      const log = recorder();
      const slow = await started(indexOver(null, log));
      const held = (await sql<{ lastId: string }>`SELECT last_id::text AS "lastId" FROM change_readers`.execute(store.db)).rows;
      expect(held, 'the load holds the feed').toHaveLength(1);
      const since = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM catalog_changes WHERE id > ${held[0].lastId}::bigint`.execute(store.db)).rows[0].n);
      // The same long load as above, its hold renewed: the pruning deletes none of what it has yet
      // to read (what came before its position may go).
      await writeSome('held-');
      await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day'`.execute(store.db);
      await sampleNow(16);
      const written = await since();
      expect(written).toBeGreaterThan(1);
      await new ChangePruner(store.db).prune();
      expect(await since(), 'kept for the load').toBe(written);
      // Its first read finds the feed whole: the changes applied, no second load, the hold released.
      await slow.refresh();
      expect(log.lines.filter((line) => line.level !== 'info')).toEqual([]);
      expect(log.lines.filter((line) => line.message === 'search index loaded')).toHaveLength(1);
      expect(videoTotal(slow, 'held-')).toBeGreaterThanOrEqual(30);
      expect(await readers(), 'released at the first read').toBe(0);
      // Released, they are pruned as any read change is (all but the newest).
      await new ChangePruner(store.db).prune();
      expect(await changes()).toBe(1);
      await slow.stop();
      await sql`DELETE FROM change_horizons`.execute(store.db);
    });

    it("refuses a snapshot file whose own change is still in the feed but later ones were pruned", { timeout: 120_000 }, async () => {
      await sql`DELETE FROM change_horizons`.execute(store.db);
      // What the feed holds now is recent (the tests before aged it): the file's own change stays.
      await sql`UPDATE catalog_changes SET changed_at = now()`.execute(store.db);
      const saved = join(root, 'pruned-after');
      const writer = await started(indexOver(saved));
      await writer.stop();
      const { rows } = await sql<{ last: string }>`SELECT max(id)::text AS last FROM catalog_changes`.execute(store.db);
      // Written, sampled and pruned after the file's position, which itself stays in the feed:
      // its fingerprint still matches, so only the horizon tells.
      await writeSome('after-file-');
      await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day' WHERE id > ${rows[0].last}::bigint`.execute(store.db);
      await sampleNow(16);
      await new ChangePruner(store.db).prune();
      expect(Number((await sql<{ n: string }>`SELECT count(*) AS n FROM catalog_changes WHERE id = ${rows[0].last}::bigint`.execute(store.db)).rows[0].n)).toBe(1);
      const log = recorder();
      const index = await started(indexOver(saved, log));
      expect(index.stats().loadedFrom).toBe('database');
      const refusal = log.lines.find((line) => line.message === 'search index snapshot not used; loading from the database');
      expect(String(refusal?.details?.reason)).toMatch(/pruned past its position/);
      expect(videoTotal(index, 'after-file-')).toBeGreaterThanOrEqual(30);
      await index.stop();
      await sql`DELETE FROM change_horizons`.execute(store.db);
    });
  });

  // Last: it empties the test database's change feed.
  it('are refused once the change feed was pruned past them', { timeout: 120_000 }, async () => {
    const path = await snapshotPath(store.db, dir);
    writeFileSync(path, good);
    await writeSome('pruned-');
    await sql`UPDATE catalog_changes SET changed_at = now() - interval '1 day'`.execute(store.db);
    await pruneChanges(store.db, await settledHorizon());
    const log = recorder();
    const index = await started(indexOver(dir, log));
    expect(index.stats().loadedFrom).toBe('database');
    const refusal = log.lines.find((line) => line.message === 'search index snapshot not used; loading from the database');
    expect(String(refusal?.details?.reason)).toMatch(/no longer holds its position/);
    const found = index.videos({ filter: { query: 'pruned-' }, sort: 'NEWEST' }, { first: 50 });
    expect(found?.total).toBeGreaterThanOrEqual(30);
    // The newest change outlives the retention: a quiet database's next start still has a
    // position to check, and starts from the snapshot written after this load.
    const { rows: left } = await sql<{ n: string; newest: boolean }>`
      SELECT count(*) AS n, bool_and(id = (SELECT max(id) FROM catalog_changes)) AS newest FROM catalog_changes`.execute(store.db);
    expect([Number(left[0].n), left[0].newest]).toEqual([1, true]);
    await index.stop();
    await pruneChanges(store.db, await settledHorizon());
    const next = await started(indexOver(dir));
    expect(next.stats().loadedFrom).toBe('snapshot');
    await next.stop();
  });
});

describe('snapshot settings', () => {
  it('default beside the embedded store, follow DATA_DIR, and turn off with off or an in-memory store', () => {
    expect(loadConfig({}).searchSnapshotDir).toBe('./.data/search-snapshots');
    expect(loadConfig({ DATA_DIR: '/srv/cds/' }).searchSnapshotDir).toBe('/srv/cds/search-snapshots');
    expect(loadConfig({ DATA_DIR: 'memory://' }).searchSnapshotDir).toBeUndefined();
    expect(loadConfig({ SEARCH_SNAPSHOT_DIR: '/var/cache/cds' }).searchSnapshotDir).toBe('/var/cache/cds');
    expect(loadConfig({ SEARCH_SNAPSHOT_DIR: 'off' }).searchSnapshotDir).toBeUndefined();
    expect(loadConfig({}).searchSnapshotEveryMs).toBe(600_000);
    expect(loadConfig({ SEARCH_SNAPSHOT_EVERY_MS: '0' }).searchSnapshotEveryMs).toBe(0);
    expect(() => loadConfig({ SEARCH_SNAPSHOT_EVERY_MS: 'soon' })).toThrow(/SEARCH_SNAPSHOT_EVERY_MS/);
  });
});

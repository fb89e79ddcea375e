import { Readable } from 'node:stream';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runImport, type ImportKind } from '../src/cli/import.js';
import { seedScale, type ScaleCounts } from '../src/cli/seed.js';
import { channelsTable, creatorsTable, videosTable, type Row } from '../src/store/bulk-tables.js';
import { statementTransport } from '../src/store/bulk.js';
import { openStore } from '../src/store/connect.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { channelRow, creatorRow, videoRow } from '../src/store/imports.js';
import type { Store } from '../src/store/connect.js';
import type { Database } from '../src/store/database.js';
import { capture, catalogKeys as keys, catalogTables as bulkTables } from './support/catalog-tables.js';
import { createTestStore, type TestStore } from './support/store.js';

// What the bulk transports (src/store/bulk*.ts) promise beyond the rows themselves: indexes rebuilt
// as the migrations define them, tables vacuumed and analysed, values carried intact by COPY, and
// COPY giving the very rows the statement path gives (PostgreSQL runs both).

async function importText(store: Pick<Store, 'db' | 'bulk'>, kind: ImportKind, text: string) {
  const stderr = capture();
  const result = await runImport(store, kind, Readable.from([text]), stderr.stream);
  return { result, rejections: stderr.lines().filter((line) => line.startsWith('line ')), stderr };
}

const ndjson = (records: readonly unknown[]) => records.map((record) => `${JSON.stringify(record)}\n`).join('');

async function indexDefinitions(db: Kysely<Database>): Promise<Record<string, string>> {
  const { rows } = await sql<{ name: string; definition: string }>`
    SELECT indexname AS name, indexdef AS definition FROM pg_indexes
    WHERE schemaname = current_schema() AND tablename IN (${sql.join(bulkTables)})`.execute(db);
  return Object.fromEntries(rows.map((row) => [row.name, row.definition]));
}

/** Every row of a table in key order, as text: equal digests, equal contents. */
async function digest(db: Kysely<Database>, table: (typeof bulkTables)[number], except: string[] = []): Promise<string> {
  const row = except.length === 0 ? sql`to_jsonb(t)` : sql`to_jsonb(t) - ${sql.val(except)}::text[]`;
  const { rows } = await sql<{ digest: string | null }>`
    SELECT md5(string_agg((${row})::text, '|' ORDER BY ${sql.raw(keys[table])})) AS digest FROM ${sql.table(table)} t`.execute(db);
  return rows[0].digest ?? 'empty';
}

const scale: ScaleCounts = { creators: 1_500, channels: 60, videos: 1_200, live: 90 };

describe('seedScale into empty tables', () => {
  let store: TestStore;
  let seedLog = '';
  beforeAll(async () => {
    store = await createTestStore();
  });
  afterAll(() => store.close());

  it('leaves every secondary index as the migrations define it', async () => {
    const before = await indexDefinitions(store.db);
    expect(Object.keys(before).length).toBeGreaterThan(30);
    const stderr = capture();
    expect(await seedScale(store, scale, stderr.stream)).toEqual(scale);
    seedLog = stderr.text();
    expect(await indexDefinitions(store.db)).toEqual(before);
    if (store.kind === 'postgres') {
      // They were dropped for the load and built again afterwards.
      expect(stderr.text()).toContain('seed: creators: empty table: its 9 secondary indexes are built after the load, rows are copied frozen\n');
      // Videos point at channels, which therefore cannot be truncated for a frozen copy.
      expect(stderr.text()).toContain('seed: channels: empty table: its 8 secondary indexes are built after the load\n');
      expect(stderr.text()).toMatch(/^seed: videos: 5 indexes built in [\d.]+ s$/m);
    }
  });

  it("keeps the creators' keys, sort walks and text indexes, and none that only narrowed one column's filter", async () => {
    // decisions.md, "The SQL path's indexes": they served only the SQL path and cost every write.
    const names = Object.keys(await indexDefinitions(store.db)).filter((name) => name.startsWith('creators_'));
    expect(names.sort()).toEqual(
      [
        'creators_categories_idx',
        'creators_country_idx',
        'creators_engagement_idx',
        'creators_followers_idx',
        'creators_full_name_trgm_idx',
        'creators_has_email_idx',
        'creators_last_publish_idx',
        'creators_pk',
        'creators_username_trgm_idx',
        'creators_verified_idx',
      ].sort(),
    );
  });

  it("keeps the videos' keys and walks, and no text index", async () => {
    // decisions.md, "The SQL path's indexes": a substring most videos share was read through most
    // of the table with them too, and their builds were the longest step of a seed.
    const names = Object.keys(await indexDefinitions(store.db)).filter((name) => name.startsWith('videos_'));
    expect(names.sort()).toEqual(['videos_category_idx', 'videos_channel_idx', 'videos_newest_idx', 'videos_pkey', 'videos_relevance_idx', 'videos_type_idx']);
  });

  it('leaves every table it wrote vacuumed and analysed, every page visible to all', async () => {
    // All-visible pages are what lets count(*) be an index-only scan; tables loaded side by side
    // must not keep each other's rows from being marked so.
    const { rows } = await sql<{ relname: string; vacuumed: boolean; analysed: boolean; estimate: number; allVisible: boolean }>`
      SELECT s.relname, s.last_vacuum IS NOT NULL AS vacuumed, s.last_analyze IS NOT NULL AS analysed, c.reltuples::int AS estimate,
        c.relallvisible = c.relpages AS "allVisible"
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.relname IN (${sql.join(bulkTables)}) ORDER BY s.relname`.execute(store.db);
    const lines = seedLog.split('\n');
    const lastLoad = Math.max(...lines.flatMap((line, index) => (/ rows inserted in /.test(line) ? [index] : [])));
    const firstVacuum = lines.findIndex((line) => / vacuumed and analysed in /.test(line));
    expect(lastLoad).toBeGreaterThan(0);
    expect(firstVacuum).toBeGreaterThan(lastLoad);
    const done = { vacuumed: true, analysed: true, allVisible: true };
    expect(rows).toEqual([
      { relname: 'categories', ...done, estimate: 193 },
      { relname: 'channels', ...done, estimate: scale.channels },
      { relname: 'creators', ...done, estimate: scale.creators },
      { relname: 'live_streams', ...done, estimate: scale.live },
      { relname: 'videos', ...done, estimate: scale.videos },
    ]);
  });

  const changeFeed = async () =>
    (
      await sql<{ entity: string; reloads: number; keyed: number }>`
        SELECT entity, count(*) FILTER (WHERE key IS NULL)::int AS reloads, count(*) FILTER (WHERE key IS NOT NULL)::int AS keyed
        FROM catalog_changes GROUP BY entity ORDER BY entity`.execute(store.db)
    ).rows;

  it('tells the change feed to reload each table loaded empty, its triggers enabled again', async () => {
    // The embedded store writes rows by statements, each recorded as it goes.
    const perRow = store.kind === 'pglite';
    expect(await changeFeed()).toEqual([
      { entity: 'channels', reloads: perRow ? 0 : 1, keyed: perRow ? scale.channels : 0 },
      { entity: 'creators', reloads: perRow ? 0 : 1, keyed: perRow ? scale.creators : 0 },
      { entity: 'live_streams', reloads: perRow ? 0 : 1, keyed: perRow ? scale.live : 0 },
      { entity: 'videos', reloads: perRow ? 0 : 1, keyed: perRow ? scale.videos : 0 },
    ]);
    const { rows } = await sql<{ enabled: string; n: number }>`
      SELECT t.tgenabled AS enabled, count(*)::int AS n FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
      WHERE p.proname = 'catalog_changes_record' GROUP BY 1`.execute(store.db);
    expect(rows).toEqual([{ enabled: 'O', n: 12 }]);
  });

  it('adds only the missing rows on a second run, through the indexed tables, recording each', async () => {
    const before = await indexDefinitions(store.db);
    const feedBefore = await changeFeed();
    const stderr = capture();
    expect(await seedScale(store, { ...scale, creators: 1_700, live: 100 }, stderr.stream)).toEqual({ creators: 200, channels: 0, videos: 0, live: 10 });
    expect(stderr.text()).not.toContain('empty table');
    expect(await indexDefinitions(store.db)).toEqual(before);
    const added = { creators: 200, live_streams: 10 } as Record<string, number>;
    expect(await changeFeed()).toEqual(feedBefore.map((row) => ({ ...row, keyed: row.keyed + (added[row.entity] ?? 0) })));
  });

  it('leaves an imported table vacuumed and analysed too', async () => {
    await sql`SELECT pg_stat_reset()`.execute(store.db);
    const { result } = await importText(store, 'channels', ndjson([{ channel_id: 'UCimported', title: 'Imported' }]));
    expect(result).toEqual({ loaded: 1, rejected: 0 });
    const { rows } = await sql<{ vacuumed: boolean; analysed: boolean }>`
      SELECT last_vacuum IS NOT NULL AS vacuumed, last_analyze IS NOT NULL AS analysed FROM pg_stat_user_tables WHERE relname = 'channels'`.execute(store.db);
    expect(rows).toEqual([{ vacuumed: true, analysed: true }]);
  });
});

// Values that COPY's text format must escape or must not mistake for its own markers.
const awkward = [
  'tab\there',
  'line\nbreak and carriage\rreturn',
  'back\\slash \\N \\t \\. "double" \'single\'',
  '\\N',
  'NULL',
  '{brace,comma}',
  'Ünïcödé 名前 😀 café',
  '',
];

describe('COPY text', () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await createTestStore();
  });
  afterAll(() => store.close());

  const creators = awkward.map((text, index) => ({
    user_id: `awk${index}`,
    username: `user ${text || 'empty'}`,
    full_name: text,
    last_post: { post_id: `p${index}`, description: text, create_at: '2026-10-30T06:15:00Z' },
    last_update_at: '2026-10-31T00:00:00.000Z',
  }));
  const streams = awkward.map((text, index) => ({
    id: `s${index}`,
    user_id: `u${index}`,
    user_login: `login${index}`,
    title: text,
    tags: [text, 'plain', text],
    started_at: '2026-10-31T12:00:00Z',
  }));

  async function stored() {
    const creatorRows = await store.db
      .selectFrom('creators')
      .select(['user_id', 'username', 'full_name', 'last_post'])
      .where('user_id', 'like', 'awk%')
      .orderBy('user_id')
      .execute();
    const streamRows = await store.db.selectFrom('live_streams').select(['id', 'title', 'tags']).where('id', 'like', 's%').orderBy('id').execute();
    return { creatorRows, streamRows };
  }

  it('carries tabs, newlines, backslashes, quotes and non-ASCII text in text, array and JSON columns', async () => {
    expect((await importText(store, 'creators', ndjson(creators))).result).toEqual({ loaded: awkward.length, rejected: 0 });
    expect((await importText(store, 'live-streams', ndjson(streams))).result).toEqual({ loaded: awkward.length, rejected: 0 });
    const { creatorRows, streamRows } = await stored();
    expect(creatorRows.map((row) => [row.username, row.full_name, row.last_post?.description])).toEqual(
      creators.map((creator) => [creator.username, creator.full_name, creator.last_post.description]),
    );
    expect(streamRows.map((row) => [row.title, row.tags])).toEqual(streams.map((stream) => [stream.title, stream.tags]));
  });

  it('compares them equal to themselves: importing them again writes nothing', async () => {
    const versions = async () =>
      (await sql<{ id: string; xmin: string }>`SELECT user_id AS id, xmin::text AS xmin FROM creators WHERE user_id LIKE 'awk%' ORDER BY 1`.execute(store.db)).rows;
    const before = await versions();
    await importText(store, 'creators', ndjson(creators));
    expect(await versions()).toEqual(before);
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)('COPY and statements, side by side on PostgreSQL', () => {
  let copyStore: TestStore;
  let statementStore: TestStore;
  let viaStatements: Pick<Store, 'db' | 'bulk'>;
  beforeAll(async () => {
    [copyStore, statementStore] = await Promise.all([createTestStore(), createTestStore()]);
    viaStatements = { db: statementStore.db, bulk: statementTransport(statementStore.db) };
  });
  afterAll(() => Promise.all([copyStore?.close(), statementStore?.close()]));

  const sameContents = async (except: Partial<Record<(typeof bulkTables)[number], string[]>> = {}) => {
    for (const table of bulkTables) {
      expect(await digest(copyStore.db, table, except[table]), table).toBe(await digest(statementStore.db, table, except[table]));
    }
  };

  it('seed the same rows', async () => {
    expect(copyStore.bulk.takesEncodedRows).toBe(true);
    const copyLog = capture();
    await seedScale(copyStore, scale, copyLog.stream);
    expect(copyLog.text()).toContain('seed: creators: empty table');
    await seedScale(viaStatements, scale, capture().stream);
    await sameContents();
    // The imports below start from empty tables, but for the categories their creators carry
    // (a creator with a category that is not stored, or a top-level one, is rejected).
    for (const store of [copyStore, statementStore]) {
      await sql`TRUNCATE ${sql.join(bulkTables.map((table) => sql.table(table)))}`.execute(store.db);
      await store.db
        .insertInto('categories')
        .values([{ id: 100, parent_id: null, level: 1, name: 'top' }, ...[1, 2, 3, 4].map((id) => ({ id, parent_id: 100, level: 2, name: `category ${id}` }))])
        .execute();
    }
  });

  // Duplicated ids (in one batch and across batches), rows with and without last_update_at,
  // rejected lines, a video whose channel is missing; then the same ids again, some changed.
  function creatorLines(total: number, round: number, { everyLineStamped = false } = {}) {
    return Array.from({ length: total }, (_, line) => {
      if (line % 997 === 13) return '{"user_id": "broken"';
      const id = line % 1_000 === 999 ? 'c7' : `c${line % 4_000}`;
      const changed = round > 0 && line % 3 === 0;
      return JSON.stringify({
        user_id: id,
        username: `name ${id}${changed ? ' renamed' : ''}`,
        full_name: awkward[line % awkward.length],
        follower_count: line * 37,
        avg_engagement_rate: (line % 500) / 7,
        category_ids: [line % 5, 3, line % 5].filter((category) => category > 0),
        ...(line % 4 === 0 && !everyLineStamped ? {} : { last_update_at: `2026-10-${String((line % 28) + 1).padStart(2, '0')}T00:00:00.000Z` }),
      });
    }).join('\n');
  }

  it('import the same rows, with the same rejections, into empty tables and over stored rows', async () => {
    // Two batches of lines: the first validated in the importing thread, the second in a worker.
    for (const round of [0, 1]) {
      const text = creatorLines(6_000, round);
      const [viaCopy, statements] = [await importText(copyStore, 'creators', text), await importText(viaStatements, 'creators', text)];
      expect(viaCopy.stderr.text().includes('import creators: empty table')).toBe(round === 0);
      expect(viaCopy.result).toEqual(statements.result);
      expect(viaCopy.rejections).toEqual(statements.rejections);
      expect(viaCopy.rejections).toHaveLength(7);
      // Rows imported without a stamp carry the time of their import, different in each database.
      const stamps = sql<boolean>`last_update_at > now() - interval '1 minute'`;
      const stampedAtImport = async (db: Kysely<Database>) =>
        Number((await sql<{ n: string }>`SELECT count(*) AS n FROM creators WHERE ${stamps}`.execute(db)).rows[0].n);
      expect(await stampedAtImport(copyStore.db)).toBe(await stampedAtImport(statementStore.db));
      await sameContents({ creators: ['last_update_at'] });
      expect(await digest(copyStore.db, 'creators')).not.toBe('empty');
      const stamped = async (db: Kysely<Database>) =>
        (await sql<{ ids: string }>`SELECT string_agg(user_id || '=' || last_update_at::text, ',' ORDER BY user_id) AS ids FROM creators WHERE NOT ${stamps}`.execute(db)).rows[0].ids;
      expect(await stamped(copyStore.db)).toBe(await stamped(statementStore.db));
    }
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM creators WHERE username LIKE '% renamed'`.execute(copyStore.db);
    expect(Number(rows[0].n)).toBeGreaterThan(900);
    // Eight imports of thousands of lines on two cores shared with other work.
  }, 60_000);

  it('import fully stamped lines into empty tables as statements do, a key repeated in a later batch winning', async () => {
    // Every line stamped: batches are copied straight into the empty table, and the second batch,
    // which repeats keys of the first, fails on the key index and is upserted instead.
    for (const store of [copyStore, statementStore]) await sql`TRUNCATE creators`.execute(store.db);
    for (const round of [0, 1]) {
      const text = creatorLines(6_000, round, { everyLineStamped: true });
      const [viaCopy, statements] = [await importText(copyStore, 'creators', text), await importText(viaStatements, 'creators', text)];
      expect(viaCopy.stderr.text().includes('import creators: empty table')).toBe(round === 0);
      expect(viaCopy.result).toEqual(statements.result);
      expect(viaCopy.rejections).toEqual(statements.rejections);
      await sameContents();
    }
    // c1500 is on lines 1500 (first batch) and 5500 (second batch): the later line is stored.
    const { rows } = await sql<{ followers: string }>`SELECT follower_count AS followers FROM creators WHERE user_id = 'c1500'`.execute(copyStore.db);
    expect(Number(rows[0].followers)).toBe(5_500 * 37);
  }, 60_000);

  it('reject the same videos whose channel is missing', async () => {
    const channels = ndjson([{ channel_id: 'UCone', title: 'One' }, { channel_id: 'UCtwo', title: 'Two' }]);
    await importText(copyStore, 'channels', channels);
    await importText(viaStatements, 'channels', channels);
    const videos = ndjson(
      Array.from({ length: 40 }, (_, index) => ({
        video_id: `v${index % 30}`,
        channel_id: ['UCone', 'UCtwo', 'UCnone'][index % 3],
        title: awkward[index % awkward.length],
        create_at: '2026-06-01T00:00:00Z',
        duration: 'PT4M13S',
        play_count: index * 1_000,
      })),
    );
    const [viaCopy, statements] = [await importText(copyStore, 'videos', videos), await importText(viaStatements, 'videos', videos)];
    expect(viaCopy.result).toEqual({ loaded: 27, rejected: 13 });
    expect(viaCopy.result).toEqual(statements.result);
    expect(viaCopy.rejections).toEqual(statements.rejections);
    expect(viaCopy.rejections[0]).toBe('line 3: channel_id: channel "UCnone" does not exist (import channels first)');
    await sameContents({ creators: ['last_update_at'], channels: ['last_update_at'], videos: ['last_update_at'] });
  });

  it('leave unchanged rows untouched: not updated, not even locked', async () => {
    // Ids that repeat across batches are written by each batch, in line order; these do not.
    const text = ndjson(
      Array.from({ length: 6_000 }, (_, line) => ({
        user_id: `once${line}`,
        username: `once ${line}`,
        full_name: awkward[line % awkward.length],
        ...(line % 2 === 0 ? {} : { last_update_at: '2026-10-31T00:00:00.000Z' }),
      })),
    );
    await importText(copyStore, 'creators', text);
    const versions = async () =>
      (await sql<{ versions: string }>`
        SELECT string_agg(xmin::text || '/' || xmax::text, ',' ORDER BY user_id) AS versions FROM creators WHERE user_id LIKE 'once%'`.execute(
        copyStore.db,
      )).rows[0].versions;
    const before = await versions();
    expect(before).toMatch(/^\d+\/0,/);
    await importText(copyStore, 'creators', text);
    expect(await versions()).toBe(before);
  });

  it('copy rows into an empty table visible to all at once, even past an older open transaction', async () => {
    const store = await createTestStore();
    const older = new pg.Client({ connectionString: store.databaseUrl });
    await older.connect();
    try {
      // A snapshot older than the load: VACUUM cannot mark rows newer than it visible to all,
      // frozen rows are so from the start.
      await older.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await older.query('SELECT 1');
      await seedScale(store, scale, capture().stream);
      const { rows } = await sql<{ relname: string; allVisible: boolean }>`
        SELECT relname, relpages > 0 AND relallvisible = relpages AS "allVisible" FROM pg_class
        WHERE relname IN ('creators', 'videos', 'live_streams') ORDER BY relname`.execute(store.db);
      expect(rows).toEqual([
        { relname: 'creators', allVisible: true },
        { relname: 'live_streams', allVisible: true },
        { relname: 'videos', allVisible: true },
      ]);
    } finally {
      await older.end();
      await store.close();
    }
  });

  it('a failed load into an empty table leaves it empty and with every index', async () => {
    const store = await createTestStore();
    try {
      const before = await indexDefinitions(store.db);
      const row = creatorRow({ user_id: 'twice', username: 'twice', last_update_at: '2026-10-31T00:00:00Z' });
      // keep-stored loads expect unique keys: the key index refuses the second row mid-load.
      const load = store.bulk.load(creatorsTable, 'keep-stored', async (write) => {
        await write([row]);
        await write([row]);
      });
      await expect(load).rejects.toThrow(/duplicate key/);
      expect(await indexDefinitions(store.db)).toEqual(before);
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM creators`.execute(store.db);
      expect(Number(rows[0].n)).toBe(0);
    } finally {
      await store.close();
    }
  });
});

describe.runIf(process.env.TEST_DATABASE_URL)("a load's references, checked at its end on PostgreSQL", () => {
  const stamp = '2026-10-31T00:00:00Z';
  const channel = (id: string) => channelRow({ channel_id: id, title: id, last_update_at: stamp });
  const video = (id: string, channelId: string) =>
    videoRow({ video_id: id, channel_id: channelId, title: id, create_at: '2026-06-01T00:00:00Z', duration: 'PT1M', last_update_at: stamp });
  const count = async (db: Kysely<Database>, table: 'channels' | 'videos') =>
    Number((await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(db)).rows[0].n);

  /** Channels and videos loaded side by side, as the seed loads them: videos wait for the channels only to check their references. */
  function loadSideBySide(store: Pick<Store, 'bulk'>, channelIds: string[], videos: Row[], channelsWaitFor: Promise<unknown> = Promise.resolve()) {
    const notes: string[] = [];
    let videosCopied!: () => void;
    const copied = new Promise<void>((resolve) => (videosCopied = resolve));
    const channels = store.bulk.load(channelsTable, 'keep-stored', async (write) => {
      await channelsWaitFor;
      await write(channelIds.map(channel));
    });
    const videoLoad = store.bulk.load(
      videosTable,
      'keep-stored',
      async (write) => {
        await write(videos);
        videosCopied();
      },
      (text) => notes.push(text),
      { referencedRowsStored: channels },
    );
    return { channels, videos: videoLoad, copied, notes };
  }

  it('copies the videos before their channels are committed, then checks and locks every reference', async () => {
    const store = await createTestStore();
    try {
      // The channels' load commits only once the videos are copied: checked row by row, the
      // videos would wait for channels that wait for them.
      let release!: () => void;
      const videosFirst = new Promise<void>((resolve) => (release = resolve));
      const load = loadSideBySide(store, ['UCone', 'UCtwo', 'UCthree'], [video('v1', 'UCone'), video('v2', 'UCtwo'), video('v3', 'UCone')], videosFirst);
      await load.copied;
      release();
      expect(await load.channels).toBe(3);
      expect(await load.videos).toBe(3);
      expect(load.notes.join('\n')).toMatch(/references are checked at the end/);
      expect(load.notes.join('\n')).toMatch(/references checked in/);
      expect(await count(store.db, 'videos')).toBe(3);
      // The check locked the referenced channels FOR KEY SHARE, as row-by-row checks do (so none
      // could be deleted before the videos committed): the locker stays in xmax, the others have none.
      const { rows: lockers } = await sql<{ id: string; locked: boolean }>`
        SELECT channel_id AS id, xmax::text <> '0' AS locked FROM channels ORDER BY channel_id`.execute(store.db);
      expect(lockers).toEqual([
        { id: 'UCone', locked: true },
        { id: 'UCthree', locked: false },
        { id: 'UCtwo', locked: true },
      ]);
      // The foreign key is still enforced afterwards.
      await expect(sql`DELETE FROM channels WHERE channel_id = 'UCone'`.execute(store.db)).rejects.toThrow(/foreign key/);
    } finally {
      await store.close();
    }
  });

  it('fails the whole load on one video whose channel is missing, leaving it empty with every index', async () => {
    const store = await createTestStore();
    try {
      const before = await indexDefinitions(store.db);
      const videos = Array.from({ length: 500 }, (_, i) => video(`v${i}`, i === 321 ? 'UCnone' : i % 2 === 0 ? 'UCone' : 'UCtwo'));
      const load = loadSideBySide(store, ['UCone', 'UCtwo'], videos);
      expect(await load.channels).toBe(2);
      const failure = await load.videos.then(
        () => null,
        (error: { message: string; code?: string; detail?: string }) => error,
      );
      expect(failure).toMatchObject({
        code: '23503',
        message: 'insert or update on table "videos" violates foreign key constraint "videos_channel_id_fkey"',
        detail: 'Key (channel_id)=(UCnone) is not present in table "channels".',
      });
      expect(await count(store.db, 'videos')).toBe(0);
      expect(await count(store.db, 'channels')).toBe(2);
      expect(await indexDefinitions(store.db)).toEqual(before);
    } finally {
      await store.close();
    }
  });

  it('fails the videos when their channels fail', async () => {
    const store = await createTestStore();
    try {
      const load = loadSideBySide(store, ['UCone', 'UCone'], [video('v1', 'UCone')]);
      await expect(load.channels).rejects.toThrow(/duplicate key/);
      await expect(load.videos).rejects.toThrow(/duplicate key/);
      expect(await count(store.db, 'videos')).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('checks row by row for a role that may not defer the checks: a database owned by an ordinary role', async () => {
    const serverUrl = process.env.TEST_DATABASE_URL!;
    const suffix = `${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
    const role = `test_owner_${suffix}`;
    const database = `test_owned_${suffix}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER`);
    await admin.query(`CREATE DATABASE ${database} OWNER ${role}`);
    const url = new URL(serverUrl);
    url.username = role;
    url.pathname = `/${database}`;
    const store = await openStore({ databaseUrl: url.toString() });
    try {
      await migrateToLatest(store.db);
      const seeded = capture();
      const small: ScaleCounts = { creators: 50, channels: 5, videos: 40, live: 5 };
      expect(await seedScale(store, small, seeded.stream)).toEqual(small);
      expect(seeded.text()).toMatch(/seed: videos: empty table/);
      expect(seeded.text()).not.toMatch(/references are checked at the end/);

      await sql`TRUNCATE videos`.execute(store.db);
      const load = loadSideBySide(store, ['UCone'], [video('v1', 'UCone'), video('v2', 'UCnone')]);
      expect(await load.channels).toBe(1);
      await expect(load.videos).rejects.toMatchObject({ code: '23503' });
      expect(load.notes.join('\n')).not.toMatch(/references are checked at the end/);
      expect(await count(store.db, 'videos')).toBe(0);
    } finally {
      await store.close();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });
});

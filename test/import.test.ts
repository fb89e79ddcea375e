import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importKinds, MAX_LINE_CHARS, readBatches, runImport, type ImportKind } from '../src/cli/import.js';
import { capture, catalogKeys as keys, catalogTables as tables } from './support/catalog-tables.js';
import { createTestStore, type TestStore } from './support/store.js';

let store: TestStore;
beforeAll(async () => {
  store = await createTestStore();
});
afterAll(() => store.close());

async function importFixture(kind: ImportKind) {
  const stderr = capture();
  const path = fileURLToPath(new URL(`./fixtures/${kind}.ndjson`, import.meta.url));
  const result = await runImport(store, kind, createReadStream(path), stderr.stream);
  return { result, rejections: stderr.lines().filter((line) => line.startsWith('line ')), lines: stderr.lines() };
}

async function importText(kind: ImportKind, chunks: (string | Buffer)[]) {
  const stderr = capture();
  const result = await runImport(store, kind, Readable.from(chunks), stderr.stream);
  return { result, lines: stderr.lines() };
}

async function tableContents() {
  const contents: Record<string, unknown[]> = {};
  for (const table of tables) {
    contents[table] = (await sql`SELECT * FROM ${sql.table(table)} ORDER BY ${sql.raw(keys[table])}`.execute(store.db)).rows;
  }
  return contents;
}

// pg returns int8 and numeric as strings, PGlite as numbers: compare through one form.
const num = (value: unknown) => Number(value);
const iso = (value: unknown) => (value === null ? null : new Date(value as string | Date).toISOString());

describe('runImport', () => {
  it('names the five kinds', () => {
    expect(importKinds).toEqual(['categories', 'creators', 'channels', 'videos', 'live-streams']);
  });

  it.each(importKinds)('reports a %s file whose every line is rejected, line by line', async (kind) => {
    const { result, lines } = await importText(kind, ['garbage\n', '{"foo":1}\n']);
    expect(result).toEqual({ loaded: 0, rejected: 2 });
    expect(lines.filter((line) => line.startsWith('line '))).toEqual([
      expect.stringMatching(/^line 1: not valid JSON/),
      expect.stringMatching(/^line 2: .*foo: unknown field/),
    ]);
  });

  it('loads categories, deriving each level from the parent chain', async () => {
    const { result, rejections, lines } = await importFixture('categories');
    expect(result).toEqual({ loaded: 6, rejected: 3 });
    expect(rejections).toEqual([
      'line 6: parent_id: parent category 1001 is at level 3, the deepest level of the taxonomy',
      'line 7: parent_id: unknown parent category 999',
      'line 10: id: Invalid input: expected number, received string',
    ]);
    expect(lines.at(-1)).toMatch(/^import categories: done, 10 lines, 6 loaded, 3 rejected in /);
    const rows = await store.db.selectFrom('categories').selectAll().orderBy('id').execute();
    expect(rows).toEqual([
      { id: 1, parent_id: null, level: 1, name: 'Gaming' },
      { id: 2, parent_id: null, level: 1, name: 'Music' },
      { id: 101, parent_id: 1, level: 2, name: 'Mobile games' },
      { id: 102, parent_id: 1, level: 2, name: 'PC games' },
      // Listed before its parent in the file: the parent is in the same batch.
      { id: 1001, parent_id: 101, level: 3, name: 'Puzzle games' },
      { id: 1002, parent_id: 102, level: 3, name: 'Speedruns' },
    ]);
  });

  it('loads creators, reporting each bad line with its number and reason', async () => {
    const { result, rejections } = await importFixture('creators');
    expect(result).toEqual({ loaded: 3, rejected: 6 });
    expect(rejections).toHaveLength(6);
    expect(rejections[0]).toMatch(/^line 3: not valid JSON \(.+\)$/);
    expect(rejections.slice(1)).toEqual([
      'line 4: follower_count: Invalid input: expected number, received string',
      'line 5: followers: unknown field',
      'line 6: follower_count: Too small: expected number to be >=0',
      'line 7: country: must be an ISO 3166-1 alpha-2 country code or ""',
      'line 8: last_publish_at: must be an ISO 8601 date-time with Z or an offset (2026-05-01T12:34:56.000Z)',
    ]);

    const rows = await store.db.selectFrom('creators').selectAll().orderBy('user_id').execute();
    expect(rows.map((row) => [row.platform, row.user_id])).toEqual([
      ['twitter', '100'],
      ['twitter', '200'],
      ['instagram', '900'],
    ]);
    const [full, minimal, maxCount] = rows;
    expect({
      ...full,
      follower_count: num(full.follower_count),
      post_count: num(full.post_count),
      video_count: num(full.video_count),
      avg_engagement_rate: num(full.avg_engagement_rate),
      avg_video_engagement_rate: num(full.avg_video_engagement_rate),
      avg_comment_count: num(full.avg_comment_count),
      avg_like_count: num(full.avg_like_count),
      avg_retweet_count: num(full.avg_retweet_count),
      avg_view_count: num(full.avg_view_count),
      avg_engagement_count: num(full.avg_engagement_count),
      retweet_ratio: num(full.retweet_ratio),
      reply_ratio: num(full.reply_ratio),
      evaluation_min: num(full.evaluation_min),
      evaluation_max: num(full.evaluation_max),
      last_publish_at: iso(full.last_publish_at),
      last_update_at: iso(full.last_update_at),
    }).toEqual({
      platform: 'twitter',
      user_id: '100',
      username: 'techanna',
      full_name: 'Anna Tech',
      avatar: 'https://cdn.example.com/a/100.jpg',
      // Stored as search compares them: countries upper-case, languages lower-case.
      country: 'US',
      language: 'en',
      gender: 2,
      follower_count: 1_250_000,
      is_verified: true,
      has_email: true,
      avg_engagement_rate: 3.25,
      avg_video_engagement_rate: 4.5,
      avg_comment_count: 12.5,
      avg_like_count: 300,
      avg_retweet_count: 40.25,
      avg_view_count: 15000.75,
      avg_engagement_count: 352.75,
      retweet_ratio: 12.3,
      reply_ratio: 8,
      post_count: 5400,
      video_count: 320,
      last_publish_at: '2026-10-30T06:15:00.000Z',
      recent_month_publish_count: 42,
      recent_week_publish_count: 9,
      last_post: {
        post_id: '1851234567890123456',
        description: 'New laptop review is up',
        create_at: '2026-10-30T06:15:00.000Z',
        cover_url: 'https://cdn.example.com/p/1.jpg',
        like_count: 512,
        comment_count: 33,
        retweet_count: 71,
        view_count: 20480,
      },
      evaluation_min: 1200.5,
      evaluation_max: 2500,
      category_ids: [101, 1002],
      last_update_at: '2026-10-31T00:00:00.000Z',
    });
    expect(minimal).toMatchObject({
      username: 'minimal',
      full_name: '',
      country: '',
      gender: 0,
      is_verified: false,
      last_publish_at: null,
      last_post: null,
      category_ids: [],
    });
    expect(num(minimal.follower_count)).toBe(0);
    // Without last_update_at in the file, the import time.
    expect(Date.now() - minimal.last_update_at.getTime()).toBeLessThan(60_000);
    expect(String(maxCount.follower_count)).toBe(String(Number.MAX_SAFE_INTEGER));
  });

  it('loads channels', async () => {
    const { result, rejections } = await importFixture('channels');
    expect(result).toEqual({ loaded: 2, rejected: 1 });
    expect(rejections).toEqual(['line 3: gender: Invalid option: expected one of "male"|"female"|"unknown"']);
    const rows = await store.db.selectFrom('channels').selectAll().orderBy('channel_id').execute();
    expect(rows.map((row) => [row.channel_id, row.title, row.country, row.language, row.gender, num(row.follower_count)])).toEqual([
      ['UCmegaHitsMusic0000000001', 'Mega Hits', 'KR', 'ko', 0, 250_000_000],
      ['UCsmallCooking00000000002', 'Small Kitchen', 'FR', 'fr', 2, 8200],
    ]);
    expect(num(rows[0].avg_play_count)).toBe(3_000_000_000);
    expect(num(rows[0].avg_comment_count)).toBe(450000.5);
  });

  it('loads videos, rejecting one whose channel does not exist', async () => {
    const { result, rejections } = await importFixture('videos');
    expect(result).toEqual({ loaded: 2, rejected: 3 });
    expect(rejections).toEqual([
      'line 3: channel_id: channel "UCnobody" does not exist (import channels first)',
      'line 4: duration: must be an ISO 8601 duration such as PT4M13S',
      'line 5: video_type: Invalid option: expected one of "video"|"short"',
    ]);
    const rows = await store.db.selectFrom('videos').selectAll().orderBy('video_id').execute();
    expect(rows.map((row) => row.video_id)).toEqual(['megaVideo01', 'shortSoup02']);
    const [mega, short] = rows;
    // 64-bit counts come back exactly, whichever driver.
    expect(String(mega.play_count)).toBe('15000000000');
    expect({
      ...mega,
      like_count: num(mega.like_count),
      comment_count: num(mega.comment_count),
      play_count: num(mega.play_count),
      engagement_rate: num(mega.engagement_rate),
      create_at: iso(mega.create_at),
      last_update_at: iso(mega.last_update_at),
    }).toEqual({
      video_id: 'megaVideo01',
      channel_id: 'UCmegaHitsMusic0000000001',
      title: 'Mega Hit (Official Video)',
      description: 'The most played video',
      cover_url: 'https://cdn.example.com/v/mega.jpg',
      create_at: '2026-01-15T12:00:00.000Z',
      duration_seconds: 213,
      video_url: 'https://www.youtube.com/watch?v=megaVideo01',
      video_type: 1,
      category_id: 10,
      like_count: 42_000_000,
      comment_count: 3_100_000,
      play_count: 15_000_000_000,
      engagement_rate: 0.3,
      last_update_at: '2026-10-31T00:00:00.000Z',
    });
    expect(short).toMatchObject({ video_type: 2, duration_seconds: 45, category_id: 26, description: '' });
    expect(iso(short.create_at)).toBe('2026-10-20T17:30:00.000Z');
  });

  it('loads live streams', async () => {
    const { result, rejections } = await importFixture('live-streams');
    expect(result).toEqual({ loaded: 3, rejected: 1 });
    expect(rejections).toEqual([
      'line 4: type: Invalid option: expected one of "live"|""; ' +
        'started_at: must be an ISO 8601 date-time with Z or an offset (2026-05-01T12:34:56.000Z)',
    ]);
    const rows = await store.db.selectFrom('live_streams').selectAll().orderBy('id').execute();
    expect(rows.map((row) => [row.id, row.user_login, row.type, num(row.viewer_count), row.language, row.tags, row.is_mature])).toEqual([
      ['41000000001', 'speedyruns', 'live', 1500, 'en', ['English', 'Speedrun'], false],
      ['41000000002', 'cozychat', '', 1500, 'other', [], true],
      ['41000000003', 'tinystream', 'live', 0, '', [], false],
    ]);
    expect(iso(rows[1].started_at)).toBe('2026-10-31T21:30:00.000Z');
  });

  it('changes nothing when the same files are imported again', async () => {
    const before = await tableContents();
    for (const kind of importKinds) {
      const { result } = await importFixture(kind);
      expect(result.loaded).toBeGreaterThan(0);
    }
    expect(await tableContents()).toEqual(before);
  });

  it('updates a changed record, stamping it with the import time', async () => {
    const before = await store.db.selectFrom('creators').selectAll().where('user_id', '=', '200').executeTakeFirstOrThrow();
    const { result } = await importText('creators', ['{"user_id":"200","username":"minimal","follower_count":77}\n']);
    expect(result).toEqual({ loaded: 1, rejected: 0 });
    const after = await store.db.selectFrom('creators').selectAll().where('user_id', '=', '200').executeTakeFirstOrThrow();
    expect(num(after.follower_count)).toBe(77);
    expect(after.last_update_at.getTime()).toBeGreaterThan(before.last_update_at.getTime());
  });

  it('takes the last line of a repeated id', async () => {
    const { result } = await importText('channels', [
      '{"channel_id":"UCtwice","title":"first"}\n{"channel_id":"UCtwice","title":"second"}\n',
    ]);
    expect(result).toEqual({ loaded: 2, rejected: 0 });
    const row = await store.db.selectFrom('channels').select('title').where('channel_id', '=', 'UCtwice').executeTakeFirstOrThrow();
    expect(row.title).toBe('second');
  });

  it('refuses to move a category whose stored subcategories would end up at the wrong level', async () => {
    const { result, lines } = await importText('categories', [
      // 101 has the stored child 1001: under 102 it would be level 3 and 1001 level 4.
      '{"id":101,"parent_id":102,"name":"Mobile games"}\n',
      // Same level under another parent: fine.
      '{"id":102,"parent_id":2,"name":"PC games"}\n',
      '{"id":7,"parent_id":8,"name":"Loop A"}\n{"id":8,"parent_id":7,"name":"Loop B"}\n',
      // Its parent is stored, from the first import.
      '{"id":1003,"parent_id":101,"name":"Word games"}\n',
    ]);
    expect(result).toEqual({ loaded: 2, rejected: 3 });
    expect(lines.filter((line) => line.startsWith('line '))).toEqual([
      'line 1: parent_id: moving category 101 from level 2 to level 3 would leave its subcategory 1001 at the wrong level',
      'line 3: parent_id: the parent chain loops: 7 → 8 → 7',
      'line 4: parent_id: the parent chain loops: 8 → 7 → 8',
    ]);
    const rows = await store.db.selectFrom('categories').selectAll().where('id', 'in', [101, 102, 1003]).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 101, parent_id: 1, level: 2, name: 'Mobile games' },
      { id: 102, parent_id: 2, level: 2, name: 'PC games' },
      { id: 1003, parent_id: 101, level: 3, name: 'Word games' },
    ]);
  });

  it('refuses a move that would strand a subcategory refused in the same batch', async () => {
    const { result, lines } = await importText('categories', [
      '{"id":1,"parent_id":2,"name":"Gaming"}\n{"id":101,"parent_id":1,"name":"Mobile games"}\n',
    ]);
    expect(result).toEqual({ loaded: 0, rejected: 2 });
    expect(lines.filter((line) => line.startsWith('line '))).toEqual([
      'line 1: parent_id: moving category 1 from level 1 to level 2 would leave its subcategory 101 at the wrong level',
      'line 2: parent_id: moving category 101 from level 2 to level 3 would leave its subcategory 1001 at the wrong level',
    ]);
    const levels = await store.db.selectFrom('categories').select(['id', 'level']).where('id', 'in', [1, 101, 1001]).orderBy('id').execute();
    expect(levels).toEqual([
      { id: 1, level: 1 },
      { id: 101, level: 2 },
      { id: 1001, level: 3 },
    ]);
  });

  it('reads lines across chunk boundaries, with a byte-order mark, CRLF endings and blank lines', async () => {
    const bytes = Buffer.from('\ufeff{"id":3,"parent_id":null,"name":"Sport und Spiele – Übersicht"}\r\n\r\n{"id":4,"parent_id":3,"name":"Café"}');
    const chunks = [];
    for (let offset = 0; offset < bytes.length; offset += 7) chunks.push(bytes.subarray(offset, offset + 7));
    const { result } = await importText('categories', chunks);
    expect(result).toEqual({ loaded: 2, rejected: 0 });
    const rows = await store.db.selectFrom('categories').select(['id', 'name', 'level']).where('id', 'in', [3, 4]).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 3, name: 'Sport und Spiele – Übersicht', level: 1 },
      { id: 4, name: 'Café', level: 2 },
    ]);
  });

  it('rejects a creator carrying a category that is not stored, as a video without its channel', async () => {
    const lines = [
      '{"user_id":"catOk","username":"cat_ok","category_ids":[101]}',
      '{"user_id":"catBad","username":"cat_bad","category_ids":[101,999999,888888]}',
      '{"user_id":"catNone","username":"cat_none"}',
    ];
    const { result, lines: stderr } = await importText('creators', [lines.join('\n')]);
    expect(result).toEqual({ loaded: 2, rejected: 1 });
    expect(stderr.filter((line) => line.startsWith('line '))).toEqual(['line 2: category_ids: category 888888, 999999 does not exist (import categories first)']);
    const rows = await store.db.selectFrom('creators').select('user_id').where('user_id', 'in', ['catOk', 'catBad', 'catNone']).orderBy('user_id').execute();
    expect(rows.map((row) => row.user_id)).toEqual(['catNone', 'catOk']);
  });

  it('rejects a creator carrying a top-level category, which no search takes', async () => {
    const topLevel = (await store.db.selectFrom('categories').select('id').where('level', '=', 1).orderBy('id').limit(2).execute()).map((row) => row.id);
    const lines = [
      `{"user_id":"topA","username":"top_a","category_ids":[101,${topLevel[0]}]}`,
      `{"user_id":"topB","username":"top_b","category_ids":[${topLevel[1]},999999]}`,
      '{"user_id":"topC","username":"top_c","category_ids":[101]}',
    ];
    const { result, lines: stderr } = await importText('creators', [lines.join('\n')]);
    expect(result).toEqual({ loaded: 1, rejected: 2 });
    expect(stderr.filter((line) => line.startsWith('line '))).toEqual([
      `line 1: category_ids: category ${topLevel[0]} is a top-level category: creators carry level-2 and level-3 ids`,
      'line 2: category_ids: category 999999 does not exist (import categories first)',
    ]);
    const rows = await store.db.selectFrom('creators').select('user_id').where('user_id', 'in', ['topA', 'topB', 'topC']).execute();
    expect(rows.map((row) => row.user_id)).toEqual(['topC']);
  });

  it('drops a line past the limit as it streams in, names it, and loads the others', async () => {
    const huge = `{"user_id":"huge1","username":"${'y'.repeat(MAX_LINE_CHARS)}"}`;
    const lines = ['{"user_id":"okA","username":"ok_a"}', huge, '{"user_id":"okB","username":"ok_b"}', huge];
    // In 64 KB chunks, as a file streams, and the last line without its newline.
    const text = lines.join('\n');
    const chunks = [];
    for (let offset = 0; offset < text.length; offset += 65_536) chunks.push(text.slice(offset, offset + 65_536));
    const { result, lines: stderr } = await importText('creators', chunks);
    expect(result).toEqual({ loaded: 2, rejected: 2 });
    expect(stderr.filter((line) => line.startsWith('line '))).toEqual([
      `line 2: longer than ${MAX_LINE_CHARS} characters: not read`,
      `line 4: longer than ${MAX_LINE_CHARS} characters: not read`,
    ]);
    const rows = await store.db.selectFrom('creators').select('user_id').where('user_id', 'in', ['okA', 'okB', 'huge1']).orderBy('user_id').execute();
    expect(rows.map((row) => row.user_id)).toEqual(['okA', 'okB']);
  });

  it('cuts batches around dropped lines wherever the chunks end', async () => {
    const tooLong = `longer than ${MAX_LINE_CHARS} characters: not read`;
    const text = 'a\nbbbbbbbbbb\ncc\ndddddddddddd\ne';
    for (const chunkSize of [1, 2, 3, 5, 8, 13, text.length]) {
      const chunks = [];
      for (let offset = 0; offset < text.length; offset += chunkSize) chunks.push(text.slice(offset, offset + chunkSize));
      const batches = [];
      for await (const batch of readBatches(Readable.from(chunks), 2, 4)) batches.push(batch);
      expect(batches, `chunks of ${chunkSize}`).toEqual([
        { text: 'a\n\n', firstLine: 1, lines: 2, dropped: [{ line: 2, text: tooLong }] },
        { text: 'cc\n\n', firstLine: 3, lines: 2, dropped: [{ line: 4, text: tooLong }] },
        { text: 'e', firstLine: 5, lines: 1, dropped: [] },
      ]);
    }
  });

  it('drops a line of bytes that are not UTF-8, names it, and keeps characters cut by a chunk', async () => {
    // Line 2 is Latin-1 ("Café" as one byte é), line 4 ends in a lone lead byte, line 6 carries a real
    // U+FFFD (valid UTF-8: kept), the last line ends cut short in the middle of a character.
    const parts = [
      Buffer.from('{"user_id":"utfA","username":"Zoë 🎥"}\n'),
      Buffer.from('{"user_id":"utfB","username":"Caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}\n{"user_id":"utfC","username":"ĳ"}\n{"user_id":"utfD","username":"x'),
      Buffer.from([0xe2, 0x82]),
      Buffer.from('"}\n\n{"user_id":"utfE","username":"\ufffd ok"}\n{"user_id":"utfF","username":"'),
      Buffer.from([0xf0, 0x9f, 0x8e]),
    ];
    const bytes = Buffer.concat(parts);
    for (const chunkSize of [1, 2, 3, 7, 64, bytes.length]) {
      await store.db.deleteFrom('creators').where('user_id', 'like', 'utf%').execute();
      const chunks = [];
      for (let offset = 0; offset < bytes.length; offset += chunkSize) chunks.push(bytes.subarray(offset, offset + chunkSize));
      const { result, lines: stderr } = await importText('creators', chunks);
      expect(result, `chunks of ${chunkSize}`).toEqual({ loaded: 3, rejected: 3 });
      expect(stderr.filter((line) => line.startsWith('line '))).toEqual([
        'line 2: not valid UTF-8: not read',
        'line 4: not valid UTF-8: not read',
        'line 7: not valid UTF-8: not read',
      ]);
      const rows = await store.db.selectFrom('creators').select(['user_id', 'username']).where('user_id', 'like', 'utf%').orderBy('user_id').execute();
      expect(rows).toEqual([
        { user_id: 'utfA', username: 'Zoë 🎥' },
        { user_id: 'utfC', username: 'ĳ' },
        { user_id: 'utfE', username: '\ufffd ok' },
      ]);
    }
  });

  it('reports progress on long files', async () => {
    const total = 20_500;
    function* lines() {
      for (let i = 0; i < total; i++) {
        yield `{"id":"bulk${i}","user_id":"u${i}","user_login":"bulk${i}","viewer_count":${i % 100},"started_at":"2026-10-31T12:00:00Z"}\n`;
      }
    }
    const stderr = capture();
    const result = await runImport(store, 'live-streams', Readable.from(lines()), stderr.stream);
    expect(result).toEqual({ loaded: total, rejected: 0 });
    // Between them, on PostgreSQL: the transport's own steps (index builds, vacuum).
    expect(stderr.lines().filter((line) => /^import live-streams: [\d,]+ lines/.test(line))).toEqual([
      'import live-streams: 10,000 lines, 10,000 loaded, 0 rejected',
      'import live-streams: 20,000 lines, 20,000 loaded, 0 rejected',
    ]);
    expect(stderr.lines().at(-1)).toMatch(/^import live-streams: done, 20,500 lines, 20,500 loaded, 0 rejected in [\d.]+ s \([\d,]+ lines\/s\)$/);
    const count = await store.db.selectFrom('live_streams').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(num(count.n)).toBe(total + 3);
  });
});

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../src/store/connect.js';
import { creatorsById } from '../src/store/creators.js';
import { createTestStore, type TestStore } from './support/store.js';

// The rows of a search page are read by key, as a statement prepared once per connection
// (src/store/prepared.ts): the keys travel as one array parameter, whatever they hold, and a
// column added by a migration must not break connections that prepared the statement before it.

const ODD_IDS = ['a"b', 'c,d', '{e}', 'f\\g', 'NULL', ' spaced ', "o'q", 'ü'];

let store: TestStore;

beforeAll(async () => {
  store = await createTestStore();
  await store.db
    .insertInto('creators')
    .values(ODD_IDS.map((id, i) => ({ platform: 'twitter', user_id: id, username: `user${i}`, follower_count: i, avg_engagement_rate: 0, avg_video_engagement_rate: 0, avg_comment_count: 0, avg_like_count: 0, avg_retweet_count: 0, avg_view_count: 0, retweet_ratio: 0, reply_ratio: 0, post_count: 0, video_count: 0, evaluation_min: 0, evaluation_max: 0 })))
    .execute();
}, 60_000);
afterAll(() => store?.close());

describe('rows by key', () => {
  it('finds keys holding quotes, commas, braces, backslashes and NULL, leaving out unknown ones', async () => {
    // In any order: the key batch puts each caller's rows in its own (test/key-batches.test.ts).
    const asked = [...ODD_IDS].reverse().flatMap((id, i) => (i === 3 ? [id, 'missing'] : [id]));
    const rows = await creatorsById(store.db, asked, 'twitter');
    expect(new Map(rows.map((row) => [row.userId, row.username]))).toEqual(new Map(ODD_IDS.map((id, i) => [id, `user${i}`])));
    expect(rows).toHaveLength(ODD_IDS.length);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('prepared key lookups (PostgreSQL)', () => {
  /** A store on the test database with one connection: the session the statements below ran in. */
  const oneConnection = (transactionPooler: boolean) => openStore({ databaseUrl: store.databaseUrl!, poolSize: 1, transactionPooler });
  const prepared = async (one: Store) =>
    (await sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements`.execute(one.db)).rows;

  it('prepares the lookup once per connection under a name, and reuses it for any number of keys', async () => {
    const one = await oneConnection(false);
    try {
      await creatorsById(one.db, ODD_IDS.slice(0, 2), 'twitter');
      await creatorsById(one.db, ODD_IDS, 'twitter');
      const statements = await prepared(one);
      expect(statements).toHaveLength(1);
      expect(statements[0].name).toMatch(/^cds_key_lookup_\d+$/);
      expect(statements[0].statement).toContain('= ANY($2)');
    } finally {
      await one.close();
    }
  });

  it('keeps working when a migration adds a column after the statement was prepared', async () => {
    const one = await oneConnection(false);
    try {
      expect(await creatorsById(one.db, ['c,d'], 'twitter')).toHaveLength(1);
      await sql`ALTER TABLE creators ADD COLUMN added_later integer`.execute(store.db);
      // With `SELECT *` PostgreSQL would answer "cached plan must not change result type".
      expect((await creatorsById(one.db, ['c,d'], 'twitter')).map((row) => row.userId)).toEqual(['c,d']);
    } finally {
      await sql`ALTER TABLE creators DROP COLUMN IF EXISTS added_later`.execute(store.db);
      await one.close();
    }
  });

  it('prepares nothing behind a transaction pooler, where the next transaction may get another server connection', async () => {
    const one = await oneConnection(true);
    try {
      await creatorsById(one.db, ODD_IDS, 'twitter');
      expect(await prepared(one)).toEqual([]);
    } finally {
      await one.close();
    }
  });
});

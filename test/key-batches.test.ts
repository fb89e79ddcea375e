import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInFlightWork } from '../src/access/in-flight.js';
import { openStore, RequestAbortedError, type Store } from '../src/store/connect.js';
import { creatorsById, creatorsByKey } from '../src/store/creators.js';
import type { KeyLookup } from '../src/store/key-batches.js';
import type { Creator } from '../src/domain/records.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { createTestApp } from './support/app.js';
import { postgresBinaries, startPrivateCluster, type PrivateCluster } from './support/private-servers.js';
import { createTestStore, type TestStore } from './support/store.js';

// One account's concurrent lookups of one kind are read in one statement (src/store/key-batches.ts);
// each request still gets exactly its own rows, in its own order, and nothing of another account's.

const IDS = Array.from({ length: 30 }, (_, i) => `u${String(i).padStart(2, '0')}`);

let store: TestStore;

beforeAll(async () => {
  store = await createTestStore();
  const row = (platform: string, id: string, i: number) => ({
    platform, user_id: id, username: `${platform}-${id}`, follower_count: i, avg_engagement_rate: 0, avg_video_engagement_rate: 0, avg_comment_count: 0,
    avg_like_count: 0, avg_retweet_count: 0, avg_view_count: 0, retweet_ratio: 0, reply_ratio: 0, post_count: 0, video_count: 0, evaluation_min: 0, evaluation_max: 0,
  });
  await store.db.insertInto('creators').values([...IDS.map((id, i) => row('twitter', id, i)), ...IDS.slice(0, 5).map((id, i) => row('instagram', id, i))]).execute();
}, 60_000);
afterAll(() => store?.close());

/** creatorsByKey, with the key lists of every statement it ran. */
function counted(name = 'creators (counted)') {
  const reads: string[][] = [];
  const lookup: KeyLookup<Creator> = {
    name,
    read: (db, keys, platform) => {
      reads.push([...keys]);
      return creatorsById(db, keys, platform);
    },
    keyOf: creatorsByKey.keyOf,
  };
  return { lookup, reads };
}

const request = (tenant: string | undefined, signal = new AbortController().signal) => store.cancellable(signal, () => tenant);
const ids = (rows: Creator[]) => rows.map((row) => row.userId);
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('key lookups shared by one account', () => {
  it("reads one account's lookups of a turn in one statement, each request getting its own keys in its own order", async () => {
    const { lookup, reads } = counted();
    const asked = [IDS.slice(0, 20), ['u25', 'missing', 'u03'], [...IDS.slice(10, 15)].reverse(), []];
    const before = store.queries.length;
    const answers = await Promise.all(asked.map((keys) => request('acct-a').lookup(lookup, 'twitter', keys)));
    expect(answers.map(ids)).toEqual([IDS.slice(0, 20), ['u25', 'u03'], [...IDS.slice(10, 15)].reverse(), []]);
    expect(answers[1].map((row) => row.username)).toEqual(['twitter-u25', 'twitter-u03']);
    expect(reads).toHaveLength(1);
    expect(new Set(reads[0])).toEqual(new Set([...IDS.slice(0, 20), 'u25', 'missing']));
    expect(store.queries.length - before).toBe(1);
  });

  it('never shares a statement across accounts, platforms or kinds of lookup', async () => {
    const { lookup, reads } = counted();
    const other = counted('another kind');
    const [a, b, none, instagram, kind] = await Promise.all([
      request('acct-a').lookup(lookup, 'twitter', ['u01', 'u02']),
      request('acct-b').lookup(lookup, 'twitter', ['u02', 'u03']),
      request(undefined).lookup(lookup, 'twitter', ['u04']),
      request('acct-a').lookup(lookup, 'instagram', ['u01', 'u29']),
      request('acct-a').lookup(other.lookup, 'twitter', ['u05']),
    ]);
    expect([a, b, none, kind].map(ids)).toEqual([['u01', 'u02'], ['u02', 'u03'], ['u04'], ['u05']]);
    expect(instagram.map((row) => row.username)).toEqual(['instagram-u01']);
    expect(reads.map((keys) => keys.join()).sort()).toEqual(['u01,u02', 'u01,u29', 'u02,u03', 'u04']);
    expect(other.reads).toEqual([['u05']]);
  });

  it('reads lookups of different turns apart', async () => {
    const { lookup, reads } = counted();
    const first = request('acct-a').lookup(lookup, 'twitter', ['u01']);
    await tick();
    const second = request('acct-a').lookup(lookup, 'twitter', ['u02']);
    expect([ids(await first), ids(await second)]).toEqual([['u01'], ['u02']]);
    expect(reads).toEqual([['u01'], ['u02']]);
  });

  it('starts another statement past a thousand keys, and reads a larger lookup alone', async () => {
    const { lookup, reads } = counted();
    const many = (n: number, from: number) => Array.from({ length: n }, (_, i) => `x${from + i}`);
    await Promise.all([
      request('acct-a').lookup(lookup, 'twitter', many(600, 0)),
      request('acct-a').lookup(lookup, 'twitter', many(600, 1000)),
      request('acct-a').lookup(lookup, 'twitter', many(1500, 2000)),
      request('acct-a').lookup(lookup, 'twitter', ['u01']),
    ]);
    expect(reads.map((keys) => keys.length)).toEqual([600, 600, 1500, 1]);
  });

  it("stops an aborted request's wait at once while the others sharing its statement get their rows", async () => {
    const { lookup, reads } = counted();
    const aborted = new AbortController();
    const leaving = request('acct-a', aborted.signal).lookup(lookup, 'twitter', ['u01', 'u02']);
    const staying = request('acct-a').lookup(lookup, 'twitter', ['u02', 'u03']);
    aborted.abort();
    await expect(leaving).rejects.toBeInstanceOf(RequestAbortedError);
    expect(ids(await staying)).toEqual(['u02', 'u03']);
    expect(reads).toHaveLength(1);
    // Aborted before asking: no statement at all.
    await expect(request('acct-a', aborted.signal).lookup(lookup, 'twitter', ['u09'])).rejects.toBeInstanceOf(RequestAbortedError);
    expect(reads).toHaveLength(1);
  });

  it('lets one request wait on more than ten lookups at once without a listener warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const signal = createInFlightWork().signal(new Request('http://localhost/graphql'));
      const lookups = Array.from({ length: 12 }, (_, i) => counted(`root ${i}`).lookup);
      const answers = await Promise.all(lookups.map((lookup, i) => request('acct-a', signal).lookup(lookup, 'twitter', [IDS[i]])));
      expect(answers.map(ids)).toEqual(IDS.slice(0, 12).map((id) => [id]));
      await tick();
      expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it("fails the requests of a failed statement, and not another account's", async () => {
    let failOnce = true;
    const failing: KeyLookup<Creator> = {
      name: 'failing',
      read: async (db, keys, platform) => {
        if (keys.includes('boom') && failOnce) {
          failOnce = false;
          await sql`SELECT 1/0`.execute(db);
        }
        return creatorsById(db, keys, platform);
      },
      keyOf: creatorsByKey.keyOf,
    };
    const results = await Promise.allSettled([
      request('acct-a').lookup(failing, 'twitter', ['boom']),
      request('acct-a').lookup(failing, 'twitter', ['u01']),
      request('acct-b').lookup(failing, 'twitter', ['u01']),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
    // The next turn's statement is a new one.
    expect(ids(await request('acct-a').lookup(failing, 'twitter', ['u01']))).toEqual(['u01']);
  });
});

describe.runIf(Boolean(process.env.TEST_DATABASE_URL))("a shared statement and the account's share of the pool", () => {
  let small: Store;
  beforeAll(async () => {
    small = await openStore({ databaseUrl: store.databaseUrl!, poolSize: 5, connectTimeoutMs: 10_000 });
  });
  afterAll(() => small?.close());

  it("counts against its account's share: it waits while the account holds its share, another account's does not", async () => {
    // A pool of 5: an account holds 4 at most. Account a holds its 4 with sleeps of 600 ms.
    const as = (tenant: string) => small.cancellable(new AbortController().signal, () => tenant);
    const sleeps = Array.from({ length: 4 }, () => sql`SELECT pg_sleep(0.6)`.execute(as('acct-a').db));
    await new Promise((resolve) => setTimeout(resolve, 150));
    const timed = async (tenant: string) => {
      const started = performance.now();
      expect(ids(await as(tenant).lookup(creatorsByKey, 'twitter', ['u01']))).toEqual(['u01']);
      return performance.now() - started;
    };
    const [a, b] = await Promise.all([timed('acct-a'), timed('acct-b')]);
    await Promise.all(sleeps);
    expect(b).toBeLessThan(300);
    expect(a).toBeGreaterThan(300);
  });
});

describe('through the GraphQL door', () => {
  it("answers each of one account's concurrent lookups with its own creator, another account's too, in fewer statements than requests", async () => {
    const app = await createTestApp();
    try {
      await app.store.db
        .insertInto('creators')
        .values(IDS.map((id, i) => ({
          platform: 'twitter', user_id: id, username: `name-${id}`, follower_count: i, avg_engagement_rate: 0, avg_video_engagement_rate: 0, avg_comment_count: 0,
          avg_like_count: 0, avg_retweet_count: 0, avg_view_count: 0, retweet_ratio: 0, reply_ratio: 0, post_count: 0, video_count: 0, evaluation_min: 0, evaluation_max: 0,
        })))
        .execute();
      const [a, b] = [await app.newKey(), await app.newKey()];
      const ask = (key: string, id: string) => app.graphql('query($u: String!) { creator(userId: $u) { userId username } }', { u: id }, key);
      const lookups = () => app.store.queries.filter((text) => text.includes('from "creators"') && text.includes('= ANY(')).length;
      const before = lookups();
      const asked = [...IDS.slice(0, 12).map((id) => [a, id]), ...IDS.slice(12, 16).map((id) => [b, id]), [a, 'no-such-user']] as const;
      const answers = await Promise.all(asked.map(([key, id]) => ask(key, id)));
      expect(answers.map((answer) => answer.status)).toEqual(asked.map(() => 200));
      expect(answers.map((answer) => answer.body.data.creator)).toEqual(asked.map(([, id]) => (IDS.includes(id) ? { userId: id, username: `name-${id}` } : null)));
      // 17 requests; the key checks and charges run first, so the lookups of a turn meet.
      expect(lookups() - before).toBeLessThan(asked.length);
    } finally {
      await app.close();
    }
  });
});

// A server of the test's own, restarted under a shared statement: the machine's is not stopped.
const bindir = process.env.TEST_DATABASE_URL ? await postgresBinaries() : null;

describe.skipIf(!bindir)('a database restart under a shared statement', () => {
  let cluster: PrivateCluster;
  let restarted: Store;

  beforeAll(async () => {
    cluster = await startPrivateCluster(bindir!);
    restarted = await openStore({ databaseUrl: cluster.url, connectTimeoutMs: 1_000, onConnectionError: () => {} });
    await migrateToLatest(restarted.db);
    await restarted.db
      .insertInto('creators')
      .values(IDS.map((id, i) => ({
        platform: 'twitter', user_id: id, username: `r-${id}`, follower_count: i, avg_engagement_rate: 0, avg_video_engagement_rate: 0, avg_comment_count: 0,
        avg_like_count: 0, avg_retweet_count: 0, avg_view_count: 0, retweet_ratio: 0, reply_ratio: 0, post_count: 0, video_count: 0, evaluation_min: 0, evaluation_max: 0,
      })))
      .execute();
  }, 120_000);
  afterAll(async () => {
    await restarted?.close();
    await cluster?.destroy();
  });

  it("fails every request of the statement the restart cut, and the account's next lookups are read again", { timeout: 60_000 }, async () => {
    const { lookup, reads } = counted();
    const ask = (keys: string[]) => restarted.cancellable(new AbortController().signal, () => 'acct-r').lookup(lookup, 'twitter', keys);
    expect(ids(await ask(['u01', 'u00']))).toEqual(['u01', 'u00']);

    // The shared statement waits on a lock while the server goes away beneath it.
    const locker = new pg.Client({ connectionString: cluster.url });
    locker.on('error', () => {});
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE creators IN ACCESS EXCLUSIVE MODE');
    const cut = [ask(['u02']), ask(['u03', 'u04']), ask(['u05'])].map((answer) => answer.then(() => 'answered', () => 'failed'));
    const readsBefore = reads.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    // One statement for the three, still waiting.
    expect(reads.length - readsBefore).toBe(1);
    // At once: in a fast stop the locker's backend could end its transaction before the waiting
    // one got its own signal, and the statement ran and answered (seen once in CI).
    await cluster.stop('immediate');
    expect(await Promise.all(cut)).toEqual(['failed', 'failed', 'failed']);
    await locker.end().catch(() => {});

    await cluster.start();
    // The pool's broken connections are dropped as they fail; then lookups read again, still shared.
    const deadline = Date.now() + 20_000;
    let answers: Creator[][] | null = null;
    while (answers === null && Date.now() < deadline) {
      const shared = reads.length;
      answers = await Promise.all([ask(['u06', 'u07']), ask(['u08'])]).catch(() => null);
      if (answers !== null) expect(reads.length - shared).toBe(1);
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(answers?.map(ids)).toEqual([['u06', 'u07'], ['u08']]);
  });
});

import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';
import {
  pgbouncerInstalled,
  postgresBinaries,
  startPgBouncer,
  startPrivateCluster,
  type PrivateCluster,
  type PrivatePgBouncer,
} from './support/private-servers.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';

// Past one process and one connection: searches served from a streaming replica
// (DATABASE_READ_URL), and the whole service behind PgBouncer in transaction mode. Real servers of
// the test's own: a primary, its replica, the pooler, and the service as a process.

// Clusters of the test's own, so both CI passes would run the same thing: it runs in the
// PostgreSQL pass (TEST_DATABASE_URL set) only.
const bindir = process.env.TEST_DATABASE_URL ? await postgresBinaries() : null;
const SEARCH = '/api/v1/search/twitter/user';

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function within(ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await sleep(100);
  }
}

const search = (server: ServerProcess, key: string, body: unknown) =>
  fetch(`${server.url}${SEARCH}`, { method: 'POST', headers: { authorization: key, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
    async (response) => ({ status: response.status, body: await response.json() }),
  );

describe.skipIf(!bindir)('searches from a read replica (DATABASE_READ_URL)', () => {
  let primary: PrivateCluster;
  let replica: PrivateCluster;
  let server: ServerProcess;
  let key: string;

  beforeAll(async () => {
    primary = await startPrivateCluster(bindir!);
    const env = { DATABASE_URL: primary.url };
    expect((await runCli(['seed', '--demo'], env)).code).toBe(0);
    key = (await runCli(['keys', 'create', '--plan', 'pro', '--rate', '10000'], env)).stdout.trim();
    replica = await startPrivateCluster(bindir!, primary);
    await within(20_000, async () => Number((await query<{ n: string }>(replica.url, 'SELECT count(*) AS n FROM creators'))[0].n) === 3_000);
    server = await startServerProcess({ ...env, DATABASE_READ_URL: replica.url, QUOTA_LEASE_UNITS: '0' });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    await replica?.destroy();
    await primary?.destroy();
  });

  it('reads searches on the replica, charges quota on the primary, and sees a new row within 5 seconds', { timeout: 60_000 }, async () => {
    const readsBefore = Number((await query<{ n: string }>(replica.url, "SELECT sum(xact_commit) AS n FROM pg_stat_database"))[0].n);
    const answer = await search(server, key, { locations: ['US'], page_size: 5 });
    expect(answer.status).toBe(200);
    const expected = Number((await query<{ n: string }>(primary.url, "SELECT count(*) AS n FROM creators WHERE platform = 'twitter' AND country = 'US'"))[0].n);
    expect(answer.body.data.total).toBe(expected);
    // The service holds connections to the replica under its read pool's name, and reads there.
    const readers = await query<{ n: string }>(replica.url, "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'creator-data-read'");
    expect(Number(readers[0].n)).toBeGreaterThan(0);
    const readsAfter = Number((await query<{ n: string }>(replica.url, "SELECT sum(xact_commit) AS n FROM pg_stat_database"))[0].n);
    expect(readsAfter).toBeGreaterThan(readsBefore);
    const used = await query<{ quota_used: string }>(primary.url, "SELECT a.quota_used FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.prefix = $1", [key.slice(0, 10)]);
    expect(Number(used[0].quota_used)).toBe(100);

    // Written on the primary, replicated, found through the replica's change feed.
    const line = `${JSON.stringify({ user_id: '88880001', username: 'replicatedrow', country: 'IS' })}\n`;
    expect((await runCli(['import', 'creators', '-'], { DATABASE_URL: primary.url }, line)).code).toBe(0);
    await within(5_000, async () => (await search(server, key, { query: 'replicatedrow' })).body.data.total === 1);
  });
});

describe.skipIf(!bindir || !pgbouncerInstalled())('behind PgBouncer in transaction mode', () => {
  let cluster: PrivateCluster;
  let bouncer: PrivatePgBouncer;
  let server: ServerProcess;
  let key: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    cluster = await startPrivateCluster(bindir!);
    // Four server connections shared by every client connection of the service and the CLI.
    bouncer = await startPgBouncer(cluster.url, 4);
    env = { DATABASE_URL: bouncer.urlFor('postgres'), DATABASE_POOLER: 'transaction' };
    const seeded = await runCli(['seed', '--demo'], env);
    expect(seeded.code, seeded.stderr).toBe(0);
    key = (await runCli(['keys', 'create', '--plan', 'pro', '--rate', '10000'], env)).stdout.trim();
    server = await startServerProcess({ ...env, DB_POOL_SIZE: '12' });
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    await bouncer?.stop();
    await cluster?.destroy();
  });

  it('answers concurrent searches exactly, meters quota exactly and follows the change feed', { timeout: 90_000 }, async () => {
    let charged = 0;
    const counted = async (body: unknown) => {
      const answer = await search(server, key, body);
      if (answer.status === 200) charged += 100;
      return answer;
    };
    const bodies = [{}, { locations: ['US', 'GB'] }, { query: 'tech', sort_by: 'follower_count' }, { gender: 2, page: 3 }];
    // 32 searches from 16 callers at once: the pro plan's in-flight limit, so none is refused,
    // while the pooler has only 4 server connections to share among them.
    const answers: Awaited<ReturnType<typeof counted>>[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async (_, caller) => {
        for (const i of [caller, caller + 16]) answers[i] = await counted(bodies[i % bodies.length]);
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(32).fill(200));
    const us = Number((await query<{ n: string }>(cluster.url, "SELECT count(*) AS n FROM creators WHERE country IN ('US', 'GB')"))[0].n);
    expect(answers[1].body.data.total).toBe(us);
    const graphql = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { authorization: key, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ videos(first: 3) { totalCount } liveStreams(first: 2) { totalCount } }' }),
    }).then((r) => r.json());
    expect(graphql.errors).toBeUndefined();
    expect(graphql.data.videos.totalCount).toBe(5_000);
    charged += 101;

    const line = `${JSON.stringify({ user_id: '88880002', username: 'pooledwrite', country: 'IS' })}\n`;
    expect((await runCli(['import', 'creators', '-'], env, line)).code).toBe(0);
    await within(5_000, async () => (await counted({ query: 'pooledwrite' })).body.data.total === 1);

    // Every search charged once: leases settle after a second idle.
    await within(10_000, async () => {
      const used = await query<{ quota_used: string }>(cluster.url, "SELECT a.quota_used FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.prefix = $1", [key.slice(0, 10)]);
      const leases = await query<{ n: string }>(cluster.url, 'SELECT count(*) AS n FROM quota_leases');
      return Number(used[0].quota_used) === charged && Number(leases[0].n) === 0;
    }).catch(async () => {
      const used = await query<{ quota_used: string }>(cluster.url, "SELECT a.quota_used FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.prefix = $1", [key.slice(0, 10)]);
      throw new Error(`quota_used ${used[0].quota_used}, charged ${charged}`);
    });
  });
});

// The most any system can serve of the follower-maximum workload on this machine: a node:http
// server that does only what no design avoids, reading the page's 20 rows by key from PostgreSQL
// (the service's own prepared statement, every column the contract shows) at the depth of the
// follower order the bound falls at, and sending them as JSON. No count, key, quota, validation,
// GraphQL or search: the depth is a binary search in the order, kept in this process's memory.
// 16 keep-alive connections, as `npm run bench`; the load generator is this process, the server a
// child, as there.
//   npm run bench:ceiling   (BENCH_DATABASE_URL, default the 1M bench database; BENCH_SECONDS; BENCH_CONCURRENCY)
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { creatorColumns } from '../src/store/database.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { HttpClient, machineBusySeconds, percentile, processCpuSeconds } from './load.js';

const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/creator_data_bench';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const PAGE = 20;

async function serve(): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  pool.on('error', () => {});
  // The follower order (descending, ties by id descending), as the index keeps it.
  const { rows } = await pool.query<{ user_id: string; follower_count: string }>(
    `SELECT user_id, follower_count FROM creators WHERE platform = 'twitter' ORDER BY follower_count DESC, user_id DESC`,
  );
  const ids = rows.map((row) => row.user_id);
  const followers = Float64Array.from(rows, (row) => Number(row.follower_count));
  const statement = `SELECT ${creatorColumns.join(', ')} FROM creators WHERE platform = $1 AND user_id = ANY($2)`;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', async () => {
      const max = Number(JSON.parse(body).followerCountMax);
      // The first row at or below the bound.
      let lo = 0;
      let hi = followers.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (followers[mid] > max) lo = mid + 1;
        else hi = mid;
      }
      const keys = ids.slice(lo, lo + PAGE);
      const { rows: page } = await pool.query({ name: 'page', text: statement, values: ['twitter', keys] });
      const byId = new Map(page.map((row) => [row.user_id, row]));
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ items: keys.map((id) => byId.get(id)) }));
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
}

async function drive(): Promise<void> {
  const child = fork(new URL(import.meta.url).pathname, ['serve'], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => child.once('message', (message: { port: number }) => resolve(message.port)));
  const http = new HttpClient(`http://127.0.0.1:${port}`, concurrency);
  const rng = seededRandom('ceiling');
  const bound = () => Math.round(Math.exp(Math.log(1_000) + rng.next() * (Math.log(10_000_000) - Math.log(1_000))));
  const run = async (ms: number, latencies: number[] | null) => {
    const end = performance.now() + ms;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const started = performance.now();
          const answer = await http.post('/', JSON.stringify({ followerCountMax: bound() }), {});
          if (answer.status !== 200 || (JSON.parse(answer.body) as { items: unknown[] }).items.length === 0) throw new Error(`bad answer ${answer.status}`);
          latencies?.push(performance.now() - started);
        }
      }),
    );
  };
  await run(3_000, null);
  const latencies: number[] = [];
  const serverCpu = processCpuSeconds(child.pid);
  const ownCpu = process.cpuUsage();
  const machine = machineBusySeconds();
  const started = performance.now();
  await run(seconds * 1_000, latencies);
  // The whole machine's CPU a request, and how busy its cores were (as `npm run bench` reports it).
  const machineSeconds = machineBusySeconds() - machine;
  const machineMs = (machineSeconds * 1000) / latencies.length;
  const busyPercent = (machineSeconds / ((performance.now() - started) / 1000)) * 100;
  const serverMs = ((processCpuSeconds(child.pid) - serverCpu) * 1000) / latencies.length;
  const own = process.cpuUsage(ownCpu);
  const sorted = Float64Array.from(latencies).sort();
  process.stdout.write(
    `page read only, follower maximum log-uniform 1k–10M, ${concurrency} connections, ${seconds} s: ` +
      `${(latencies.length / seconds).toFixed(0)} req/s, p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${percentile(sorted, 0.99).toFixed(1)} ms; ` +
      `CPU a request: server ${serverMs.toFixed(2)} ms, load generator ${((own.user + own.system) / 1000 / latencies.length).toFixed(2)}, ` +
      `the whole machine ${machineMs.toFixed(2)} (${busyPercent.toFixed(0)} % busy, 100 a core)\n`,
  );
  child.kill();
  process.exit(0);
}

await (process.argv[2] === 'serve' ? serve() : drive());

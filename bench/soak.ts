// npm run soak: mixed traffic against a real `creator-data serve` process for a while, printing the
// server's RSS and V8 heap every 10 s, to tell a leak or an unbounded structure from a warm-up.
//
//   SOAK_SECONDS      total run, warm-up included (default 660: 60 s warm-up + 10 minutes)
//   SOAK_WARMUP       seconds before the baseline is taken (default 60)
//   SOAK_CONNECTIONS  concurrent clients (default 32)
//   SOAK_DATABASE_URL a PostgreSQL database to use (demo data is loaded if missing); unset: the
//                     embedded store in a temp folder
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'undici';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { seededRandom } from '../src/upstreams/seeded-random.js';

const bin = fileURLToPath(new URL('../bin/creator-data.js', import.meta.url));
const seconds = Number(process.env.SOAK_SECONDS ?? 660);
const warmup = Number(process.env.SOAK_WARMUP ?? 60);
const connections = Number(process.env.SOAK_CONNECTIONS ?? 32);
const databaseUrl = process.env.SOAK_DATABASE_URL;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function cli(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`creator-data ${args.join(' ')} exited ${code}`))));
  });
}

/** Starts a long-running creator-data command and waits for `ready` on its stdout. */
function daemon(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let seen = false;
    const onData = (chunk: Buffer) => {
      if (seen) return;
      out += chunk.toString();
      const match = ready.exec(out);
      if (match) {
        seen = true;
        resolve({ child, match });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`creator-data ${args.join(' ')} exited ${code}: ${out}`)));
  });
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function heapMb(metricsUrl: string): Promise<{ used: number; total: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 1024 / 1024;
  return { used: read('nodejs_heap_size_used_bytes'), total: read('nodejs_heap_size_total_bytes') };
}

async function main(): Promise<void> {
  const dataDir = databaseUrl ? null : mkdtempSync(join(tmpdir(), 'cds-soak-'));
  const storeEnv: Record<string, string> = databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: dataDir!, DATABASE_URL: '' };
  process.stderr.write(`soak: ${seconds} s (${warmup} s warm-up), ${connections} connections, store: ${databaseUrl ? 'PostgreSQL' : 'embedded'}\n`);

  const simPort = await freePort();
  const simulator = await daemon(['simulate', 'instagram', '--port', String(simPort)], {}, /listening|http:\/\//);
  await cli(['seed', '--demo'], storeEnv);
  const key = (await cli(['keys', 'create', '--plan', 'pro', '--rate', '100000', '--quota', String(Number.MAX_SAFE_INTEGER)], storeEnv)).trim();
  const metricsPort = await freePort();
  const server = await daemon(
    ['serve'],
    { ...storeEnv, PORT: '0', METRICS_PORT: String(metricsPort), INSTAGRAM_UPSTREAM_URL: `http://127.0.0.1:${simPort}`, LOG_LEVEL: 'warn' },
    /listening on (http:\/\/\S+)/,
  );
  const base = server.match[1];
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const agent = new Agent({ connections, keepAliveTimeout: 30_000 });

  const rng = seededRandom('soak');
  const countries = ['US', 'GB', 'IN', 'BR', 'JP', 'DE', 'FR', 'KR'];
  const words = ['tech', 'food', 'travel', 'music', 'art', 'gaming', 'a', 'zz', 'review'];
  const json = (path: string, body: unknown) => ({ path, method: 'POST' as const, body: JSON.stringify(body) });
  const gql = (query: string, variables: unknown) => json('/graphql', { query, variables });
  const liveCursors: string[] = [];
  const makers: (() => { path: string; method: 'GET' | 'POST'; body?: string })[] = [
    () => json('/api/v1/search/twitter/user', { locations: [rng.pick(countries)], follower_count_min: rng.int(0, 100_000), page: rng.int(1, 5), page_size: 20 }),
    () => json('/api/v1/search/twitter/user', { query: rng.pick(words), page_size: rng.int(1, 50) }),
    () => json('/api/v1/search/youtube/video', { categorys: [rng.int(1, 40)], create_at_start: '2026-01-01', page: rng.int(1, 3) }),
    () => json('/api/v1/search/youtube/video', { query: rng.pick(words), video_type: rng.pick([1, 2]) }),
    () => json('/api/v1/twitch/search/live', liveCursors.length && rng.chance(0.5) ? { after: rng.pick(liveCursors), first: 10 } : { first: rng.int(1, 50) }),
    () => gql('query($f: CreatorFilter, $a: String) { creators(filter: $f, first: 10, after: $a) { totalCount pageInfo { endCursor } nodes { userId followerCount lastPost { postId } } } }', { f: { gender: rng.pick(['MALE', 'FEMALE']) } }),
    () => gql('{ videos(first: 5, sortBy: NEWEST) { totalCount nodes { videoId channel { title followerCount } } } viewer { quotaUsed } }', {}),
    () => ({ path: `/api/v1/instagram/realtime/user/medias?user_id=${rng.pick(['1003', '1006', String(rng.int(100_000, 999_999)), '5000', '4220', '4040'])}`, method: 'GET' }),
    () => ({ path: '/api/ping', method: 'GET' }),
    () => json('/api/v1/search/twitter/user', { follower_count_min: 'many', constructor: 1 }),
  ];

  const statuses = new Map<number, number>();
  let done = 0;
  let running = true;
  const loops = Array.from({ length: connections }, async () => {
    while (running) {
      const call = rng.pick(makers)();
      try {
        const response = await request(`${base}${call.path}`, {
          method: call.method,
          body: call.body,
          headers: { authorization: key, 'content-type': 'application/json' },
          dispatcher: agent,
        });
        const text = await response.body.text();
        if (call.path.includes('/live') && response.statusCode === 200) {
          const offset = JSON.parse(text).data.offset as string;
          if (offset && liveCursors.length < 100) liveCursors.push(offset);
        }
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
      } catch {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
      }
      done += 1;
    }
  });

  const pid = server.child.pid!;
  const samples: { t: number; rss: number; heap: number }[] = [];
  process.stdout.write('   t(s)   RSS MB  heap used MB  heap total MB    req/s  statuses\n');
  const started = performance.now();
  let lastDone = 0;
  for (let t = 10; t <= seconds; t += 10) {
    await new Promise((resolve) => setTimeout(resolve, started + t * 1000 - performance.now()));
    const rss = rssMb(pid);
    const heap = await heapMb(metricsUrl);
    samples.push({ t, rss, heap: heap.used });
    const rate = (done - lastDone) / 10;
    lastDone = done;
    const counts = [...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}:${n}`).join(' ');
    process.stdout.write(`${String(t).padStart(7)} ${rss.toFixed(1).padStart(8)} ${heap.used.toFixed(1).padStart(13)} ${heap.total.toFixed(1).padStart(14)} ${rate.toFixed(0).padStart(8)}  ${counts}\n`);
  }
  running = false;
  await Promise.all(loops);
  await agent.close();

  // RSS at one instant depends on where the garbage collector is in its cycle: compare the lowest
  // and the mean RSS of the first minute after the warm-up with those of the last minute.
  const window = (from: number, to: number) => samples.filter((sample) => sample.t > from && sample.t <= to);
  const firstMinute = window(warmup, Math.min(warmup + 60, seconds));
  const lastMinute = window(Math.max(seconds - 60, warmup), seconds);
  const min = (list: typeof samples) => Math.min(...list.map((sample) => sample.rss));
  const mean = (list: typeof samples) => list.reduce((sum, sample) => sum + sample.rss, 0) / list.length;
  const growth = Math.max(min(lastMinute) - min(firstMinute), mean(lastMinute) - mean(firstMinute));
  const peak = Math.max(...samples.filter((sample) => sample.t > warmup).map((sample) => sample.rss));
  process.stdout.write(
    `\nfirst minute after the warm-up: RSS min ${min(firstMinute).toFixed(1)} MB, mean ${mean(firstMinute).toFixed(1)} MB\n` +
      `last minute: RSS min ${min(lastMinute).toFixed(1)} MB, mean ${mean(lastMinute).toFixed(1)} MB (peak over the run ${peak.toFixed(1)} MB)\n` +
      `RSS growth after the warm-up: ${growth.toFixed(1)} MB over ${seconds - warmup} s, ${done} requests -> ${growth <= 50 ? 'OK (<= 50 MB)' : 'TOO MUCH (> 50 MB)'}\n`,
  );
  server.child.kill('SIGTERM');
  simulator.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  process.exitCode = growth <= 50 ? 0 : 1;
}

await main();

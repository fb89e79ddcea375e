import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

// PostgreSQL and Redis servers of a test's own, which it may stop and start at will without
// disturbing the machine's shared ones (and the other test files running beside it).

const run = promisify(execFile);

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface PrivateCluster {
  url: string;
  start(): Promise<void>;
  /**
   * `pg_ctl stop -m fast`: what an operator's restart does; connections get 57P01. `immediate`: a
   * crash, every backend gone at once without ending its transaction (a lock it held is never
   * released to a waiter; the next start recovers).
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  destroy(): Promise<void>;
}

/** The PostgreSQL server binaries (initdb, pg_ctl), or null where none are installed. */
export async function postgresBinaries(): Promise<string | null> {
  try {
    const { stdout } = await run('pg_config', ['--bindir']);
    const dir = stdout.trim();
    return existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')) ? dir : null;
  } catch {
    return null;
  }
}

/**
 * A fresh cluster in a temp folder on a free port (initdb, trust auth, fsync off). PostgreSQL
 * refuses to run as root, so as root it runs as the `postgres` user, which owns the folder.
 */
/** A temp folder the server processes may write: owned by `postgres` when the tests run as root. */
async function serverFolder(prefix: string): Promise<{ dir: string; asRoot: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  return { dir, asRoot };
}

/** Runs a server binary, as `postgres` when the tests run as root (PostgreSQL and PgBouncer refuse root). */
const asServerUser = (asRoot: boolean, binary: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', binary, ...args]) : run(binary, args));

export async function startPrivateCluster(bindir: string, standbyOf?: PrivateCluster): Promise<PrivateCluster> {
  const { dir, asRoot } = await serverFolder('cds-pg-');
  const data = join(dir, 'data');
  const port = await freePort();
  const pgRun = (command: string, args: string[]) => asServerUser(asRoot, join(bindir, command), args);
  if (standbyOf) {
    // A streaming replica: a base backup of the primary with standby.signal and its connection (-R).
    const primary = new URL(standbyOf.url);
    // A fast checkpoint: the default spread one can take minutes on a busy primary.
    await pgRun('pg_basebackup', ['-D', data, '-R', '-X', 'stream', '-c', 'fast', '-h', primary.hostname, '-p', primary.port, '-U', 'postgres']);
  } else {
    await pgRun('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8']);
  }
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=50`;
  const start = async () => {
    await pgRun('pg_ctl', ['-D', data, '-o', serverOptions, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'fast') => {
    await pgRun('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async destroy() {
      await stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis {
  url: string;
  start(): Promise<void>;
  /** Kills the server: clients see their connection reset, then refused. */
  stop(): Promise<void>;
  /** SIGSTOP: a hung server, its connections still open and "ready", answering nothing. */
  pause(): void;
  /** SIGCONT: the paused server runs everything sent to it meanwhile. */
  resume(): void;
}

export function redisServerInstalled(): boolean {
  return ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].some(existsSync);
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise<void>((resolve, reject) => {
      let output = '';
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (/Ready to accept connections/.test(output)) resolve();
      });
      child!.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
    });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop: () =>
      new Promise<void>((resolve) => {
        const current = child;
        if (!current || current.exitCode !== null) return resolve();
        current.once('exit', () => resolve());
        current.kill('SIGKILL');
      }),
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
}

export function pgbouncerInstalled(): boolean {
  return ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].some(existsSync);
}

export interface PrivatePgBouncer {
  /** The pooler's URL for `database` (every database of the server behind it is reachable). */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

/** PgBouncer in transaction mode in front of `serverUrl`, with a small pool so connections are shared. */
export async function startPgBouncer(serverUrl: string, poolSize = 4): Promise<PrivatePgBouncer> {
  const { dir, asRoot } = await serverFolder('cds-pgbouncer-');
  const server = new URL(serverUrl);
  const port = await freePort();
  const config = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(
    config,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 500',
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    for (const file of ['pgbouncer.ini', 'users.txt']) chownSync(join(dir, file), Number(stdout.trim()), Number(gid.trim()));
  }
  const binary = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find(existsSync)!;
  const child = asRoot ? spawn('runuser', ['-u', 'postgres', '--', binary, config], { stdio: ['ignore', 'ignore', 'pipe'] }) : spawn(binary, [config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const deadline = Date.now() + 15_000;
    const poll = () => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve();
      });
      socket.on('error', () => {
        socket.destroy();
        if (child.exitCode !== null || Date.now() > deadline) reject(new Error(`pgbouncer did not start: ${output}`));
        else setTimeout(poll, 100);
      });
    };
    poll();
  });
  return {
    urlFor: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        // SIGTERM: immediate shutdown (SIGINT would wait for every client to leave).
        child.kill('SIGTERM');
      }),
  };
}

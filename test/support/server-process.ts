import { spawn, type ChildProcess } from 'node:child_process';
import { binArgs } from './bin.js';


export interface ServerProcess {
  url: string;
  output: () => string;
  /** Whether the process has ended (it must not, on its own). */
  exited: () => boolean;
  /** The exit code once the process ends (null when a signal killed it). */
  exit: Promise<number | null>;
  /** SIGTERM, and the exit code once it has stopped. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash, nothing flushed. */
  kill(): Promise<number | null>;
}

/** A real `creator-data serve` in its own process, its output recorded; not waited for. */
export function spawnServerProcess(env: Record<string, string>): Omit<ServerProcess, 'url'> & { stdout: NodeJS.ReadableStream } {
  const child: ChildProcess = spawn(process.execPath, binArgs(['serve']), {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    stdout: child.stdout!,
    output: () => output,
    exited: () => child.exitCode !== null || child.signalCode !== null,
    exit,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exit;
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return exit;
    },
  };
}

/** A real `creator-data serve` in its own process (on a free port unless PORT is given), as a second instance would run. */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const server = spawnServerProcess(env);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${server.output()}`)), 30_000);
    server.stdout.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(server.output());
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void server.exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${server.output()}`));
    });
  });
  return { url, output: server.output, exited: server.exited, exit: server.exit, stop: server.stop, kill: server.kill };
}

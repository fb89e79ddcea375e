import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SimulatorListenOptions {
  /** 0 (the default) picks any free port. */
  port?: number;
  host?: string;
}

export interface SimulatorServer {
  url: string;
  /** Requests received, all of them or those for one path (query string excluded). */
  requestCount(path?: string): number;
  resetRequestCounts(): void;
  /** Stops listening and drops open connections, hanging ones included. */
  close(): Promise<void>;
}

export type SimulatorHandler = (request: IncomingMessage, response: ServerResponse, url: URL) => void | Promise<void>;

/** The HTTP plumbing both simulators share: listening, request counting, closing. */
export async function startSimulatorServer(
  handler: SimulatorHandler,
  { port = 0, host = '127.0.0.1' }: SimulatorListenOptions,
): Promise<SimulatorServer> {
  const countsByPath = new Map<string, number>();
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://simulator');
    countsByPath.set(url.pathname, (countsByPath.get(url.pathname) ?? 0) + 1);
    Promise.resolve(handler(request, response, url)).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: boundPort } = server.address() as AddressInfo;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${hostInUrl}:${boundPort}`,
    requestCount: (path) =>
      path === undefined ? [...countsByPath.values()].reduce((sum, n) => sum + n, 0) : (countsByPath.get(path) ?? 0),
    resetRequestCounts: () => countsByPath.clear(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  response.end(JSON.stringify(body));
}

/** Resolves true after ms, or false as soon as the client goes away (so no timer outlives a test). */
export function waitUnlessClosed(response: ServerResponse, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      response.off('close', onClose);
      resolve(true);
    }, ms);
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    response.once('close', onClose);
  });
}

import { Agent, request } from 'undici';
import type { z } from 'zod';
import { UpstreamCallCancelledError, UpstreamUnavailableError, type UpstreamName } from './errors.js';

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  /** The body of a 2xx answer; other bodies are discarded unread. */
  text: string;
}

/**
 * The connections to one upstream: kept alive between calls, and closed on shutdown (a process
 * must not linger on an upstream's idle sockets, nor cut its in-flight calls off mid-answer).
 */
export interface UpstreamHttp {
  get(upstream: UpstreamName, url: string, options: UpstreamGetOptions): Promise<UpstreamResponse>;
  /** Lets in-flight calls finish, then closes every socket. */
  close(): Promise<void>;
}

export interface UpstreamGetOptions {
  timeoutMs: number;
  headers?: Record<string, string>;
  /** Cuts the call off when whoever waits for it stops waiting. */
  signal?: AbortSignal;
}

export type UpstreamObserver = (upstream: UpstreamName, outcome: 'ok' | 'client_error' | 'server_error' | 'timeout' | 'network' | 'cancelled', seconds: number) => void;

export function createUpstreamHttp(options: { observe?: UpstreamObserver } = {}): UpstreamHttp {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  const observe = options.observe ?? (() => {});
  return {
    /**
     * One GET with a deadline covering the body as well as the headers, so an upstream that stalls
     * mid-body cannot hold a request open. Timeouts and network errors become
     * UpstreamUnavailableError, the caller's abort UpstreamCallCancelledError; statuses are left
     * to the caller.
     */
    async get(upstream, url, options) {
      const { signal } = options;
      if (signal?.aborted) throw new UpstreamCallCancelledError(upstream);
      const controller = new AbortController();
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, options.timeoutMs);
      const cancel = () => controller.abort();
      signal?.addEventListener('abort', cancel, { once: true });
      try {
        const response = await request(url, { method: 'GET', headers: options.headers, signal: controller.signal, dispatcher: agent });
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        if (response.statusCode < 200 || response.statusCode >= 300) {
          // Dropping an unread body frees the connection instead of leaving it to garbage collection.
          await response.body.dump();
          observe(upstream, response.statusCode >= 500 ? 'server_error' : 'client_error', seconds());
          return { status: response.statusCode, headers, text: '' };
        }
        const text = await response.body.text();
        observe(upstream, 'ok', seconds());
        return { status: response.statusCode, headers, text };
      } catch (error) {
        const cancelled = !timedOut && signal?.aborted === true;
        observe(upstream, timedOut ? 'timeout' : cancelled ? 'cancelled' : 'network', seconds());
        if (cancelled) throw new UpstreamCallCancelledError(upstream, { cause: error });
        if (timedOut) {
          throw new UpstreamUnavailableError(upstream, 'timeout', `no answer within ${options.timeoutMs} ms`, { cause: error });
        }
        throw new UpstreamUnavailableError(upstream, 'network', 'request failed', { cause: error });
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', cancel);
      }
    },
    close: () => agent.close(),
  };
}

/** Parses and validates a JSON body; anything unexpected is the upstream's fault, never a TypeError later. */
export function parseUpstreamBody<S extends z.ZodType>(upstream: UpstreamName, text: string, schema: S): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UpstreamUnavailableError(upstream, 'malformed', 'body is not JSON', { cause: error });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new UpstreamUnavailableError(upstream, 'malformed', 'body does not have the expected shape', {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

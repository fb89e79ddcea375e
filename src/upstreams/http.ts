import type { z } from 'zod';
import { UpstreamUnavailableError, type UpstreamName } from './errors.js';

export interface UpstreamResponse {
  status: number;
  headers: Headers;
  /** The body of a 2xx answer; other bodies are discarded unread. */
  text: string;
}

/**
 * One GET with a deadline covering the body as well as the headers, so an upstream that stalls
 * mid-body cannot hold a request open. Timeouts and network errors become UpstreamUnavailableError;
 * statuses are left to the caller.
 */
export async function getUpstream(
  upstream: UpstreamName,
  url: string,
  options: { timeoutMs: number; headers?: Record<string, string> },
): Promise<UpstreamResponse> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  try {
    const response = await fetch(url, { headers: options.headers, signal: controller.signal });
    if (!response.ok) {
      // Cancelling an unread body frees the connection instead of leaving it to garbage collection.
      await response.body?.cancel();
      return { status: response.status, headers: response.headers, text: '' };
    }
    return { status: response.status, headers: response.headers, text: await response.text() };
  } catch (error) {
    if (timedOut) {
      throw new UpstreamUnavailableError(upstream, 'timeout', `no answer within ${options.timeoutMs} ms`, { cause: error });
    }
    throw new UpstreamUnavailableError(upstream, 'network', 'request failed', { cause: error });
  } finally {
    clearTimeout(timer);
  }
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

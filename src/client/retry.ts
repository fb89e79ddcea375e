// The contract's client retry policy (§7, §8): wait 1 s, double after each failure, at most 32 s;
// a 429's Retry-After is honoured as the server gave it.

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The wait after the `failures`-th failed attempt: initial, 2 × initial, 4 × … up to the ceiling. */
export function backoffDelay(failures: number, initialMs: number, maxMs: number): number {
  return Math.min(initialMs * 2 ** Math.max(0, failures - 1), maxMs);
}

/** Retry-After in milliseconds (whole seconds, or an HTTP date); null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** A timer the call's signal cancels, so an aborted call does not sit out its backoff. */
export const defaultSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

// Apart from log.ts, so the search threads use it without loading pino; a leaf: it knows the
// logger by the two calls it makes.
type Log = { warn(message: string, details?: Record<string, unknown>): void; info(message: string): void };

export interface ThrottledWarning {
  /** One more failure: warned about at most once per interval, with how many were not. */
  failed(cause: unknown): void;
  /** It works again: said once, if a failure was warned about. */
  recovered(message: string): void;
}

/** A warning about something that keeps failing (every request, every poll), at most once per `intervalMs`. */
export function throttledWarning(log: Log, message: string, intervalMs: number): ThrottledWarning {
  let lastWarned = -Infinity;
  let suppressed = 0;
  let failing = false;
  return {
    failed(cause) {
      failing = true;
      const now = performance.now();
      if (now - lastWarned < intervalMs) {
        suppressed += 1;
        return;
      }
      log.warn(message, { error: cause instanceof Error ? cause.message : String(cause), failedSinceLastWarning: suppressed });
      lastWarned = now;
      suppressed = 0;
    },
    recovered(recoveredMessage) {
      if (!failing) return;
      failing = false;
      lastWarned = -Infinity;
      suppressed = 0;
      log.info(recoveredMessage);
    },
  };
}

import type { Logger } from './services.js';

// One JSON line per event on stderr. Request headers are never logged, so keys never are.
export function createLogger(stream: NodeJS.WritableStream = process.stderr, quiet = false): Logger {
  const write = (level: string, message: string, details?: Record<string, unknown>) => {
    if (quiet && level === 'info') return;
    stream.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...details })}\n`);
  };
  return {
    info: (message, details) => write('info', message, details),
    warn: (message, details) => write('warn', message, details),
    error: (message, details) => write('error', message, details),
  };
}

/** The log line for an error a client sees only as 500 / INTERNAL: the cause, with its stack. */
export function logUnexpected(log: Logger): (cause: unknown) => void {
  return (cause) => log.error('request failed', { error: cause instanceof Error ? (cause.stack ?? cause.message) : String(cause) });
}

import pino from 'pino';
import type { ErrorReport } from '../domain/errors.js';
import { throttledWarning } from './throttled-warning.js';

/** What every layer logs through: pino in the server (below), a plain console in tests and tools. */
export interface Logger {
  info(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
  /** Writes what is buffered (before the process exits). */
  flush?(): void;
}

/**
 * Structured JSON logs, one line per event (pino): `time`, `level`, `message` and the details.
 * Request headers are never logged, and any field named like a credential is redacted, so keys
 * never reach a log.
 */
export function createLogger(stream: NodeJS.WritableStream | pino.DestinationStream = pino.destination({ dest: 2, sync: false }), quiet = false): Logger {
  const logger = pino(
    {
      level: quiet ? 'warn' : (process.env.LOG_LEVEL ?? 'info'),
      messageKey: 'message',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: ['authorization', 'key', 'apiKey', 'token', '*.authorization', '*.key', '*.token'], censor: '[redacted]' },
    },
    stream as pino.DestinationStream,
  );
  return {
    info: (message, details) => logger.info(details ?? {}, message),
    warn: (message, details) => logger.warn(details ?? {}, message),
    error: (message, details) => logger.error(details ?? {}, message),
    flush: () => logger.flush(),
  };
}

/**
 * Errors a client sees only as 500 / INTERNAL go to the error log with their stack and, when one
 * request met them, its id (the `X-Request-Id` the client was answered with, so a support ticket
 * leads to the line). A database outage fails every request at once: it is one warning per
 * interval, with how many failed, whichever requests they were.
 */
export function errorReport(log: Logger, requestId?: string): ErrorReport {
  let report = reports.get(log);
  if (!report) reports.set(log, (report = newErrorReport(log, UNAVAILABLE_WARNING_INTERVAL_MS)));
  if (requestId === undefined) return report;
  return { unexpected: (cause) => logUnexpected(log, cause, requestId), unavailable: report.unavailable };
}

// One report per logger, so the warning interval holds across requests.
const reports = new WeakMap<Logger, ErrorReport>();
const UNAVAILABLE_WARNING_INTERVAL_MS = 5_000;

function newErrorReport(log: Logger, intervalMs: number): ErrorReport {
  const unavailable = throttledWarning(log, 'database unavailable: answering 503', intervalMs);
  return {
    unexpected: (cause) => logUnexpected(log, cause),
    unavailable: (cause) => unavailable.failed(cause),
  };
}

function logUnexpected(log: Logger, cause: unknown, requestId?: string): void {
  log.error('request failed', { ...(requestId === undefined ? {} : { requestId }), error: cause instanceof Error ? (cause.stack ?? cause.message) : String(cause) });
}

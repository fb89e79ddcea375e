import pg from 'pg';

export interface NotificationHandlers {
  /** The payload of one NOTIFY on the channel. */
  message(payload: string): void;
  /**
   * LISTEN is in place, for the first time or again after a loss: whatever was notified while it
   * was not has been missed.
   */
  listening(): void;
}

export interface Listener {
  close(): Promise<void>;
}

export interface ListenOptions {
  /** The session could not be opened, or broke; another attempt follows after a backoff. */
  onError?: (error: Error) => void;
  /** The first retry's delay; each failure doubles it, up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * LISTEN on a PostgreSQL session of its own (a pooled connection would drop it): NOTIFY reaches a
 * session, and only while it lives. A lost session is replaced with backoff, and `listening` runs
 * each time LISTEN is in place again. Resolves once the first attempt has succeeded or failed (it
 * is retried in the background).
 */
export async function listenPostgres(config: pg.ClientConfig, channel: string, handlers: NotificationHandlers, options: ListenOptions = {}): Promise<Listener> {
  const firstBackoffMs = options.backoffMs ?? 100;
  const maxBackoffMs = options.maxBackoffMs ?? 5_000;
  let backoffMs = firstBackoffMs;
  let session: pg.Client | null = null;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  /** The attempt under way, for close() to wait out. */
  let connecting = Promise.resolve();

  async function attempt(): Promise<void> {
    retry = undefined;
    const client = new pg.Client(config);
    let lost = false;
    const lose = (error: Error) => {
      if (lost) return;
      lost = true;
      if (session === client) session = null;
      client.end().catch(() => {});
      if (closed) return;
      options.onError?.(error);
      retry = setTimeout(() => (connecting = attempt()), backoffMs);
      backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
    };
    // Without an 'error' listener, a broken connection (a server restart, a terminated backend)
    // would end the process.
    client.on('error', lose);
    client.on('end', () => lose(new Error('the notification session ended')));
    client.on('notification', (notification) => {
      if (notification.channel === channel) handlers.message(notification.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (error) {
      lose(error as Error);
      return;
    }
    if (lost) return;
    if (closed) {
      lost = true;
      await client.end().catch(() => {});
      return;
    }
    session = client;
    backoffMs = firstBackoffMs;
    handlers.listening();
  }

  await (connecting = attempt());
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await connecting;
      await session?.end().catch(() => {});
    },
  };
}

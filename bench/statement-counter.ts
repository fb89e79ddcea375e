// Statements per operation, counted on the wire: a TCP relay between one system and PostgreSQL
// that reads the frontend's messages and counts each simple Query ('Q') and each extended-protocol
// Execute ('E'), i.e. every statement the system sends, transaction control included, whatever
// its driver or whether it prepares statements. PostgreSQL's own pg_stat_statements needs a
// server restart to load (shared_preload_libraries), which a shared machine does not get.
//
// Only with BENCH_COUNT_STATEMENTS=1: the relay is one more hop on every statement, so a run that
// counts should not be the run whose figures are quoted (count with BENCH_CHECK_ONLY=1).
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const QUERY = 0x51;
const EXECUTE = 0x45;

/** Walks one connection's frontend byte stream message by message (messages may span chunks). */
class FrontendMessages {
  private startup = true;
  private header = Buffer.alloc(0);
  private skip = 0;

  constructor(private readonly onStatement: () => void) {}

  feed(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        const skipped = Math.min(this.skip, chunk.length - at);
        this.skip -= skipped;
        at += skipped;
        continue;
      }
      // Startup-phase messages have no type byte: length, then a protocol or request code.
      const headerSize = this.startup ? 8 : 5;
      const taken = chunk.subarray(at, at + headerSize - this.header.length);
      this.header = Buffer.concat([this.header, taken]);
      at += taken.length;
      if (this.header.length < headerSize) return;
      if (this.startup) {
        const code = this.header.readInt32BE(4);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.startup = false;
        this.skip = this.header.readInt32BE(0) - 8;
      } else {
        if (this.header[0] === QUERY || this.header[0] === EXECUTE) this.onStatement();
        this.skip = this.header.readInt32BE(1) - 4;
      }
      this.header = Buffer.alloc(0);
    }
  }
}

export interface StatementCounter {
  /** `databaseUrl` with its host and port replaced by the relay's. */
  url: string;
  /** Statements relayed so far, all connections together. */
  count(): number;
  close(): Promise<void>;
}

export async function startStatementCounter(databaseUrl: string): Promise<StatementCounter> {
  const target = new URL(databaseUrl);
  let statements = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const messages = new FrontendMessages(() => statements++);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => messages.feed(chunk));
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relayed = new URL(databaseUrl);
  relayed.hostname = '127.0.0.1';
  relayed.port = String((server.address() as AddressInfo).port);
  return {
    url: relayed.toString(),
    count: () => statements,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

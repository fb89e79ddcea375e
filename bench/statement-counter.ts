// Statements per operation, counted on the wire: a TCP relay between one system and PostgreSQL
// that reads the frontend's messages and counts each simple Query ('Q') and each extended-protocol
// Execute ('E') whatever the driver, naming each by its SQL text (from its Parse, remembered per
// connection for named prepared statements). PostgreSQL's own pg_stat_statements needs a server
// restart to load (shared_preload_libraries), which a shared machine does not get.
//
// Counted: the statements that read or count data. Left out, as test/graph.test.ts leaves them
// out: transaction control (BEGIN, COMMIT, …), the service's change-feed polls (a transaction on
// catalog_changes every 500 ms, whole) and its metering (keys, accounts, quota leases), which
// would otherwise land at random in whichever request was running.
//
// Only with BENCH_COUNT_STATEMENTS=1: the relay is one more hop on every statement, so a run that
// counts should not be the run whose figures are quoted (count with BENCH_CHECK_ONLY=1).
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const NOT_COUNTED = /catalog_changes|pg_current_snapshot|pg_snapshot|quota_leases|"?accounts"?|api_keys/i;
const TRANSACTION_START = /^\s*(begin|start transaction)/i;
const TRANSACTION_END = /^\s*(commit|rollback|end)\b/i;

/** The C string at `at` in `body`, and where the next field starts. */
function cString(body: Buffer, at: number): [string, number] {
  const end = body.indexOf(0, at);
  return [body.toString('utf8', at, end), end + 1];
}

/** One connection's frontend byte stream, message by message (messages may span chunks). */
class FrontendMessages {
  private startup = true;
  private buffered: Buffer = Buffer.alloc(0);
  private readonly prepared = new Map<string, string>();
  private portal = '';
  /** Statements of the open transaction, or null outside one; dropped whole if one is not counted. */
  private transaction: { counted: number; background: boolean } | null = null;

  constructor(private readonly onStatements: (count: number) => void) {}

  feed(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    for (;;) {
      const headerSize = this.startup ? 8 : 5;
      if (this.buffered.length < headerSize) return;
      // Startup-phase messages have no type byte: length, then a protocol or request code.
      const length = this.startup ? this.buffered.readInt32BE(0) : this.buffered.readInt32BE(1) + 1;
      if (this.buffered.length < length) return;
      if (this.startup) {
        const code = this.buffered.readInt32BE(4);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.startup = false;
      } else {
        this.message(String.fromCharCode(this.buffered[0]), this.buffered.subarray(5, length));
      }
      this.buffered = this.buffered.subarray(length);
    }
  }

  private message(type: string, body: Buffer): void {
    if (type === 'P') {
      const [name, at] = cString(body, 0);
      this.prepared.set(name, cString(body, at)[0]);
    } else if (type === 'B') {
      const [, at] = cString(body, 0);
      this.portal = this.prepared.get(cString(body, at)[0]) ?? '';
    } else if (type === 'E') {
      this.statement(this.portal);
    } else if (type === 'Q') {
      this.statement(cString(body, 0)[0]);
    }
  }

  private statement(sql: string): void {
    if (TRANSACTION_START.test(sql)) {
      this.transaction = { counted: 0, background: false };
    } else if (TRANSACTION_END.test(sql)) {
      if (this.transaction && !this.transaction.background) this.onStatements(this.transaction.counted);
      this.transaction = null;
    } else if (this.transaction) {
      if (NOT_COUNTED.test(sql)) this.transaction.background = true;
      else this.transaction.counted++;
    } else if (!NOT_COUNTED.test(sql)) {
      this.onStatements(1);
    }
  }
}

export interface StatementCounter {
  /** `databaseUrl` with its host and port replaced by the relay's. */
  url: string;
  /** Statements counted so far, all connections together. */
  count(): number;
  close(): Promise<void>;
}

export async function startStatementCounter(databaseUrl: string): Promise<StatementCounter> {
  const target = new URL(databaseUrl);
  let statements = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const messages = new FrontendMessages((count) => (statements += count));
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

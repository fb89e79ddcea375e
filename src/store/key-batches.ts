import type { Kysely } from 'kysely';
import { untilAborted } from '../domain/abortable.js';
import { abortError } from './connection-gate.js';
import type { Database } from './database.js';

// Sixteen clients of one account paging through searches each read their page's 20 rows by key:
// sixteen statements, each a gate entry, a checkout and a round trip, on backends that outnumber
// the cores. Lookups of one kind by one account that arrive in the same turn of the event loop
// are read in one statement instead (the follower maximum 1.12× its rate, `npm run bench:compare`,
// docs/performance.md). Only one account's requests share a statement: its share of the pool
// and its place in the gate's order stay its own (connection-gate.ts).

/** A read of rows by key that one account's concurrent requests may share (each domain module of the store defines its own). */
export interface KeyLookup<Row> {
  /** Which statement: lookups share a batch only with the same name, group and account. */
  readonly name: string;
  /**
   * The rows of `keys` within `group` (a platform; '' where there is none, and a read that needs
   * none leaves it out), in any order, those not stored left out: the batch puts each caller's rows
   * in its own order.
   */
  read(db: Kysely<Database>, keys: string[], group: string): Promise<Row[]>;
  keyOf(row: Row): string;
}

/** The rows of `keys` in that order, those not stored left out. */
export type LookupByKey = <Row>(lookup: KeyLookup<Row>, group: string, keys: readonly string[]) => Promise<Row[]>;

/** A statement's keys at most; a larger lookup is read alone. Keeps one statement's rows, and its wait, bounded. */
const MAX_BATCH_KEYS = 1_000;

interface Batch {
  keys: Set<string>;
  rows: Promise<Map<string, unknown>>;
}

export class KeyBatches {
  readonly #open = new Map<string, Batch>();

  /** `databaseOf(tenant)`: a read database of that account whose statements no request's abort cancels (a batch serves several). */
  constructor(private readonly databaseOf: (tenant: string | undefined) => Kysely<Database>) {}

  /**
   * `keys` read with the other lookups of `lookup`, `group` and `tenant` that arrive before the
   * event loop's next check phase. `signal` (the request's) stops this caller's wait, not the
   * statement, whose other callers still want it.
   */
  async read<Row>(lookup: KeyLookup<Row>, group: string, tenant: string | undefined, keys: readonly string[], signal?: AbortSignal): Promise<Row[]> {
    if (keys.length === 0) return [];
    if (signal?.aborted) throw abortError(signal);
    const rows = this.#join(lookup, group, tenant, keys) as Promise<Map<string, Row>>;
    const byKey = await (signal ? untilAborted(rows, signal, (): never => { throw abortError(signal); }) : rows);
    return keys.flatMap((key) => byKey.get(key) ?? []);
  }

  #join<Row>(lookup: KeyLookup<Row>, group: string, tenant: string | undefined, keys: readonly string[]): Promise<Map<string, unknown>> {
    // JSON: no name, group or account can spell another's key.
    const id = JSON.stringify([lookup.name, group, tenant ?? null]);
    let batch = this.#open.get(id);
    if (!batch || (batch.keys.size > 0 && batch.keys.size + keys.length > MAX_BATCH_KEYS)) {
      const opened: Batch = { keys: new Set(), rows: null as unknown as Promise<Map<string, unknown>> };
      opened.rows = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        if (this.#open.get(id) === opened) this.#open.delete(id);
        const found = await lookup.read(this.databaseOf(tenant), [...opened.keys], group);
        return new Map(found.map((row) => [lookup.keyOf(row), row]));
      });
      this.#open.set(id, (batch = opened));
    }
    for (const key of keys) batch.keys.add(key);
    return batch.rows;
  }
}

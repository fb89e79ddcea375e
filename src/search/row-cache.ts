// The rows of recent pages by key, so a page the index found is not read again from PostgreSQL
// while none of its rows changed: searches concentrate on the same top rows (most followers,
// newest), and reading 20 rows by key cost more than finding them. The change feed that keeps
// the index fresh forgets every changed key here too, so a cached row is never older than the
// index that chose it (within the feed's ~1 s).

const DEFAULT_CAPACITY = 5_000;

export class RowCache<Row> {
  readonly #rows = new Map<string, Row>();
  /** Bumped by every invalidation: a read that started before one does not store what it read. */
  #generation = 0;

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  /**
   * The rows of `keys` in that order (keys whose row is gone are left out): cached ones as they
   * are, the others through `load` (which gets only the missing keys, may return them in any order).
   */
  async read(keys: readonly string[], load: (missing: string[]) => Promise<Row[]>, keyOf: (row: Row) => string): Promise<Row[]> {
    const found = new Map<string, Row>();
    const missing: string[] = [];
    for (const key of keys) {
      const row = this.#rows.get(key);
      if (row === undefined) {
        missing.push(key);
        continue;
      }
      found.set(key, row);
      // Re-inserted: a Map iterates in insertion order, so the first entry is the least recent.
      this.#rows.delete(key);
      this.#rows.set(key, row);
    }
    if (missing.length > 0) {
      const generation = this.#generation;
      const loaded = await load(missing);
      const current = generation === this.#generation;
      for (const row of loaded) {
        const key = keyOf(row);
        found.set(key, row);
        if (current) this.#rows.set(key, row);
      }
      for (const oldest of this.#rows.keys()) {
        if (this.#rows.size <= this.capacity) break;
        this.#rows.delete(oldest);
      }
    }
    return keys.flatMap((key) => (found.has(key) ? [found.get(key)!] : []));
  }

  forget(keys: Iterable<string>): void {
    this.#generation++;
    for (const key of keys) this.#rows.delete(key);
  }

  clear(): void {
    this.#generation++;
    this.#rows.clear();
  }
}

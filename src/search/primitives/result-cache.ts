// The last filters' matching rows, so the pages of one search (page 1, 2, 3… or a cursor walk)
// evaluate the filter once. Entries are valid for one table version: any change makes them stale.

const CAPACITY = 32;

export class ResultCache<T> {
  readonly #entries = new Map<string, { version: number; value: T }>();

  /** @param dispose called with every value that leaves the cache (its bitsets can be reused) */
  constructor(private readonly dispose: (value: T) => void) {}

  get(key: string, version: number): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.version !== version) {
      this.dispose(entry.value);
      return undefined;
    }
    // Re-inserted: a Map iterates in insertion order, so the first entry is the least recent.
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, version: number, value: T): void {
    const previous = this.#entries.get(key);
    if (previous) {
      this.#entries.delete(key);
      if (previous.value !== value) this.dispose(previous.value);
    }
    this.#entries.set(key, { version, value });
    while (this.#entries.size > CAPACITY) {
      const [oldest, entry] = this.#entries.entries().next().value as [string, { version: number; value: T }];
      this.#entries.delete(oldest);
      this.dispose(entry.value);
    }
  }
}

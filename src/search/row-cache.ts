// The rows of recent pages by key, so a page the index found is not read again from PostgreSQL
// while none of its rows changed: searches concentrate on the same top rows (most followers,
// newest), and reading 20 rows by key cost more than finding them. The change feed that keeps
// the index fresh forgets every changed key here too, so a cached row is never older than the
// index that chose it (within the feed's ~1 s).
//
// Recency in two generations rather than a strict LRU: a hit in the young generation is one
// lookup; a hit in the old one moves the row to the young one; when the young one is full it
// becomes the old one and the old one is dropped. Reordering a Map on every hit (delete, set)
// was most of the cost of serving a cached page.
//
// A row read on a miss is kept only when its key missed once before, recently (a doorkeeper, as
// TinyLFU admits): pages anywhere in a million rows (a follower maximum, a channel's own videos)
// are read once, and keeping each such row made it survive into V8's old generation only to die
// there, a major collection's work on every request; the rows of pages many searches share still
// get in on their second read.

/**
 * 10,000 rows a cache: the working set of lookups and nested pages in the bench (5,000 sampled
 * keys a type) with room to spare. 20,000 cost 35 MiB more at the peak for no more throughput
 * (2026-11-25); the memory goal at the bench scale is 600 MB.
 */
const DEFAULT_CAPACITY = 10_000;

/** Keys that missed once, as bits of a hash: cleared after `capacity` new keys. */
class Doorkeeper {
  readonly #bits: Uint32Array;
  readonly #mask: number;
  #marked = 0;

  constructor(private readonly capacity: number) {
    // About 8 bits a key: few false "seen before" (each only admits a row early).
    const size = 2 ** Math.max(10, Math.ceil(Math.log2(Math.max(1, capacity) * 8)));
    this.#bits = new Uint32Array(size / 32);
    this.#mask = size - 1;
  }

  /** Whether `key` missed before (since the last clearing); marks it. */
  seenBefore(key: string): boolean {
    // FNV-1a over the UTF-16 code units.
    let hash = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    const bit = (hash >>> 0) & this.#mask;
    const word = bit >>> 5;
    const mask = 1 << (bit & 31);
    if ((this.#bits[word] & mask) !== 0) return true;
    // Cleared before marking: the key asked now is always remembered for its next miss.
    if (this.#marked >= this.capacity) {
      this.#bits.fill(0);
      this.#marked = 0;
    }
    this.#bits[word] |= mask;
    this.#marked++;
    return false;
  }
}

export class RowCache<Row> {
  #young = new Map<string, Row>();
  #old = new Map<string, Row>();
  /** Bumped by every invalidation: a read that started before one does not store what it read. */
  #generation = 0;
  readonly #doorkeeper: Doorkeeper;

  /** @param capacity rows kept at most, over both generations. */
  constructor(private readonly capacity = DEFAULT_CAPACITY) {
    this.#doorkeeper = new Doorkeeper(capacity);
  }

  /**
   * The rows of `keys` in that order (keys whose row is gone are left out): cached ones as they
   * are, the others through `load` (which gets only the missing keys, may return them in any order).
   */
  async read(keys: readonly string[], load: (missing: string[]) => Promise<Row[]>, keyOf: (row: Row) => string): Promise<Row[]> {
    const rows: (Row | undefined)[] = new Array(keys.length);
    let missing: string[] | null = null;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      let row = this.#young.get(key);
      if (row === undefined) {
        row = this.#old.get(key);
        if (row !== undefined) this.#keep(key, row);
        else (missing ??= []).push(key);
      }
      rows[i] = row;
    }
    if (missing !== null) {
      const generation = this.#generation;
      const loaded = await load(missing);
      const current = generation === this.#generation;
      const byKey = new Map<string, Row>();
      for (const row of loaded) byKey.set(keyOf(row), row);
      for (let i = 0; i < keys.length; i++) {
        if (rows[i] !== undefined) continue;
        const row = byKey.get(keys[i]);
        rows[i] = row;
        if (row !== undefined && current) this.#admit(keys[i], row);
      }
    }
    return rows.filter((row): row is Row => row !== undefined);
  }

  /** A mark for `offer`: taken before reading rows outside `read`. */
  get generation(): number {
    return this.#generation;
  }

  /** Admits rows read since `generation` was taken, unless something was forgotten meanwhile. */
  offer(rows: readonly Row[], keyOf: (row: Row) => string, generation: number): void {
    if (generation !== this.#generation) return;
    for (const row of rows) {
      const key = keyOf(row);
      if (this.#young.has(key) || this.#old.has(key)) this.#keep(key, row);
      else this.#admit(key, row);
    }
  }

  forget(keys: Iterable<string>): void {
    this.#generation++;
    for (const key of keys) {
      this.#young.delete(key);
      this.#old.delete(key);
    }
  }

  clear(): void {
    this.#generation++;
    this.#young = new Map();
    this.#old = new Map();
  }

  /** Keeps a row read on a miss if its key missed before. */
  #admit(key: string, row: Row): void {
    if (this.#doorkeeper.seenBefore(key)) this.#keep(key, row);
  }

  #keep(key: string, row: Row): void {
    this.#young.set(key, row);
    if (this.#young.size >= this.capacity / 2) {
      this.#old = this.#young;
      this.#young = new Map();
    }
  }
}

/** Which cached rows the change feed says are stale: every row of a table ('all'), or these keys. */
export interface RowChanges {
  /** Creator keys as [platform, user id]. */
  creators: 'all' | [string, string][];
  videos: 'all' | string[];
  channels: 'all' | string[];
  /** Live streams are reloaded as one snapshot: any change forgets them all. */
  liveStreams: boolean;
}

/**
 * The row caches of one server process (creators per platform, videos, live streams). They live
 * where rows are read, beside the pipeline, wherever the index runs; the index's feed tells them
 * what to forget, before it reads any changed row itself.
 */
export class SearchRows<Creator, Video, Channel, LiveStream> {
  readonly #creators = new Map<string, RowCache<Creator>>();
  readonly videos: RowCache<Video>;
  /** The channels of video pages: a page's videos may be cached, their channels were read every time. */
  readonly channels: RowCache<Channel>;
  readonly liveStreams: RowCache<LiveStream>;

  /** @param capacity rows per cache (ROW_CACHE_ROWS): about 1.4 KB a creator, 0.8 KB a video. */
  constructor(private readonly capacity = DEFAULT_CAPACITY) {
    this.videos = new RowCache(capacity);
    this.channels = new RowCache(capacity);
    this.liveStreams = new RowCache(capacity);
  }

  creators(platform: string): RowCache<Creator> {
    let cache = this.#creators.get(platform);
    if (!cache) this.#creators.set(platform, (cache = new RowCache(this.capacity)));
    return cache;
  }

  forget(changes: RowChanges): void {
    if (changes.creators === 'all') for (const cache of this.#creators.values()) cache.clear();
    else for (const [platform, key] of changes.creators) this.#creators.get(platform)?.forget([key]);
    if (changes.videos === 'all') this.videos.clear();
    else if (changes.videos.length > 0) this.videos.forget(changes.videos);
    if (changes.channels === 'all') this.channels.clear();
    else if (changes.channels.length > 0) this.channels.forget(changes.channels);
    if (changes.liveStreams) this.liveStreams.clear();
  }

  forgetAll(): void {
    this.forget({ creators: 'all', videos: 'all', channels: 'all', liveStreams: true });
  }
}

import { type BitsetPool, setBitList, type WordWindow } from './bitset.js';

// The last filters' matching rows, so the pages of one search (page 1, 2, 3… or a cursor walk)
// evaluate the filter once. Entries are valid for one table version: any change makes them stale.
//
// A match of few rows is kept as its list of slots, not as a bitset as wide as the table: a
// selective filter matches a few thousand of a million rows, 125 KB as a bitset (1.25 MB at ten
// million) against tens of KB as a list; 32 entries per table were up to 12 MB at 1M creators and
// 2M videos, 120 MB at ten times that; one whose rows lie in a narrow window of words (a date
// range's) as a copy of those words. A hit on such an entry sets its bits in one loaned bitset,
// valid until the cache's next get() or keep(): the index thread serves one search at a time and
// uses a match before it asks for the next.

const CAPACITY = 32;
/**
 * A match is kept as a list when it has a row per 8 words or fewer: its list then takes at most an
 * eighth of a bitset's bytes. Listing costs a pass (about 15 ns a row where a third of the words
 * hold a row: a branch mispredicted per word); at a row per 2 words, as before, a name fragment's
 * search at 10M spent 1-2 ms listing rows for each text column and the whole filter (2026-11-29).
 */
const LIST_WHEN_WORDS_PER_ROW = 8;
/**
 * A sparse match that knows its window (a date range's words) is kept as a copy of that window's
 * words instead when the window is at most this many words a row: at most four times a list's
 * bytes, a copy rather than a pass that finds every row (a filtered video search at 20M listed
 * its matches for 0.4 ms of its 3.3).
 */
const COPY_WHEN_WORDS_PER_ROW = 4;
/**
 * And at most these bytes (the newest entry is kept whatever its size): 32 bitsets of 20M videos
 * were 80 MB; under the budget a table of 10M rows keeps 19 dense matches, one of 20M 9, one of a
 * million all 32.
 */
const MAX_BYTES = 24 << 20;

/**
 * A cache key for a filter: its set fields only, so a field given as null (a facet "without its own
 * condition" on a field the filter never set) names the same match as the field left out.
 */
export function filterKey(...parts: unknown[]): string {
  return JSON.stringify(parts, (_, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    return Object.fromEntries(Object.entries(value).filter(([, field]) => field != null));
  });
}

/** Matching rows as a bitset over the table's slots, and how many there are. */
export interface Match {
  bits: Uint32Array;
  count: number;
  /** Words [from, to) outside which no bit is set, when the match knows them (a date window's). */
  window?: WordWindow;
}

interface Entry {
  version: number;
  count: number;
  /** Dense matches: owned by the cache until the entry leaves. */
  bits: Uint32Array | null;
  window?: WordWindow;
  /** Sparse matches: their slots, ascending (the list form) */
  slots: Uint32Array | null;
  /** or their window's words, copied (the window form). */
  windowWords: Uint32Array | null;
}

export class ResultCache {
  readonly #entries = new Map<string, Entry>();
  /** The bitset handed out for a sparse entry or a fresh sparse match, and whose it is. */
  #loan: Uint32Array | null = null;
  #loanedFor: Entry | null = null;
  /** The loan's words that may hold a bit (it goes back to the pool with them). */
  #loanWindow: WordWindow | undefined;

  /** Bytes of the entries' bitsets and slot lists (bytesOf). */
  #bytes = 0;

  /** @param pool where bitsets come from and go back to (matches are computed in its bitsets) */
  constructor(
    readonly pool: BitsetPool,
    private readonly capacity = CAPACITY,
    private readonly maxBytes = MAX_BYTES,
  ) {}

  /** Whether a current match is kept for `key`: nothing is loaned, the entry keeps its place. */
  has(key: string, version: number, words: number): boolean {
    const entry = this.#entries.get(key);
    return entry !== undefined && entry.version === version && (entry.bits === null || entry.bits.length === words);
  }

  /** The cached match, or undefined; a sparse one's bitset is valid until the next get() or keep(). */
  get(key: string, version: number, words: number): Match | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    // A dense entry of another width is of an older table size: stale as well.
    if (entry.version !== version || (entry.bits !== null && entry.bits.length !== words)) {
      this.#dispose(entry);
      return undefined;
    }
    // Re-inserted: a Map iterates in insertion order, so the first entry is the least recent.
    this.#entries.set(key, entry);
    if (entry.bits) return { bits: entry.bits, count: entry.count, window: entry.window };
    const { slots, windowWords } = entry;
    const window = windowWords ? entry.window! : slots!.length === 0 ? { from: 0, to: 0 } : { from: slots![0] >>> 5, to: (slots![slots!.length - 1] >>> 5) + 1 };
    if (this.#loanedFor === entry && this.#loan!.length === words) return { bits: this.#loan!, count: entry.count, window };
    const bits = this.#lend(words, entry, window);
    if (windowWords) bits.set(windowWords, window.from);
    else for (let i = 0; i < slots!.length; i++) bits[slots![i] >>> 5] |= 1 << (slots![i] & 31);
    return { bits, count: entry.count, window };
  }

  /**
   * Keeps a match just computed (its bitset from the pool) and returns it for use: a sparse one is
   * kept as a list and its bitset lent out as above, a dense one kept as it is.
   */
  keep(key: string, version: number, match: Match): Match {
    const previous = this.#entries.get(key);
    if (previous) {
      this.#entries.delete(key);
      this.#dispose(previous);
    }
    const words = match.bits.length;
    const entry: Entry = { version, count: match.count, bits: null, slots: null, windowWords: null, window: match.window };
    if (match.count * LIST_WHEN_WORDS_PER_ROW <= words) {
      const window = match.window;
      if (window && window.to - window.from <= match.count * COPY_WHEN_WORDS_PER_ROW) entry.windowWords = match.bits.slice(window.from, window.to);
      else entry.slots = setBitList(match.bits, match.count, window);
      this.#return();
      this.#loan = match.bits;
      this.#loanedFor = entry;
      this.#loanWindow = window;
    } else entry.bits = match.bits;
    this.#entries.set(key, entry);
    this.#bytes += bytesOf(entry);
    while (this.#entries.size > this.capacity || (this.#bytes > this.maxBytes && this.#entries.size > 1)) {
      const [oldest, gone] = this.#entries.entries().next().value as [string, Entry];
      this.#entries.delete(oldest);
      this.#dispose(gone);
    }
    return match;
  }

  /** Forgets every entry (their bitsets and the lent one go back to the pool). */
  clear(): void {
    for (const entry of this.#entries.values()) this.#dispose(entry);
    this.#entries.clear();
    this.#return();
  }

  /** How many matches are kept (tests watch which filters share one). */
  get size(): number {
    return this.#entries.size;
  }

  /** Bytes held by the entries (tests watch that sparse matches stay small). */
  get bytesHeld(): number {
    return this.#bytes;
  }

  #lend(words: number, entry: Entry, window: WordWindow): Uint32Array {
    this.#return();
    this.#loan = this.pool.take(words);
    this.#loanedFor = entry;
    this.#loanWindow = window;
    return this.#loan;
  }

  #return(): void {
    if (this.#loan) this.#giveBack(this.#loan, this.#loanWindow);
    this.#loan = null;
    this.#loanedFor = null;
    this.#loanWindow = undefined;
  }

  /** A match's bitset back to the pool: users only read a match, so it holds no bit outside its window. */
  #giveBack(bits: Uint32Array, window: WordWindow | undefined): void {
    if (window) this.pool.giveWithin(bits, window);
    else this.pool.give(bits);
  }

  #dispose(entry: Entry): void {
    this.#bytes -= bytesOf(entry);
    if (entry.bits) this.#giveBack(entry.bits, entry.window);
    if (this.#loanedFor === entry) this.#loanedFor = null;
  }
}

const bytesOf = (entry: Entry) => (entry.bits ?? entry.slots ?? entry.windowWords!).byteLength;

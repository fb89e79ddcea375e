import { Bitset, BitsetPool, grownLength, popcount, trimmed, withRoom } from './bitset.js';
import { lowerBound } from './lower-bound.js';
import { ResultCache } from './result-cache.js';
import { hashOf, tooFull } from './row-table.js';
import { SnapshotRejected, type SnapshotReader, type SnapshotWriter } from './snapshot-io.js';
import { StringStore, utf8 } from './string-store.js';

// Substring search over a text column (`lower(username) LIKE '%q%'`): the distinct texts of the
// column (its dictionary: a few thousand full names or video descriptions stand for millions of
// rows) are indexed by trigram; a query takes the rarest trigram's texts, keeps those containing
// it, and reaches their rows through the slots grouped by text: one array of slots ordered by
// entry (built after the load, and again once enough rows changed) plus the short list of slots
// that changed since, checked one by one. Reading a group is sequential, where a linked list per
// text costs a dependent cache miss per row. When the texts cover a large share of the rows, one
// pass over every slot's entry is cheaper still; when they cover nearly all of them, the rows of
// the other texts are taken away from every row with a text.
//
// Texts are stored as PostgreSQL's lower() made them, and queries are lower-cased the way the SQL
// path lower-cases them, so a match here is a match there: a literal substring.

/** A group's row costs a few ns (a random bit write), a scanned slot about 1 ns: scan past 1 in 4. */
const SCAN_WHEN_ROWS_OVER = 4;
/** The groups are rebuilt once this share of the slots changed since they were built. */
const REBUILD_WHEN_CHANGED_OVER = 1 / 64;

/**
 * Query results kept (a relevance search asks for four per query): as a bitset, a bit per row,
 * 250 KB at 2M videos and 2.5 MB at 20M, over four text indexes, or as a list of slots when the
 * rows are few (a name fragment's usually are; see ResultCache). Eight: two relevance searches'
 * worth. Sixteen bitsets held 24 MB at the bench scale and about 240 MB at 10M creators and 20M
 * videos, for name fragments that rarely repeat.
 */
const ROW_RESULTS_KEPT = 8;
/** And at most these bytes: three bitsets of 20M videos, all eight of a million rows. */
const ROW_RESULT_BYTES = 8 << 20;

/**
 * Matching entries kept over all queries, 4 bytes each: a name fragment matches thousands of the
 * million usernames, and a thousand such lists as JS arrays held 17 MB of the index thread's heap
 * (2026-11-25, bench). Oldest queries go first; the newest is kept whatever its size.
 */
const MATCHED_ENTRIES_KEPT = 500_000;
/** Queries kept, whatever they match: one matching nothing costs no entry, but a key and a record. */
const MATCHED_QUERIES_KEPT = 1_000;

/** A query's matching entries among the first `upTo`: entries only grow, so a result extends. */
interface Matches {
  upTo: number;
  entries: Int32Array;
}

interface Posting {
  data: Uint32Array;
  length: number;
}

const trigramKey = (text: string, at: number) => text.charCodeAt(at) * 4294967296 + text.charCodeAt(at + 1) * 65536 + text.charCodeAt(at + 2);

/**
 * Each slot's entry, stored as entry + 1 (0: no text) so a stored code indexes the wanted-entries
 * scratch directly: in 2 bytes a slot while there are fewer than 65,535 entries (full names, video
 * titles and descriptions: a few thousand texts for millions of rows), in 4 from the first entry
 * past that (usernames, one per creator).
 */
class EntryColumn {
  codes: Uint16Array | Int32Array = new Uint16Array(1024);

  /** The slot's entry, -1 for none. */
  get(slot: number): number {
    return slot < this.codes.length ? this.codes[slot] - 1 : -1;
  }

  set(slot: number, entry: number): void {
    if (entry + 1 > 0xffff && this.codes instanceof Uint16Array) this.codes = Int32Array.from(this.codes);
    this.codes[slot] = entry + 1;
  }

  ensure(size: number): void {
    this.codes = withRoom(this.codes, size);
  }

  trim(size: number): void {
    this.codes = trimmed(this.codes, size);
  }

  save(out: SnapshotWriter): void {
    out.array(this.codes);
  }

  load(input: SnapshotReader, entries: number): void {
    const codes = input.anyArray();
    if (!(codes instanceof Uint16Array || codes instanceof Int32Array)) throw new SnapshotRejected('a text index’s entries are neither Uint16 nor Int32');
    for (let slot = 0; slot < codes.length; slot++) if (codes[slot] < 0 || codes[slot] > entries) throw new SnapshotRejected('a text index holds an entry it does not have');
    this.codes = codes;
  }
}

export class TextIndex {
  /** @param matchedEntriesKept matching entries kept over all queries (tests set it low) */
  constructor(private readonly matchedEntriesKept = MATCHED_ENTRIES_KEPT) {}

  /** Distinct texts, outside the V8 heap; an entry's text never changes and entries are never removed. */
  readonly #texts = new StringStore();
  #entryHashes = new Uint32Array(1024);
  #table = new Int32Array(2048);
  /** Rows per entry, to choose between the groups and a scan. */
  #entryRows = new Int32Array(1024);
  /** Scratch: 1 at entry + 1 for the wanted entries, all 0 between calls. */
  #wanted = new Uint8Array(0);
  /** Whether whileMatching's marks are in the scratch. */
  #marking = false;
  readonly #entryOf = new EntryColumn();
  /**
   * The slots grouped by entry when built: entry e's are in groupBytes[groupStart[e] … groupStart[e + 1]),
   * ascending: a head (GROUP_HEAD: the width, then the first slot), then each slot's distance from
   * the one before in the group's width, the fewest bytes over the group: 2 a row for a full name's
   * rows (hundreds of slots apart), 3 for a username's, where a slot number took 4. A distance too
   * wide for its group is a 0 of the width, then 4 bytes: a video title's few thousand rows lie
   * 10,000 slots apart in 20 million, but the widest gap of each needed 3 bytes, and every row
   * taking 3 held 29 MiB more than varints did. The starts are 32-bit: read from a Float64Array,
   * each offset cost V8 a conversion on every byte read, and decoding took twice as long.
   */
  #groupStart = new Uint32Array(1);
  #groupBytes = new Uint8Array(0);
  /** Slots whose entry changed since the groups were built: their group membership is stale. */
  #changed = new Bitset();
  #changedSlots: number[] = [];
  #slots = 0;
  /** Slots with a text, and how many. */
  readonly #present = new Bitset();
  #rowsWithText = 0;
  readonly #trigrams = new Map<number, Posting>();
  /** Query → its matching entries, least recent first; `#matchesHeld` entries over all of them. */
  readonly #matches = new Map<string, Matches>();
  #matchesHeld = 0;
  /** Query → its rows, valid while no row changes its text (`#version`); few rows kept as a list. */
  readonly #rows = new ResultCache(new BitsetPool(1), ROW_RESULTS_KEPT, ROW_RESULT_BYTES);
  #version = 0;

  entryOf(slot: number): number {
    return this.#entryOf.get(slot);
  }

  /** After a bulk load: drops the growth room of the trigram postings (most of their memory) and of every array, and groups the slots. */
  trim(): void {
    this.#texts.trim();
    this.#entryOf.trim(this.#slots);
    this.#present.trim(this.#slots);
    const entries = Math.max(this.#texts.size, 1);
    if (this.#entryHashes.length > entries) {
      this.#entryHashes = this.#entryHashes.slice(0, entries);
      this.#entryRows = this.#entryRows.slice(0, entries);
    }
    for (const posting of this.#trigrams.values()) {
      if (posting.data.length > posting.length) posting.data = posting.data.slice(0, Math.max(posting.length, 1));
    }
    this.#group();
  }

  /** Grouped as of now; the trigram postings as three arrays (keys, lengths, all their slots). */
  save(out: SnapshotWriter): void {
    if (this.#changedSlots.length > 0) this.#group();
    this.#texts.save(out);
    out.value({ slots: this.#slots, rowsWithText: this.#rowsWithText });
    out.array(this.#entryHashes);
    out.array(this.#table);
    out.array(this.#entryRows);
    this.#entryOf.save(out);
    out.array(this.#groupStart);
    out.array(this.#groupBytes);
    this.#present.save(out);
    const keys = new Float64Array(this.#trigrams.size);
    const lengths = new Uint32Array(this.#trigrams.size);
    let total = 0;
    let i = 0;
    for (const [key, posting] of this.#trigrams) {
      keys[i] = key;
      lengths[i++] = posting.length;
      total += posting.length;
    }
    const all = new Uint32Array(total);
    let at = 0;
    for (const posting of this.#trigrams.values()) {
      all.set(posting.data.subarray(0, posting.length), at);
      at += posting.length;
    }
    out.array(keys);
    out.array(lengths);
    out.array(all);
  }

  load(input: SnapshotReader): void {
    this.#texts.load(input);
    const { slots, rowsWithText } = input.value<{ slots: number; rowsWithText: number }>();
    this.#slots = slots;
    this.#rowsWithText = rowsWithText;
    this.#entryHashes = input.array(Uint32Array);
    this.#table = input.array(Int32Array);
    this.#entryRows = input.array(Int32Array);
    this.#entryOf.load(input, this.#texts.size);
    this.#groupStart = input.array(Uint32Array);
    this.#groupBytes = input.array(Uint8Array);
    this.#present.load(input);
    const keys = input.array(Float64Array);
    const lengths = input.array(Uint32Array);
    const all = input.array(Uint32Array);
    const start = this.#groupStart;
    const bytes = this.#groupBytes;
    // Each group empty, or a head and a width.
    const groupIsWhole = (at: number, i: number) => {
      if (i === 0) return at === 0;
      const length = at - start[i - 1];
      const width = bytes[start[i - 1]];
      return length === 0 || (length >= GROUP_HEAD && width >= 1 && width <= 4);
    };
    const groupsAddUp = start.length === this.#texts.size + 1 && start[start.length - 1] === bytes.length && start.every(groupIsWhole);
    if (lengths.length !== keys.length || this.#entryOf.codes.length < slots || !groupsAddUp || (this.#table.length & (this.#table.length - 1)) !== 0) {
      throw new SnapshotRejected('a text index does not add up');
    }
    this.#trigrams.clear();
    let at = 0;
    for (let i = 0; i < keys.length; i++) {
      if (lengths[i] === 0 || at + lengths[i] > all.length) throw new SnapshotRejected('a text index does not add up');
      // A view of exactly its length: the first entry added copies it out before writing.
      this.#trigrams.set(keys[i], { data: all.subarray(at, at + lengths[i]), length: lengths[i] });
      at += lengths[i];
    }
    this.#changed = new Bitset(slots);
    this.#changedSlots = [];
    this.#matches.clear();
    this.#matchesHeld = 0;
    this.#rows.clear();
    this.#version++;
  }

  /** Groups every slot by entry (two passes over the slots: sizes, then bytes) and forgets the changes. */
  #group(): void {
    const codes = this.#entryOf.codes;
    const slots = this.#slots;
    const entries = this.#texts.size;
    // By stored code: the rows, the last slot seen (+ 1: 0 for none yet), and how many distances
    // need more than 1, 2 and 3 bytes.
    const rows = new Int32Array(entries + 1);
    const last = new Int32Array(entries + 1);
    const over = [new Int32Array(entries + 1), new Int32Array(entries + 1), new Int32Array(entries + 1)];
    for (let slot = 0; slot < slots; slot++) {
      const code = codes[slot];
      if (code === 0) continue;
      if (last[code] !== 0) {
        const distance = slot + 1 - last[code];
        for (let w = 0; w < 3 && distance >= WIDTH_LIMITS[w]; w++) over[w][code]++;
      }
      last[code] = slot + 1;
      rows[code]++;
    }
    // Each group's width: the fewest bytes, a distance too wide for it taking 4 more.
    const widthOf = new Uint8Array(entries + 1);
    const start = new Uint32Array(entries + 1);
    let total = 0;
    for (let entry = 0; entry < entries; entry++) {
      const code = entry + 1;
      const distances = rows[code] - 1;
      let best = 4;
      let size = distances * 4;
      for (let width = 3; width >= 1; width--) {
        const bytes = distances * width + over[width - 1][code] * 4;
        if (bytes < size) [best, size] = [width, bytes];
      }
      widthOf[code] = best;
      total += rows[code] === 0 ? 0 : GROUP_HEAD + size;
      if (total > MAX_GROUP_BYTES) throw new RangeError('a text column’s groups outgrow 4 GiB');
      start[code] = total;
    }
    const bytes = new Uint8Array(start[entries]);
    const fill = start.slice(0, entries);
    last.fill(0);
    for (let slot = 0; slot < slots; slot++) {
      const code = codes[slot];
      if (code === 0) continue;
      let at = fill[code - 1];
      const width = widthOf[code];
      if (last[code] === 0) {
        // The head: the width, then the first slot in 4 bytes.
        bytes[at++] = width;
        at = writeBytes(bytes, at, slot, 4);
      } else {
        const distance = slot + 1 - last[code];
        // Too wide for the group: a 0 (no distance is 0), then the distance in 4 bytes.
        if (width < 4 && distance >= WIDTH_LIMITS[width - 1]) at = writeBytes(bytes, writeBytes(bytes, at, 0, width), distance, 4);
        else at = writeBytes(bytes, at, distance, width);
      }
      last[code] = slot + 1;
      fill[code - 1] = at;
    }
    this.#groupStart = start;
    this.#groupBytes = bytes;
    this.#changed = new Bitset(slots);
    this.#changedSlots = [];
  }

  /** The slot's text becomes `text` (null: none). */
  set(slot: number, text: string | null): void {
    this.#entryOf.ensure(slot + 1);
    if (slot >= this.#slots) this.#slots = slot + 1;
    const before = this.#entryOf.get(slot);
    const after = text === null ? -1 : this.#entryFor(text);
    if (before === after) return;
    this.#version++;
    if (before !== -1) this.#entryRows[before]--;
    if (after !== -1) this.#entryRows[after]++;
    if ((before === -1) !== (after === -1)) {
      this.#rowsWithText += after === -1 ? -1 : 1;
      this.#present.grow(slot + 1);
      this.#present.assign(slot, after !== -1);
    }
    this.#entryOf.set(slot, after);
    this.#changed.grow(slot + 1);
    if (!this.#changed.has(slot)) {
      this.#changed.set(slot);
      this.#changedSlots.push(slot);
    }
  }

  /** Matching entries held by the query cache. */
  get matchedEntriesHeld(): number {
    return this.#matchesHeld;
  }

  /** Queries held by the query cache. */
  get matchedQueriesHeld(): number {
    return this.#matches.size;
  }

  /** The entries whose text contains `query` (already lower-cased); do not modify them. */
  matchingEntries(query: string): Int32Array {
    let cached = this.#matches.get(query);
    if (cached) this.#matches.delete(query);
    else cached = { upTo: 0, entries: new Int32Array(0) };
    this.#matchesHeld -= cached.entries.length;
    if (cached.upTo < this.#texts.size) {
      const found = this.#entriesContaining(query, cached.upTo);
      if (found.length > 0) {
        const entries = new Int32Array(cached.entries.length + found.length);
        entries.set(cached.entries);
        entries.set(found, cached.entries.length);
        cached.entries = entries;
      }
      cached.upTo = this.#texts.size;
    }
    this.#matches.set(query, cached);
    this.#matchesHeld += cached.entries.length;
    for (const [oldest, matches] of this.#matches) {
      const withinBudget = this.#matchesHeld <= this.matchedEntriesKept && this.#matches.size <= MATCHED_QUERIES_KEPT;
      if (withinBudget || oldest === query) break;
      this.#matches.delete(oldest);
      this.#matchesHeld -= matches.entries.length;
    }
    return cached.entries;
  }

  /**
   * The rows whose text contains `query` (or equals it, or starts with it), as a bitset of `words`
   * words; cached until a row's text changes. Read it before the next call (its bitset may be
   * reused then) and do not modify it.
   */
  rowsMatching(query: string, words: number, how: 'contains' | 'prefix' | 'equals' = 'contains'): Uint32Array {
    this.#notMarking();
    const key = `${how}\u0000${query}`;
    const cached = this.#rows.get(key, this.#version, words);
    if (cached) return cached.bits;
    const bits = this.#rows.pool.take(words);
    let entries = this.matchingEntries(query);
    if (how === 'prefix') {
      const needle = utf8(query);
      entries = entries.filter((entry) => this.#texts.startsWith(entry, needle));
    }
    if (how === 'equals') entries = entries.filter((entry) => this.#texts.equals(entry, query));
    const rows = this.#slotsOf(bits, entries);
    // Every slot of an entry is set, so the entries' rows are the count, unless some lie past `words`.
    const count = this.#slots <= words * 32 ? rows : popcount(bits);
    return this.#rows.keep(key, this.#version, { bits, count }).bits;
  }

  /** out (all 0 on entry) = the slots of the given entries; returns how many there are. */
  #slotsOf(out: Uint32Array, entries: ArrayLike<number> & Iterable<number>): number {
    let rows = 0;
    for (const entry of entries) rows += this.#entryRows[entry];
    const slots = Math.min(this.#slots, out.length * 32);
    if (this.#changedSlots.length > Math.max(1024, this.#slots * REBUILD_WHEN_CHANGED_OVER)) this.#group();
    if (rows * SCAN_WHEN_ROWS_OVER > slots) {
      if ((this.#rowsWithText - rows) * SCAN_WHEN_ROWS_OVER <= slots) this.#allBut(out, entries);
      else this.#scanInto(out, entries, slots);
      return rows;
    }
    const groups = this.#groupStart.length - 1;
    for (const entry of entries) {
      // A text first seen after the grouping has no group: its slots all changed.
      if (entry < groups) this.#markGroup(out, entry, true);
    }
    this.#settleChanged(out, entries);
    return rows;
  }

  /**
   * Sets (or clears) in `out` every slot of `entry`'s group as grouped, changed ones included:
   * testing each row against the changed slots cost a random read per row, where putting the few
   * changed slots right afterwards (#settleChanged) costs one per changed slot.
   */
  #markGroup(out: Uint32Array, entry: number, set: boolean): void {
    let k = this.#groupStart[entry];
    const end = this.#groupStart[entry + 1];
    if (k === end) return;
    const bytes = this.#groupBytes;
    const width = bytes[k];
    let slot = bytes[k + 1] | (bytes[k + 2] << 8) | (bytes[k + 3] << 16) | (bytes[k + 4] << 24);
    k += GROUP_HEAD;
    // A distance read in the group's width, without a branch per byte (LEB128 varints mispredicted
    // about one a row, and a name fragment's search spent most of its time decoding them).
    for (;;) {
      if (set) out[slot >>> 5] |= 1 << (slot & 31);
      else out[slot >>> 5] &= ~(1 << (slot & 31));
      if (k >= end) return;
      let distance: number;
      if (width === 1) distance = bytes[k++];
      else if (width === 2) {
        distance = bytes[k] | (bytes[k + 1] << 8);
        k += 2;
      } else if (width === 3) {
        distance = bytes[k] | (bytes[k + 1] << 8) | (bytes[k + 2] << 16);
        k += 3;
      } else distance = 0; // width 4: every distance in the 4 bytes below
      if (distance === 0) {
        distance = bytes[k] | (bytes[k + 1] << 8) | (bytes[k + 2] << 16) | (bytes[k + 3] << 24);
        k += 4;
      }
      slot += distance;
    }
  }

  /** Each slot changed since the grouping set in `out` as its entry is one of `entries` or not: its group membership is stale. */
  #settleChanged(out: Uint32Array, entries: ArrayLike<number> & Iterable<number>): void {
    if (this.#changedSlots.length === 0) return;
    const wanted = this.#wantedOf(entries);
    const codes = this.#entryOf.codes;
    for (const slot of this.#changedSlots) {
      // A slot without text has code 0, never wanted.
      if (wanted[codes[slot]] === 1) out[slot >>> 5] |= 1 << (slot & 31);
      else out[slot >>> 5] &= ~(1 << (slot & 31));
    }
    for (const entry of entries) wanted[entry + 1] = 0;
  }

  /**
   * Runs `use` with a test of whether a slot's text contains `query` (its entry looked up among the
   * matching ones, for a walk that reads a few rows of an order instead of every match's bits) and
   * those entries marked by stored code (entry + 1; 0, no text, never marked): 1 each, or, `ranked`,
   * as a relevance tier ranks a title: 3 equal to the query, 2 starting with it, 1 containing it.
   * Both are valid only during `use`, which must not search this index.
   */
  whileMatching<T>(query: string, use: (holds: (slot: number) => boolean, marked: Uint8Array) => T, ranked = false): T {
    this.#notMarking();
    const entries = this.matchingEntries(query);
    const marked = this.#wantedOf(entries);
    if (ranked) {
      const needle = utf8(query);
      // The tests rowsMatching's `how` makes, so both ways rank a title alike.
      for (const entry of entries) marked[entry + 1] = this.#texts.equals(entry, query) ? 3 : this.#texts.startsWith(entry, needle) ? 2 : 1;
    }
    this.#marking = true;
    const codes = this.#entryOf.codes;
    try {
      return use((slot) => slot < codes.length && marked[codes[slot]] !== 0, marked);
    } finally {
      this.#marking = false;
      for (const entry of entries) marked[entry + 1] = 0;
    }
  }

  /** A search uses the scratch, and would clear the marks a whileMatching test still reads. */
  #notMarking(): void {
    if (this.#marking) throw new Error('a text index searched while its matches are marked');
  }

  /** The scratch marking `entries` (at entry + 1, a slot's stored code, so a slot without text, 0, reads a 0); clear it after use. */
  #wantedOf(entries: ArrayLike<number> & Iterable<number>): Uint8Array {
    // Reused rather than allocated per search: at a million names it is a megabyte.
    if (this.#wanted.length < this.#texts.size + 1) this.#wanted = new Uint8Array(Math.max(this.#texts.size + 1, this.#wanted.length * 2));
    const wanted = this.#wanted;
    for (const entry of entries) wanted[entry + 1] = 1;
    return wanted;
  }

  /** out (all 0) = every slot with a text, less the slots of the entries not in `entries`. */
  #allBut(out: Uint32Array, entries: ArrayLike<number> & Iterable<number>): void {
    const present = this.#present.words;
    const words = Math.min(out.length, present.length);
    for (let i = 0; i < words; i++) out[i] = present[i];
    const wanted = this.#wantedOf(entries);
    for (let entry = 0, groups = this.#groupStart.length - 1; entry < groups; entry++) {
      if (wanted[entry + 1] === 0) this.#markGroup(out, entry, false);
    }
    for (const entry of entries) wanted[entry + 1] = 0;
    this.#settleChanged(out, entries);
  }

  /** Every slot whose entry is one of `entries`, found in one pass over the slots. */
  #scanInto(out: Uint32Array, entries: ArrayLike<number> & Iterable<number>, slots: number): void {
    const wanted = this.#wantedOf(entries);
    const codes = this.#entryOf.codes;
    for (let base = 0; base < slots; base += 32) {
      const end = Math.min(base + 32, slots);
      let word = 0;
      for (let slot = base; slot < end; slot++) word |= wanted[codes[slot]] << (slot - base);
      if (word !== 0) out[base >>> 5] |= word;
    }
    for (const entry of entries) wanted[entry + 1] = 0;
  }

  /**
   * The entries from `from` on whose text contains `query`. A query of three characters is one
   * trigram, whose posting is the answer. A longer one takes the entries holding every trigram of
   * it (the rarest posting intersected with the others, all in entry order) and tests those: a
   * username fragment matched 37,000 of 761,000 usernames at 10M creators, and testing each cost
   * 5-7 ms, the posting alone 0.05.
   */
  #entriesContaining(query: string, from: number): Int32Array {
    if (query.length < 3) return this.#tested(query, (test) => {
      for (let entry = from; entry < this.#texts.size; entry++) test(entry);
    });
    const postings: Posting[] = [];
    for (let at = 0; at + 3 <= query.length; at++) {
      const posting = this.#trigrams.get(trigramKey(query, at));
      if (!posting) return new Int32Array(0);
      postings.push(posting);
    }
    postings.sort((a, b) => a.length - b.length);
    let candidates = postings[0].data.subarray(lowerBound(postings[0].data, from, postings[0].length), postings[0].length);
    for (let k = 1; k < postings.length && candidates.length > 0; k++) candidates = intersection(candidates, postings[k]);
    if (query.length === 3) return Int32Array.from(candidates);
    return this.#tested(query, (test) => {
      for (let i = 0; i < candidates.length; i++) test(candidates[i]);
    });
  }

  /** The entries `visit` offers whose text contains `query`, in the order offered. */
  #tested(query: string, visit: (test: (entry: number) => void) => void): Int32Array {
    const needle = utf8(query);
    const found: number[] = [];
    visit((entry) => {
      if (this.#texts.includes(entry, needle)) found.push(entry);
    });
    return Int32Array.from(found);
  }

  #entryFor(text: string): number {
    const hash = hashOf(text);
    const mask = this.#table.length - 1;
    let place = hash & mask;
    for (; this.#table[place] !== 0; place = (place + 1) & mask) {
      const entry = this.#table[place] - 1;
      if (this.#entryHashes[entry] === hash && this.#texts.equals(entry, text)) return entry;
    }
    const entry = this.#texts.push(text);
    if (entry >= this.#entryHashes.length) {
      const hashes = new Uint32Array(grownLength(this.#entryHashes.length, entry + 1));
      hashes.set(this.#entryHashes);
      this.#entryHashes = hashes;
      const rows = new Int32Array(grownLength(this.#entryRows.length, entry + 1));
      rows.set(this.#entryRows);
      this.#entryRows = rows;
    }
    this.#entryHashes[entry] = hash;
    if (tooFull(this.#texts.size, this.#table.length)) this.#rehash();
    else this.#table[place] = entry + 1;
    // Each distinct trigram once per entry, so a posting never lists an entry twice.
    const seen = new Set<number>();
    for (let at = 0; at + 3 <= text.length; at++) {
      const key = trigramKey(text, at);
      if (seen.has(key)) continue;
      seen.add(key);
      let posting = this.#trigrams.get(key);
      if (!posting) this.#trigrams.set(key, (posting = { data: new Uint32Array(4), length: 0 }));
      if (posting.length === posting.data.length) {
        const grown = new Uint32Array(posting.data.length * 2);
        grown.set(posting.data);
        posting.data = grown;
      }
      posting.data[posting.length++] = entry;
    }
    return entry;
  }

  #rehash(): void {
    this.#table = new Int32Array(this.#table.length * 2);
    const mask = this.#table.length - 1;
    for (let entry = 0; entry < this.#texts.size; entry++) {
      let place = this.#entryHashes[entry] & mask;
      while (this.#table[place] !== 0) place = (place + 1) & mask;
      this.#table[place] = entry + 1;
    }
  }
}

/**
 * The values of `list` also in `posting` (both ascending), in a new array. Each is sought from the
 * last place found, galloping: a common trigram's posting may be a hundred times the list.
 */
function intersection(list: Uint32Array, posting: Posting): Uint32Array {
  const { data, length } = posting;
  const out = new Uint32Array(list.length);
  let n = 0;
  let at = 0;
  for (let i = 0; i < list.length && at < length; i++) {
    const value = list[i];
    if (data[at] < value) {
      // Steps doubling while they land below `value`, then a binary search within the last one.
      let step = 1;
      while (at + step < length && data[at + step] < value) step *= 2;
      at = lowerBound(data, value, Math.min(at + step, length), at + (step >>> 1) + 1);
    }
    if (at < length && data[at] === value) out[n++] = value;
  }
  return out.subarray(0, n);
}

/** A group's head: its distances' width in bytes, then its first slot in 4. */
const GROUP_HEAD = 5;
/** A group's start is a Uint32: the groups' bytes end at 4 GiB − 1 at most. */
const MAX_GROUP_BYTES = 0xffffffff;
/** The first distance that does not fit in 1, 2 and 3 bytes. */
const WIDTH_LIMITS = [0x100, 0x10000, 0x1000000];

/** Writes the low `count` bytes of `value` at `at`, least significant first; returns the place after them. */
function writeBytes(bytes: Uint8Array, at: number, value: number, count: number): number {
  for (let i = 0; i < count; i++, value >>>= 8) bytes[at++] = value & 0xff;
  return at;
}

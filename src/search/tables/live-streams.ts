import type { PageArgs } from '../../domain/cursors.js';
import type { LiveStreamIndexRow } from '../../domain/index-rows.js';
import { liveStreamOrder } from '../../domain/orders.js';
import { type FacetAnswer, type FacetCount, type FacetRequest, type LiveStreamFacet, valueCounts } from '../../domain/facets.js';
import { liveStreamFacetFilter } from '../../inputs/facets.js';
import type { LiveStreamFilter } from '../../inputs/live-streams.js';
import { andInto, forEachBit, popcount } from '../primitives/bitset.js';
import { Float64Column, RowTable } from '../primitives/row-table.js';
import { SortOrder } from '../primitives/sort-order.js';
import type { IndexPage } from '../types.js';
import { indexPageOf, pageSegments, positionOfCursor } from './paging.js';

// The live-stream snapshot in memory. It is small (tens of thousands of streams) and replaced as a
// whole every collector pass, so it is rebuilt from the database on every change. Each filtered
// field keeps its streams by value: a slot list, and a bitset too where the value is common. A
// search ANDs bitsets when every condition is common, else starts from the shortest list and
// checks the other conditions on those rows only. Scanning every row per search cost a
// millisecond at 20,000 streams, two thirds of a live page's CPU.

/** The streams of one field value. */
interface Streams {
  slots: readonly number[];
  /** Set when the value holds at least one stream per 32 (a bitset costs no more than its list then). */
  bits: Uint32Array | null;
}

const NONE: Streams = { slots: [], bits: null };

function streamsBy(rows: readonly LiveStreamIndexRow[], words: number, valueOf: (row: LiveStreamIndexRow) => string | null): Map<string, Streams> {
  const lists = new Map<string, number[]>();
  rows.forEach((row, slot) => {
    const value = valueOf(row);
    if (value === null) return;
    const list = lists.get(value);
    if (list) list.push(slot);
    else lists.set(value, [slot]);
  });
  const byValue = new Map<string, Streams>();
  for (const [value, slots] of lists) {
    let bits: Uint32Array | null = null;
    if (slots.length >= words) {
      bits = new Uint32Array(words);
      for (const slot of slots) bits[slot >>> 5] |= 1 << (slot & 31);
    }
    byValue.set(value, { slots, bits });
  }
  return byValue;
}

export class LiveStreamIndex {
  readonly table = new RowTable();
  readonly #rows: LiveStreamIndexRow[] = [];
  readonly #viewers = new Float64Column();
  readonly #order = new SortOrder(this.table, (slot) => this.#viewers.data[slot]);
  /** Every stream: the answer to no filter at all. */
  readonly #all: Uint32Array;
  readonly #byUser: Map<string, Streams>;
  readonly #byLogin: Map<string, Streams>;
  readonly #byGame: Map<string, Streams>;
  readonly #byLanguage: Map<string, Streams>;
  readonly #live: Streams;

  constructor(rows: readonly LiveStreamIndexRow[]) {
    this.#viewers.ensure(rows.length);
    for (const row of rows) {
      const slot = this.table.slotFor(row.id, row.id, () => {});
      this.#rows[slot] = row;
      this.#viewers.data[slot] = row.viewerCount;
      this.table.markAlive(slot, true);
    }
    this.#order.rebuild();
    const words = this.table.words;
    this.#all = this.table.alive.words.slice(0, words);
    this.#byUser = streamsBy(this.#rows, words, (row) => row.userId);
    this.#byLogin = streamsBy(this.#rows, words, (row) => row.userLoginLower);
    this.#byGame = streamsBy(this.#rows, words, (row) => row.gameId);
    this.#byLanguage = streamsBy(this.#rows, words, (row) => row.language);
    this.#live = streamsBy(this.#rows, words, (row) => (row.type === 'live' ? 'live' : null)).get('live') ?? NONE;
  }

  /** The matching streams as a bitset over slots, with their count. */
  #matches(filter: LiveStreamFilter): { bits: Uint32Array; count: number } {
    const login = filter.userLogin ? filter.userLogin.toLowerCase() : null;
    const language = filter.language ? filter.language.toLowerCase() : null;
    const conditions: { streams: Streams; matches: (row: LiveStreamIndexRow) => boolean }[] = [];
    if (filter.userId) conditions.push({ streams: this.#byUser.get(filter.userId) ?? NONE, matches: (row) => row.userId === filter.userId });
    if (login !== null) conditions.push({ streams: this.#byLogin.get(login) ?? NONE, matches: (row) => row.userLoginLower === login });
    if (filter.gameId) conditions.push({ streams: this.#byGame.get(filter.gameId) ?? NONE, matches: (row) => row.gameId === filter.gameId });
    if (filter.type === 'LIVE') conditions.push({ streams: this.#live, matches: (row) => row.type === 'live' });
    if (language !== null) conditions.push({ streams: this.#byLanguage.get(language) ?? NONE, matches: (row) => row.language === language });
    if (conditions.length === 0) return { bits: this.#all.slice(), count: this.table.aliveCount };
    conditions.sort((a, b) => a.streams.slots.length - b.streams.slots.length);
    const [start, ...others] = conditions;
    if (start.streams.bits) {
      // Every condition is common: AND their bitsets.
      const bits = start.streams.bits.slice();
      for (const other of others) andInto(bits, other.streams.bits!);
      return { bits, count: popcount(bits) };
    }
    const bits = new Uint32Array(this.table.words);
    let count = 0;
    for (const slot of start.streams.slots) {
      const row = this.#rows[slot];
      if (others.every((other) => other.matches(row))) {
        bits[slot >>> 5] |= 1 << (slot & 31);
        count++;
      }
    }
    return { bits, count };
  }

  /** Each facet over the matching streams (a snapshot of thousands: counted row by row, in memory). */
  facets(filter: LiveStreamFilter, requests: readonly FacetRequest<LiveStreamFacet>[]): FacetAnswer[] {
    return requests.map((request) => {
      const { bits } = this.#matches(liveStreamFacetFilter(filter, request));
      const counts = new Map<string, FacetCount>();
      forEachBit(bits, (slot) => {
        const row = this.#rows[slot];
        const value = request.facet === 'game' ? row.gameId : row.language;
        const seen = counts.get(value);
        if (!seen) counts.set(value, request.facet === 'game' ? { value, count: 1, label: row.gameName } : { value, count: 1 });
        else {
          seen.count++;
          if (request.facet === 'game' && row.gameName < seen.label!) seen.label = row.gameName;
        }
      });
      return valueCounts(counts.values());
    });
  }

  search(filter: LiveStreamFilter, page: PageArgs): IndexPage {
    const { bits, count } = this.#matches(filter);
    const result = pageSegments([{ rank: 0, bits, count, order: this.#order }], {
      first: page.first,
      last: page.last,
      offset: page.offset,
      after: positionOfCursor(liveStreamOrder, page.after, 'after'),
      before: positionOfCursor(liveStreamOrder, page.before, 'before'),
    });
    return indexPageOf(result, count);
  }
}

import type { LiveStreamFilter } from '../inputs/live-streams.js';
import { liveStreamOrder, type LiveStreamIndexRow } from '../store/live-streams.js';
import { decodeCursor, encodeCursor, type PageArgs } from '../store/paging.js';
import { popcount } from './bitset.js';
import type { IndexPage } from './creators.js';
import { pageSegments, type SegmentPosition } from './paging.js';
import { Float64Column, RowTable } from './row-table.js';
import { SortOrder } from './sort-order.js';

// The live-stream snapshot in memory. It is small (tens of thousands of streams) and replaced as a
// whole every collector pass, so it is rebuilt from the database on every change and a search
// scans it: no per-column index is worth keeping.

export class LiveStreamIndex {
  readonly table = new RowTable();
  readonly #rows: LiveStreamIndexRow[] = [];
  readonly #viewers = new Float64Column();
  readonly #order = new SortOrder(this.table, (slot) => this.#viewers.data[slot]);

  constructor(rows: readonly LiveStreamIndexRow[]) {
    this.#viewers.ensure(rows.length);
    for (const row of rows) {
      const slot = this.table.slotFor(row.id, row.id, () => {});
      this.#rows[slot] = row;
      this.#viewers.data[slot] = row.viewerCount;
      this.table.markAlive(slot, true);
    }
    this.#order.rebuild();
  }

  search(filter: LiveStreamFilter, page: PageArgs): IndexPage {
    const login = filter.userLogin ? filter.userLogin.toLowerCase() : null;
    const language = filter.language ? filter.language.toLowerCase() : null;
    const bits = new Uint32Array(this.table.words);
    this.#rows.forEach((row, slot) => {
      const match =
        (!filter.userId || row.userId === filter.userId) &&
        (login === null || row.userLoginLower === login) &&
        (!filter.gameId || row.gameId === filter.gameId) &&
        (filter.type !== 'LIVE' || row.type === 'live') &&
        (language === null || row.language === language);
      if (match) bits[slot >>> 5] |= 1 << (slot & 31);
    });
    const count = popcount(bits);
    const decode = (cursor: string | null | undefined, field: string): SegmentPosition | null => {
      if (cursor == null) return null;
      const values = decodeCursor(liveStreamOrder, cursor, field);
      return { rank: 0, position: { key: Number(values[0]), id: String(values[1]) } };
    };
    const result = pageSegments([{ rank: 0, bits, count, order: this.#order }], {
      first: page.first,
      last: page.last,
      offset: page.offset,
      after: decode(page.after, 'after'),
      before: decode(page.before, 'before'),
    });
    return {
      ids: result.slots.map((slot) => this.table.ids.get(slot)),
      cursors: result.positions.map(({ position }) => encodeCursor(liveStreamOrder.name, [position.key, position.id])),
      hasNextPage: result.hasNextPage,
      hasPreviousPage: result.hasPreviousPage,
      total: count,
    };
  }
}

import { decodeCursor, encodeCursor, pageDirection } from '../../domain/cursors.js';
import type { Order } from '../../domain/orders.js';
import { bitsOf, type WordWindow } from '../primitives/bitset.js';
import { centsOfDecimal, decimalOfCents } from '../primitives/decimal.js';
import type { IndexPage } from '../types.js';
import type { Bounds } from '../primitives/range-index.js';
import type { Position, SortOrder, Walk } from '../primitives/sort-order.js';
import type { BoundCount } from './own-key.js';

// Connection pages over the index, with the SQL path's exact semantics (src/store/paging.ts):
// first/after forward, last/before backward (rows re-reversed), an offset window, one extra row to
// tell whether more exist. An order is a list of segments: one for a plain order, one per relevance
// tier (highest first) for relevance, each walked in its own sort order.

export interface Segment {
  /** The tier of the segment's rows (relevance), highest first; 0 for a plain order. */
  rank: number;
  /** The segment's matching rows. */
  bits: Uint32Array;
  /** How many of the segment's rows match (within the key range, when `held` says the bits reach beyond it). */
  count: number;
  /**
   * How many bits are set, when more than `count`: the bits then hold rows beyond the key range
   * (a search bounded on its order's key keeps one bitset of its other conditions for every bound),
   * which the walk from the bound never reads but a heap or a sort on the spot would.
   */
  held?: number;
  /** Words [from, to) outside which `bits` holds no row, when known (a date window's): a heap reads only those. */
  window?: WordWindow;
  order: SortOrder;
  /**
   * Where matches can be at all when the filter bounds the order's own key (followers for the
   * follower order, dates for the newest): `first` is just before the highest allowed key, `last`
   * just after the lowest, so a walk starts and stops there instead of visiting every row above.
   */
  keyRange?: { first: Position | null; last: Position | null };
  /**
   * The same rows as a list, when a caller found few of them without a bitset (a channel's videos):
   * sorted on the spot, never a pass over `bits`, which may then be empty.
   */
  slots?: readonly number[];
  /**
   * The rows as a test instead (a page whose total nobody asked for): the order is walked testing
   * each row it reads; `bits` is then empty and `count` unknown (Infinity).
   */
  accept?: (slot: number) => boolean;
}

export interface SegmentPosition {
  rank: number;
  position: Position;
}

export interface PageRequest {
  first?: number | null;
  last?: number | null;
  offset?: number | null;
  after?: SegmentPosition | null;
  before?: SegmentPosition | null;
}

/** Passed in by a test to watch or steer a search's page walk; the service passes none. */
export interface SearchProbe {
  /** Told the sort key of every row a page reads from its order (all matches, for a segment sorted on the spot). */
  visit?: (key: number) => void;
  /** Segments of at most this many rows are sorted on the spot (default 256; 0: every page walks its order). */
  smallSegmentRows?: number;
  /** How a page reads its order: walking it testing bits, or ranking the matches (default: the cheaper). */
  strategy?: Walk['strategy'];
  /** How the total of a search bounded on its order's key is counted (default: the cheapest; own-key.ts). */
  boundCount?: BoundCount;
  /** Rows a page without its total tests before it makes the filter's bitset instead (default: a few thousand). */
  rowTestBudget?: number;
}

export interface SlotPage {
  slots: number[];
  /** Each row's place in the order, for its cursor. */
  positions: SegmentPosition[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/**
 * A row's cursor from its place in its order, for every table: the tier when the order has one
 * (relevance), the key as the order's type spells it (cents as a decimal, milliseconds as an
 * instant), the id.
 */
export function cursorOf(order: Order, { rank, position }: SegmentPosition): string {
  const type = order.keys[order.keys.length - 2].type;
  const key = type === 'decimal' ? decimalOfCents(position.key) : type === 'timestamp' ? new Date(position.key).toISOString() : position.key;
  return encodeCursor(order.name, order.keys.length === 3 ? [rank, key, position.id] : [key, position.id]);
}

/**
 * The place a cursor names in its order, or null for none: cursorOf read back (a 400 naming
 * `field` for a cursor of another order or with values that do not fit it).
 */
export function positionOfCursor(order: Order, cursor: string | null | undefined, field: string): SegmentPosition | null {
  if (cursor == null) return null;
  const values = decodeCursor(order, cursor, field);
  const tiered = order.keys.length === 3;
  const value = values[tiered ? 1 : 0];
  const type = order.keys[order.keys.length - 2].type;
  const key = type === 'decimal' ? centsOfDecimal(value as string | number) : type === 'timestamp' ? Date.parse(String(value)) : Number(value);
  return { rank: tiered ? Number(values[0]) : 0, position: { key, id: String(values.at(-1)) } };
}

/**
 * The cursor of a page's row `row`, from its place and id: made where a client asks for one, on
 * the thread that renders it. The index answers places only: most pages are read for their rows
 * (REST, `nodes`, nested connections) and never show a cursor.
 */
export function cursorAt(order: Order, page: Pick<IndexPage, 'ids' | 'sortKeys'>, row: number): string {
  return cursorOf(order, { rank: page.sortKeys[2 * row], position: { key: page.sortKeys[2 * row + 1], id: page.ids[row] } });
}

/** Every row's cursor (tests; a connection makes them when asked, src/schema/connection.ts). */
export function cursorsOf(order: Order, page: Pick<IndexPage, 'ids' | 'sortKeys'>): string[] {
  return page.ids.map((_, row) => cursorAt(order, page, row));
}

/** A page as every table answers it: its rows' ids and places (from which cursors are made), flags and total. */
export function indexPageOf(result: SlotPage, total: number | null): IndexPage {
  return {
    ids: result.positions.map(({ position }) => position.id),
    sortKeys: sortKeysOf(result.positions),
    hasNextPage: result.hasNextPage,
    hasPreviousPage: result.hasPreviousPage,
    total,
  };
}

/** The page's rows' places as IndexPage.sortKeys: tier and sort key, row after row. */
function sortKeysOf(positions: readonly SegmentPosition[]): Float64Array {
  const keys = new Float64Array(positions.length * 2);
  positions.forEach(({ rank, position }, i) => {
    keys[2 * i] = rank;
    keys[2 * i + 1] = position.key;
  });
  return keys;
}

/** Above every real id (printable ASCII): a position just before all rows of one key. */
const HIGHEST_ID = '\uffff';

/** The key range of a segment from the filter's bounds on the order's key (see Segment.keyRange). */
export function keyRangeOf(bounds: Bounds): Segment['keyRange'] {
  if (bounds.min === undefined && bounds.max === undefined) return undefined;
  return {
    // An inclusive max keeps every row of that key; an exclusive one none of them.
    first: bounds.max === undefined ? null : { key: bounds.max, id: bounds.maxExclusive ? '' : HIGHEST_ID },
    last: bounds.min === undefined ? null : { key: bounds.min, id: '' },
  };
}
/** Up to this many rows a segment is sorted on the spot rather than found through its order. */
const SMALL_SEGMENT_ROWS = 256;

/** Whether a segment of `count` rows is sorted on the spot (then it may come as a list of slots). */
export function isSmallSegment(count: number, probe: SearchProbe = {}): boolean {
  return count <= (probe.smallSegmentRows ?? SMALL_SEGMENT_ROWS);
}

export function pageSegments(segments: readonly Segment[], request: PageRequest, probe: SearchProbe = {}): SlotPage {
  const after = request.after ?? null;
  const before = request.before ?? null;
  const { backward, limit } = pageDirection(request);
  const take = limit + 1;
  const found: { slot: number; rank: number; order: SortOrder }[] = [];
  let skip = request.offset ?? 0;

  const ordered = backward ? [...segments].reverse() : segments;
  for (const segment of ordered) {
    if (found.length >= take) break;
    // Walking forward from `after` towards `before`, or backward from `before` towards `after`.
    const start = backward ? before : after;
    const end = backward ? after : before;
    const beyondStart = start !== null && (backward ? segment.rank < start.rank : segment.rank > start.rank);
    const beyondEnd = end !== null && (backward ? segment.rank > end.rank : segment.rank < end.rank);
    if (beyondStart) continue;
    if (beyondEnd) break;
    const from = start !== null && segment.rank === start.rank ? start.position : null;
    const until = end !== null && segment.rank === end.rank ? end.position : null;
    if (from === null && until === null && skip >= segment.count) {
      skip -= segment.count;
      continue;
    }
    const bounded = withinKeyRange(segment, { from, until, backward });
    // From a cursor, the segment's rows past it are not counted: they are walked, and what the
    // offset did not use up goes on to the next segment (SQL's OFFSET counts across tiers).
    const fromCursor = from !== null || until !== null;
    const wanted = take - found.length;
    const walked = walkSegment(
      segment,
      { ...bounded, backward, skip: fromCursor ? 0 : skip, take: fromCursor ? skip + wanted : wanted, visit: probe.visit, strategy: probe.strategy },
      probe,
    );
    for (const slot of fromCursor ? walked.slice(skip) : walked) found.push({ slot, rank: segment.rank, order: segment.order });
    skip = fromCursor ? Math.max(0, skip - walked.length) : 0;
  }

  const hasMore = found.length > limit;
  const rows = found.slice(0, limit);
  if (backward) rows.reverse();
  return {
    slots: rows.map((row) => row.slot),
    positions: rows.map((row) => ({ rank: row.rank, position: row.order.positionOf(row.slot) })),
    hasNextPage: backward ? before !== null : hasMore,
    hasPreviousPage: backward ? hasMore : after !== null || (request.offset ?? 0) > 0,
  };
}

/** The cursors narrowed to the segment's key range: whichever bound is tighter wins. */
function withinKeyRange(segment: Segment, walk: { from: Position | null; until: Position | null; backward: boolean }) {
  const range = segment.keyRange;
  if (!range) return { from: walk.from, until: walk.until };
  const order = segment.order;
  const direction = walk.backward ? -1 : 1;
  const rangeStart = walk.backward ? range.last : range.first;
  const rangeEnd = walk.backward ? range.first : range.last;
  // Positions compare like rows: the later start and the earlier end in the walking direction.
  const later = (a: Position | null, b: Position | null) => (a === null ? b : b === null ? a : order.comparePositions(a, b) * direction >= 0 ? a : b);
  const earlier = (a: Position | null, b: Position | null) => (a === null ? b : b === null ? a : order.comparePositions(a, b) * direction <= 0 ? a : b);
  return { from: later(walk.from, rangeStart), until: earlier(walk.until, rangeEnd) };
}

function walkSegment(segment: Segment, walk: Walk, probe: SearchProbe): number[] {
  const { order, bits } = segment;
  if (segment.accept) return order.walkTesting(walk, segment.accept);
  if (isSmallSegment(segment.held ?? segment.count, probe)) {
    const direction = walk.backward ? -1 : 1;
    // > 0: the slot lies beyond the position in the walking direction.
    const beyond = (slot: number, position: Position) => order.comparePosition(slot, position) * direction;
    const matches = segment.slots ? [...segment.slots] : bitsOf(bits);
    if (walk.visit) for (const slot of matches) walk.visit(order.positionOf(slot).key);
    const slots = matches
      .sort((a, b) => order.compareSlots(a, b) * direction)
      .filter((slot) => (walk.from === null || beyond(slot, walk.from) > 0) && (walk.until === null || beyond(slot, walk.until) < 0));
    return slots.slice(walk.skip, walk.skip + walk.take);
  }
  return order.select(bits, segment.count, walk, segment.held, segment.window);
}

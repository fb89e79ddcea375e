import { ApiError } from './errors.js';
import type { KeyType, Order } from './orders.js';

// Pages and cursors of every connection: a cursor is the opaque base64url of the order's name and
// the row's sort values, so one issued for another order, or made by hand, is a 400 naming the
// argument before anything is charged. It holds a position in the order, not the filter: sent with
// another filter it continues from that position under the new one, as a keyset query would. The store's SQL pages and the search index's pages both use it.

export interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
  offset?: number | null;
}

export interface Page<Row> {
  rows: Row[];
  cursors: string[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

export type CursorValue = string | number | boolean | null;

const INT8 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const fitsInt8 = (digits: string) => BigInt(digits) >= INT8.min && BigInt(digits) <= INT8.max;

const validValue: Record<KeyType, (value: unknown) => boolean> = {
  integer: (v) => (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^-?\d{1,19}$/.test(v) && fitsInt8(v)),
  decimal: (v) => (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && /^-?\d{1,30}(\.\d{1,10})?$/.test(v)),
  timestamp: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(v) && !Number.isNaN(Date.parse(v)),
  text: (v) => typeof v === 'string' && !v.includes('\u0000'),
};

export function encodeCursor(sortName: string, values: CursorValue[]): string {
  return Buffer.from(JSON.stringify([sortName, ...values])).toString('base64url');
}

/**
 * The sort values in a cursor, or 400 naming the argument: a cursor from another order, or one
 * whose values do not fit the order's columns (hand-made), never reaches SQL.
 */
export function decodeCursor(sort: Order, cursor: string, field: string): CursorValue[] {
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(decoded) && decoded[0] === sort.name && decoded.length === sort.keys.length + 1) {
      const values = decoded.slice(1) as CursorValue[];
      if (values.every((value, i) => validValue[sort.keys[i].type](value))) return values;
    }
  } catch {
    // falls through to the 400 below
  }
  throw ApiError.badRequest([{ field, message: 'is not a cursor issued for this order' }]);
}

/** Step 4 of the pipeline for connections: check the cursors before anything is charged. */
export function checkCursors(sort: Order, args: PageArgs): void {
  if (args.after != null) decodeCursor(sort, args.after, 'after');
  if (args.before != null) decodeCursor(sort, args.before, 'before');
}

export const DEFAULT_FIRST = 20;

/**
 * `first` forward, `last` (or `before` alone) backward, and the page size either way: the one
 * reading of a window for the SQL path, the search index and its partitions.
 */
export function pageDirection(args: { first?: number | null; last?: number | null; before?: unknown }): { backward: boolean; limit: number } {
  const backward = args.last != null || (args.before != null && args.first == null);
  return { backward, limit: (backward ? args.last : args.first) ?? DEFAULT_FIRST };
}

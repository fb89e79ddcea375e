import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { ApiError } from '../domain/errors.js';
import { toCount } from './values.js';

// Keyset pages for every connection (PostGraphile's shape):
//   SELECT …, <k0> AS k0, …, <id> AS kN FROM … WHERE (<k0>, …, <id>) < (:cursor) ORDER BY <k0> DESC, …, <id> DESC LIMIT first + 1
// The extra row answers hasNextPage; `last`/`before` flip the comparison and order, then re-reverse.
// Every order is descending with the id as final tie-break, so pages never overlap or skip.

export interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
  offset?: number | null;
}

/** What a sort expression holds, so a cursor's values can be checked before they reach SQL. */
export type KeyType = 'integer' | 'decimal' | 'timestamp' | 'text';

export interface SortColumn {
  expression: RawBuilder<unknown>;
  type: KeyType;
}

export interface SortKey {
  /** A name that makes cursors of one order unusable with another. */
  name: string;
  /** The sort expressions, most significant first; the last must be the unique id. */
  keys: SortColumn[];
}

export const sortColumn = (expression: RawBuilder<unknown>, type: KeyType): SortColumn => ({ expression, type });

export interface Page<Row> {
  rows: Row[];
  cursors: string[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

type CursorValue = string | number | boolean | null;
const keyAlias = (index: number) => `__k${index}`;

export function encodeCursor(sortName: string, values: CursorValue[]): string {
  return Buffer.from(JSON.stringify([sortName, ...values])).toString('base64url');
}

const INT8 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
const fitsInt8 = (digits: string) => BigInt(digits) >= INT8.min && BigInt(digits) <= INT8.max;

const validValue: Record<KeyType, (value: unknown) => boolean> = {
  integer: (v) => (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^-?\d{1,19}$/.test(v) && fitsInt8(v)),
  decimal: (v) => (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && /^-?\d{1,30}(\.\d{1,10})?$/.test(v)),
  timestamp: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(v) && !Number.isNaN(Date.parse(v)),
  text: (v) => typeof v === 'string' && !v.includes('\u0000'),
};

/**
 * The sort values in a cursor, or 400 naming the argument: a cursor from another order, or one
 * whose values do not fit the order's columns (hand-made), never reaches SQL.
 */
export function decodeCursor(sort: SortKey, cursor: string, field: string): CursorValue[] {
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(decoded) && decoded[0] === sort.name && decoded.length === sort.keys.length + 1) {
      const values = decoded.slice(1) as CursorValue[];
      if (values.every((value, i) => validValue[sort.keys[i].type](value))) return values;
    }
  } catch {
    // falls through to the 400 below
  }
  throw ApiError.badRequest([{ field, message: 'is not a cursor issued for this query and order' }]);
}

/** Step 4 of the pipeline for connections: check the cursors before anything is charged. */
export function checkCursors(sort: SortKey, args: PageArgs): void {
  if (args.after != null) decodeCursor(sort, args.after, 'after');
  if (args.before != null) decodeCursor(sort, args.before, 'before');
}

function cursorValue(value: unknown): CursorValue {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  return value as CursorValue;
}

export const DEFAULT_FIRST = 20;

export async function fetchPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  sort: SortKey,
  args: PageArgs,
): Promise<Page<O>> {
  const backward = args.last != null || (args.before != null && args.first == null);
  const limit = (backward ? args.last : args.first) ?? DEFAULT_FIRST;
  let q = query as SelectQueryBuilder<any, any, any>;
  sort.keys.forEach((key, index) => {
    q = q.select(key.expression.as(keyAlias(index)));
  });

  const tuple = sql.join(sort.keys.map((key) => key.expression));
  for (const [cursor, field, isAfter] of [
    [args.after, 'after', true],
    [args.before, 'before', false],
  ] as const) {
    if (cursor == null) continue;
    const values = decodeCursor(sort, cursor, field);
    const comparison = isAfter ? sql`<` : sql`>`;
    q = q.where(sql<boolean>`(${tuple}) ${comparison} (${sql.join(values.map((v) => sql`${v}`))})`);
  }
  const direction = backward ? sql`ASC` : sql`DESC`;
  for (const key of sort.keys) q = q.orderBy(sql`${key.expression} ${direction}`);
  q = q.limit(limit + 1);
  if (args.offset) q = q.offset(args.offset);

  const fetched = (await q.execute()) as Record<string, unknown>[];
  const hasMore = fetched.length > limit;
  const rows = fetched.slice(0, limit);
  if (backward) rows.reverse();
  const cursors = rows.map((row) => encodeCursor(sort.name, sort.keys.map((_, i) => cursorValue(row[keyAlias(i)]))));
  return {
    rows: rows as O[],
    cursors,
    hasNextPage: backward ? args.before != null : hasMore,
    hasPreviousPage: backward ? hasMore : args.after != null || (args.offset ?? 0) > 0,
  };
}

/**
 * The exact total of a filtered query, `SELECT count(*) FROM … WHERE <filter>`: the one place
 * totals are computed, so making them cheaper on millions of rows changes only this.
 */
export async function countMatches<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): Promise<number> {
  const row = await (query as SelectQueryBuilder<any, any, any>).select(sql<string>`count(*)`.as('total')).executeTakeFirstOrThrow();
  return toCount(row.total as string | number | bigint);
}

/** A LIKE pattern that matches `text` anywhere, with `%`, `_` and `\` taken literally. */
export function containsPattern(text: string): string {
  return `%${escapeLike(text.toLowerCase())}%`;
}

export function prefixPattern(text: string): string {
  return `${escapeLike(text.toLowerCase())}%`;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

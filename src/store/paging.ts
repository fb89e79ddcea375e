import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { ApiError } from '../errors.js';

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

export interface SortKey {
  /** A name that makes cursors of one order unusable with another. */
  name: string;
  /** The sort expressions, most significant first; the last must be the unique id. */
  keys: RawBuilder<unknown>[];
}

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

export function decodeCursor(sortName: string, cursor: string, field: string, length: number): CursorValue[] {
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(decoded) && decoded[0] === sortName && decoded.length === length + 1) {
      return decoded.slice(1) as CursorValue[];
    }
  } catch {
    // falls through to the 400 below
  }
  throw ApiError.badRequest([{ field, message: 'is not a cursor issued for this query and order' }]);
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
    q = q.select(key.as(keyAlias(index)));
  });

  const tuple = sql.join(sort.keys);
  for (const [cursor, field, isAfter] of [
    [args.after, 'after', true],
    [args.before, 'before', false],
  ] as const) {
    if (cursor == null) continue;
    const values = decodeCursor(sort.name, cursor, field, sort.keys.length);
    const comparison = isAfter ? sql`<` : sql`>`;
    q = q.where(sql<boolean>`(${tuple}) ${comparison} (${sql.join(values.map((v) => sql`${v}`))})`);
  }
  const direction = backward ? sql`ASC` : sql`DESC`;
  for (const key of sort.keys) q = q.orderBy(sql`${key} ${direction}`);
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

import { type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import { type CursorValue, decodeCursor, DEFAULT_FIRST, encodeCursor, type Page, type PageArgs } from '../domain/cursors.js';
import type { Order } from '../domain/orders.js';
import { toCount } from './values.js';

// Keyset pages for every connection (PostGraphile's shape):
//   SELECT …, <k0> AS k0, …, <id> AS kN FROM … WHERE (<k0>, …, <id>) < (:cursor) ORDER BY <k0> DESC, …, <id> DESC LIMIT first + 1
// The extra row answers hasNextPage; `last`/`before` flip the comparison and order, then re-reverse.
// Every order is descending with the id as final tie-break, so pages never overlap or skip.

/** A domain order (src/domain/orders.ts) in SQL: one expression per key, the id last. */
export interface SortKey {
  order: Order;
  expressions: RawBuilder<unknown>[];
}

export function sortKey(order: Order, ...expressions: RawBuilder<unknown>[]): SortKey {
  if (expressions.length !== order.keys.length) throw new Error(`order ${order.name} has ${order.keys.length} keys`);
  return { order, expressions };
}

const keyAlias = (index: number) => `__k${index}`;

function cursorValue(value: unknown): CursorValue {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  return value as CursorValue;
}

export async function fetchPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  sort: SortKey,
  args: PageArgs,
): Promise<Page<O>> {
  const backward = args.last != null || (args.before != null && args.first == null);
  const limit = (backward ? args.last : args.first) ?? DEFAULT_FIRST;
  let q = query as SelectQueryBuilder<any, any, any>;
  sort.expressions.forEach((expression, index) => {
    q = q.select(expression.as(keyAlias(index)));
  });

  const tuple = sql.join(sort.expressions);
  for (const [cursor, field, isAfter] of [
    [args.after, 'after', true],
    [args.before, 'before', false],
  ] as const) {
    if (cursor == null) continue;
    const values = decodeCursor(sort.order, cursor, field);
    const comparison = isAfter ? sql`<` : sql`>`;
    q = q.where(sql<boolean>`(${tuple}) ${comparison} (${sql.join(values.map((v) => sql`${v}`))})`);
  }
  const direction = backward ? sql`ASC` : sql`DESC`;
  for (const expression of sort.expressions) q = q.orderBy(sql`${expression} ${direction}`);
  q = q.limit(limit + 1);
  if (args.offset) q = q.offset(args.offset);

  const fetched = (await q.execute()) as Record<string, unknown>[];
  const hasMore = fetched.length > limit;
  const rows = fetched.slice(0, limit);
  if (backward) rows.reverse();
  const cursors = rows.map((row) => encodeCursor(sort.order.name, sort.expressions.map((_, i) => cursorValue(row[keyAlias(i)]))));
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

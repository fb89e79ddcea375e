import { type Kysely, type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import { type CursorValue, decodeCursor, encodeCursor, type Page, type PageArgs, pageDirection } from '../domain/cursors.js';
import type { KeyType, Order } from '../domain/orders.js';
import { toCount } from './values.js';
import { lowerCase } from '../domain/text.js';

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

// A cursor must not depend on the driver (pg reads a bigint as a string, PGlite as a number) nor
// on the path that found the row: integer keys are numbers, as the search index writes them.
function cursorValue(value: unknown, type: KeyType): CursorValue {
  if (value instanceof Date) return value.toISOString();
  if (type === 'integer' && (typeof value === 'bigint' || typeof value === 'string') && Number.isSafeInteger(Number(value))) return Number(value);
  if (typeof value === 'bigint') return value.toString();
  return value as CursorValue;
}

/** `(<keys>) < (:after)` and `(<keys>) > (:before)`, for the cursors given. */
function cursorConditions(keys: RawBuilder<unknown>[], sort: SortKey, args: PageArgs): RawBuilder<boolean>[] {
  const tuple = sql.join(keys);
  const conditions: RawBuilder<boolean>[] = [];
  for (const [cursor, field, isAfter] of [
    [args.after, 'after', true],
    [args.before, 'before', false],
  ] as const) {
    if (cursor == null) continue;
    const values = decodeCursor(sort.order, cursor, field);
    const comparison = isAfter ? sql`<` : sql`>`;
    conditions.push(sql<boolean>`(${tuple}) ${comparison} (${sql.join(values.map((v) => sql`${v}`))})`);
  }
  return conditions;
}

/** The page's rows in order, their cursors and flags, from the rows fetched (limit + 1 at most). */
function pageOf<O>(fetched: Record<string, unknown>[], sort: SortKey, args: PageArgs): Page<O> {
  const { backward, limit } = pageDirection(args);
  const hasMore = fetched.length > limit;
  const rows = fetched.slice(0, limit);
  if (backward) rows.reverse();
  const cursors = rows.map((row) => encodeCursor(sort.order.name, sort.expressions.map((_, i) => cursorValue(row[keyAlias(i)], sort.order.keys[i].type))));
  return {
    rows: rows as O[],
    cursors,
    hasNextPage: backward ? args.before != null : hasMore,
    hasPreviousPage: backward ? hasMore : args.after != null || (args.offset ?? 0) > 0,
  };
}

export async function fetchPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  sort: SortKey,
  args: PageArgs,
): Promise<Page<O>> {
  const { backward, limit } = pageDirection(args);
  let q = query as SelectQueryBuilder<any, any, any>;
  sort.expressions.forEach((expression, index) => {
    q = q.select(expression.as(keyAlias(index)));
  });
  for (const condition of cursorConditions(sort.expressions, sort, args)) q = q.where(condition);
  const order = backward ? sql`ASC` : sql`DESC`;
  for (const expression of sort.expressions) q = q.orderBy(sql`${expression} ${order}`);
  q = q.limit(limit + 1);
  if (args.offset) q = q.offset(args.offset);
  return pageOf((await q.execute()) as Record<string, unknown>[], sort, args);
}

/**
 * The same page of many groups (the first videos of each of 20 channels) and each group's exact
 * total, in one statement:
 *   WITH m AS (SELECT …, <k0> AS __k0, … FROM … WHERE <group> = ANY(:groups) AND <filter>),
 *     totals AS (SELECT <group>, count(*) FROM m GROUP BY <group>),
 *     page AS (SELECT * FROM (SELECT m.*, row_number() OVER (PARTITION BY <group> ORDER BY __k0 DESC, …) AS __rn
 *                             FROM m WHERE (__k0, …) < (:cursor)) r WHERE __rn > :offset AND __rn <= :offset + first + 1)
 *   SELECT totals.*, page.* FROM totals LEFT JOIN page …
 * The total ignores the cursors, as totalCount does. `matches` selects the rows of `groups` only;
 * the map has every one of them (a group without matches: an empty page, total 0).
 */
export async function fetchGroupedPages<O>(
  db: Kysely<any>,
  matches: SelectQueryBuilder<any, any, O>,
  group: string,
  groups: readonly string[],
  sort: SortKey,
  args: PageArgs,
): Promise<Map<string, { page: Page<O>; total: number }>> {
  const { backward, limit } = pageDirection(args);
  let q = matches as SelectQueryBuilder<any, any, any>;
  sort.expressions.forEach((expression, index) => {
    q = q.select(expression.as(keyAlias(index)));
  });
  const keys = sort.expressions.map((_, index) => sql.ref(`m.${keyAlias(index)}`));
  const conditions = cursorConditions(keys, sort, args);
  const order = backward ? sql`ASC` : sql`DESC`;
  const offset = args.offset ?? 0;
  const groupRef = sql.ref(`m.${group}`);
  const result = await sql<Record<string, unknown>>`WITH m AS (${q}),
    totals AS (SELECT ${groupRef} AS __group, count(*) AS __total FROM m GROUP BY ${groupRef}),
    page AS (SELECT * FROM (
      SELECT m.*, row_number() OVER (PARTITION BY ${groupRef} ORDER BY ${sql.join(keys.map((key) => sql`${key} ${order}`))}) AS __rn
      FROM m ${conditions.length > 0 ? sql`WHERE ${sql.join(conditions, sql` AND `)}` : sql``}
    ) ranked WHERE __rn > ${offset} AND __rn <= ${offset + limit + 1})
    SELECT totals.__group, totals.__total, page.* FROM totals LEFT JOIN page ON page.${sql.ref(group)} = totals.__group
    ORDER BY totals.__group, page.__rn`.execute(db);
  const fetched = new Map<string, { rows: Record<string, unknown>[]; total: number }>();
  for (const row of result.rows) {
    const key = row.__group as string;
    let entry = fetched.get(key);
    if (!entry) fetched.set(key, (entry = { rows: [], total: toCount(row.__total as string | number | bigint) }));
    if (row.__rn != null) entry.rows.push(row);
  }
  return new Map(groups.map((key) => [key, { page: pageOf<O>(fetched.get(key)?.rows ?? [], sort, args), total: fetched.get(key)?.total ?? 0 }]));
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
  return `%${escapeLike(lowerCase(text))}%`;
}

export function prefixPattern(text: string): string {
  return `${escapeLike(lowerCase(text))}%`;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

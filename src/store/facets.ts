import { type RawBuilder, type SelectQueryBuilder, sql } from 'kysely';
import { type FacetCount, rangeCounts, type RangeCount, valueCounts } from '../domain/facets.js';
import { toCount } from './values.js';

// Facets on the SQL path (the index not loaded, or SEARCH_INDEX=off): one GROUP BY statement per
// facet over the search's own WHERE, shaped by the same functions as the index's counts
// (src/domain/facets.ts), so both paths answer alike.

type AnyQuery = SelectQueryBuilder<any, any, any>;

/**
 *   SELECT <value> AS value, count(*) AS count [, <label> AS label] FROM … WHERE … GROUP BY 1
 * `spell`: the stored value as the API writes it.
 */
export async function valueFacet(
  query: AnyQuery,
  value: RawBuilder<unknown>,
  spell: (stored: unknown) => string,
  label?: RawBuilder<string>,
): Promise<FacetCount[]> {
  let q = query.select([value.as('value'), sql<string>`count(*)`.as('count')]);
  if (label) q = q.select(label.as('label'));
  const rows = await q.groupBy(sql`1`).execute();
  return valueCounts(
    rows.map((row) => ({
      value: spell(row.value),
      count: toCount(row.count as string),
      ...(label ? { label: row.label as string } : {}),
    })),
  );
}

/**
 * A histogram: width_bucket(<column>, edges) is how many edges are <= the value, the bucket's index.
 *   SELECT width_bucket(<column>, $edges::<type>[]) AS bucket, count(*) FROM … WHERE … GROUP BY 1
 * (by position: the same expression with its parameter written again would be another one to PostgreSQL)
 * `type` is the column's own, so each comparison is the one its filter makes.
 */
export async function rangeFacet(query: AnyQuery, column: RawBuilder<unknown>, type: 'bigint' | 'numeric', edges: readonly number[]): Promise<RangeCount[]> {
  const bucket = sql`width_bucket(${column}, ${sql.val(edges)}::${sql.raw(type)}[])`;
  const rows = await query.select([bucket.as('bucket'), sql<string>`count(*)`.as('count')]).groupBy(sql`1`).execute();
  const counts = new Array<number>(edges.length + 1).fill(0);
  for (const row of rows) if (row.bucket !== null) counts[Number(row.bucket)] = toCount(row.count as string);
  return rangeCounts(edges, counts);
}

/** Values spelled as the stored text or number reads ("US", "42", "true"). */
export const asText = (stored: unknown): string => String(stored);

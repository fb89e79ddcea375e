import { type RawBuilder, sql } from 'kysely';

// Driver-neutral readers: pg returns int8 and numeric as strings, PGlite as numbers or BigInt.
// Responses never depend on which driver ran.

export function toCount(value: string | number | bigint | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return typeof value === 'number' ? value : Number(value);
}

// Metrics are numeric(20,2): rendered as decimal strings with exactly two decimals ("3.25").
export function toDecimal(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '0.00';
  if (typeof value === 'number') return value.toFixed(2);
  // pg's text of a numeric(20,2) already has exactly two decimals: the common case, kept as is.
  if (value.length >= 4 && value.charCodeAt(value.length - 3) === 46) return value;
  const [whole, fraction = ''] = value.split('.');
  return `${whole}.${fraction.padEnd(2, '0').slice(0, 2)}`;
}

export function toDate(value: Date | string | null | undefined): Date | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value : new Date(value);
}

/** A numeric(20,2) column as whole cents in a float8: exact for values below 90 trillion. */
export const centsOf = (column: string): RawBuilder<number> => sql<number>`(${sql.ref(column)} * 100)::float8`;

/** A duration as a SQL interval, for comparisons with now(). */
export const interval = (ms: number): RawBuilder<unknown> => sql`${`${ms} milliseconds`}::interval`;

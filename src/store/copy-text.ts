import { arrayLiteral, columnNames, type BulkTable, type Row } from './bulk-tables.js';

// COPY's text format (PostgreSQL docs, COPY, "Text Format"): a line per row, values separated by
// tabs, \N for NULL, backslash escapes for backslash, newline, carriage return and tab. Pure, so
// worker threads encode rows where they make them.

/** Rows already encoded, at most one per key; `copyText` ends with a newline unless empty. */
export interface EncodedRows {
  copyText: string;
  /** Every row gives `last_update_at`: none needs the column default (tables that have it). */
  everyRowStamped?: boolean;
}

/** COPY text per stream chunk: a generator pauses when the connection is behind. */
const COPY_CHUNK_CHARS = 256 * 1024;

const COPY_SPECIAL = /[\\\n\r\t]/;
const COPY_ESCAPED: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const copyEscape = (text: string) => (COPY_SPECIAL.test(text) ? text.replace(/[\\\n\r\t]/g, (char) => COPY_ESCAPED[char]) : text);

/** One value in COPY's text format: \N for NULL, backslash escapes for the separators. */
export function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`COPY cannot carry the number ${value}`);
    return numberText(value);
  }
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'string') return copyEscape(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return copyEscape(arrayLiteral(value));
  return copyEscape(JSON.stringify(value));
}

/**
 * A number as String() writes it, faster for the two-decimal metrics imports carry: a double's
 * shortest text is slow to find, while an integer's is not. Below 1e12, decimals two apart are
 * distinct doubles, so when v is k / 100 exactly, k's digits with the point put back are the
 * shortest text of v.
 */
export function numberText(value: number): string {
  if (Number.isInteger(value) || !(Math.abs(value) < 1e12)) return String(value);
  const hundredths = Math.round(value * 100);
  if (hundredths / 100 !== value) return String(value);
  const magnitude = Math.abs(hundredths);
  const cents = magnitude % 100;
  // Small integers' texts come from V8's number-string cache.
  const fraction = cents % 10 === 0 ? cents / 10 : cents < 10 ? `0${cents}` : cents;
  return `${value < 0 ? '-' : ''}${(magnitude - cents) / 100}.${fraction}`;
}

const enum FieldKind {
  Text,
  Number,
  Other,
}

/** How each column's values are usually given, so the common case skips copyField's type tests. */
const fieldKinds = new WeakMap<BulkTable, FieldKind[]>();

function kindsOf(table: BulkTable): FieldKind[] {
  let kinds = fieldKinds.get(table);
  if (!kinds) {
    kinds = table.columns.map(([, type, cast]) =>
      cast ? FieldKind.Other : type === 'text' ? FieldKind.Text : ['int2', 'int4', 'int8', 'numeric'].includes(type) ? FieldKind.Number : FieldKind.Other,
    );
    fieldKinds.set(table, kinds);
  }
  return kinds;
}

/**
 * One row as a line of COPY text, its values in the table's column order. Joined rather than
 * concatenated: a line built with += is a chain of partial strings that lives until the batch is sent.
 */
export function copyLine(row: Row, table: BulkTable): string {
  const columns = columnNames(table);
  const kinds = kindsOf(table);
  const fields = new Array<string>(columns.length);
  for (let i = 0; i < columns.length; i++) {
    const value = row[columns[i]];
    const kind = kinds[i];
    if (kind === FieldKind.Text && typeof value === 'string') fields[i] = copyEscape(value);
    else if (kind === FieldKind.Number && typeof value === 'number' && Number.isFinite(value)) fields[i] = numberText(value);
    else fields[i] = copyField(value);
  }
  return `${fields.join('\t')}\n`;
}

/** Rows as chunks of COPY text in the table's column order, encoded as the stream asks for them. */
export function* copyChunks(table: BulkTable, rows: Iterable<Row> | EncodedRows): Generator<string> {
  if ('copyText' in rows) {
    if (rows.copyText !== '') yield rows.copyText;
    return;
  }
  let chunk = '';
  for (const row of rows) {
    chunk += copyLine(row, table);
    if (chunk.length >= COPY_CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}

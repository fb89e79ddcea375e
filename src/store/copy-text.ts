import { arrayLiteral, columnNames, type BulkTable, type Row } from './bulk-tables.js';

// COPY's text format (PostgreSQL docs, COPY, "Text Format"): a line per row, values separated by
// tabs, \N for NULL, backslash escapes for backslash, newline, carriage return and tab. Pure, so
// worker threads encode rows where they make them.

/** Rows already encoded, at most one per key; `copyText` ends with a newline unless empty. */
export interface EncodedRows {
  copyText: string;
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
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'string') return copyEscape(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return copyEscape(arrayLiteral(value));
  return copyEscape(JSON.stringify(value));
}

/**
 * One row as a line of COPY text, its values in `columns` order. Joined rather than concatenated:
 * a line built with += is a chain of partial strings that lives until the batch is sent.
 */
export function copyLine(row: Row, columns: readonly string[]): string {
  const fields = new Array<string>(columns.length);
  for (let i = 0; i < columns.length; i++) fields[i] = copyField(row[columns[i]]);
  return `${fields.join('\t')}\n`;
}

/** Rows as chunks of COPY text in the table's column order, encoded as the stream asks for them. */
export function* copyChunks(table: BulkTable, rows: Iterable<Row> | EncodedRows): Generator<string> {
  if ('copyText' in rows) {
    if (rows.copyText !== '') yield rows.copyText;
    return;
  }
  const columns = columnNames(table);
  let chunk = '';
  for (const row of rows) {
    chunk += copyLine(row, columns);
    if (chunk.length >= COPY_CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}

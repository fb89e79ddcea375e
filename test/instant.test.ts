import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Instant, isoText, parseUtcTimestamp } from '../src/domain/instant.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { sql } from 'kysely';
import { createTestStore } from './support/store.js';

// Instants read from PostgreSQL print from their own text: the same instant and the same ISO text
// as pg's own parser and Date's toISOString, for every form PostgreSQL prints in UTC; any other
// form is left to the general parser.

const pgParse = pg.types.getTypeParser(1184, 'text') as (text: string) => Date;

/** PostgreSQL's text of an instant in UTC with `fractionDigits` digits (0: none), as it prints it. */
function postgresText(epochMs: number, micros: number, fractionDigits: number): string {
  const iso = new Date(epochMs).toISOString();
  // PostgreSQL leaves out trailing zeros of the fraction, and the point when none is left.
  const fraction = (iso.slice(20, 23) + String(micros).padStart(3, '0')).slice(0, fractionDigits).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
}

describe('Instant', () => {
  it('reads the text PostgreSQL prints in UTC as its parser does, and prints it as toISOString does', () => {
    const rng = seededRandom('instants');
    const start = Date.UTC(1000, 0, 1);
    const end = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    for (let i = 0; i < 20_000; i++) {
      const epochMs = start + Math.floor(rng.next() * (end - start));
      const text = postgresText(epochMs, rng.int(0, 999), rng.int(0, 6));
      const parsed = parseUtcTimestamp(text);
      expect(parsed, text).toBeInstanceOf(Instant);
      expect(parsed!.getTime(), text).toBe(pgParse(text).getTime());
      expect(isoText(parsed!), text).toBe(pgParse(text).toISOString());
    }
  });

  it('leaves every other form to the general parser', () => {
    for (const text of [
      'infinity',
      '-infinity',
      '2026-10-29 15:11:30.743+05:30',
      '2026-10-29 15:11:30-08',
      '2026-10-29 15:11:30+00 BC',
      '0099-01-01 00:00:00+00',
      '2026-13-01 00:00:00+00',
      '2026-10-29T15:11:30+00',
      '2026-10-29 15:11:30.1234567+00',
      '2026-10-29 15:11:3x+00',
      '',
    ]) {
      expect(parseUtcTimestamp(text), text).toBeNull();
    }
  });

  it('prints a Date that was not read from PostgreSQL as toISOString does', () => {
    const date = new Date(Date.UTC(2026, 4, 1, 12, 34, 56, 7));
    expect(isoText(date)).toBe('2026-05-01T12:34:56.007Z');
  });

  it('comes out of the store (PostgreSQL or the embedded one) printing what it holds', async () => {
    const store = await createTestStore();
    try {
      const { rows } = await sql<{ now: Date; fixed: Date; never: Date }>`SELECT now() AS now, timestamptz '2026-10-29 15:11:30.1+00' AS fixed, timestamptz 'infinity' AS never`.execute(store.db);
      const [row] = rows;
      // On PostgreSQL, in UTC, the store's instants keep their text.
      if (store.kind === 'postgres') expect(row.fixed).toBeInstanceOf(Instant);
      expect(isoText(row.fixed)).toBe('2026-10-29T15:11:30.100Z');
      expect(row.fixed.getTime()).toBe(Date.UTC(2026, 9, 29, 15, 11, 30, 100));
      expect(isoText(row.now)).toBe(new Date(row.now.getTime()).toISOString());
      // Other forms as pg's parser gives them.
      if (store.kind === 'postgres') expect(row.never).toEqual(pgParse('infinity'));
    } finally {
      await store.close();
    }
  });
});

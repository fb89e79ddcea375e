import { describe, expect, it } from 'vitest';
import { canonicalInstant, isInstant, parseInstant } from '../src/inputs/common.js';
import { creatorsTable } from '../src/store/bulk-tables.js';
import { copyField, copyLine, numberText } from '../src/store/copy-text.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';

// The import's fast paths must say exactly what the general code says: a number's COPY text is
// String()'s, a timestamp is valid exactly when parseInstant reads it, and stored as toISOString()
// writes it.

describe('import encoding fast paths', () => {
  it('writes every number as String() does', () => {
    const rng = seededRandom('number-text');
    const values = [0, -0, 0.1, 0.01, 0.05, 0.5, 1.005, 2.675, 99.99, 100.1, -3.25, 1e11 + 0.01, 1e12 + 0.5, 1e21, 5e-324, Number.MAX_SAFE_INTEGER, 2 ** 31, 0.1 + 0.2];
    for (let i = 0; i < 20_000; i++) {
      const scale = 10 ** rng.int(0, 14);
      values.push(Math.round(rng.next() * scale) / 100, -Math.round(rng.next() * scale) / 100, rng.next() * scale, Math.round(rng.next() * scale) / 1000);
    }
    for (const value of values) expect(numberText(value), String(value)).toBe(String(value));
  });

  it('encodes a row as the general field encoding does', () => {
    const row = {
      platform: 'twitter', user_id: 'a\tb', username: 'line\nbreak\\', full_name: '', avatar: 'x', country: 'US', language: 'en',
      gender: 1, follower_count: 12, is_verified: true, has_email: false, avg_engagement_rate: 0.16, avg_video_engagement_rate: 1.005,
      avg_comment_count: 1e12 + 0.5, avg_like_count: -0, avg_retweet_count: 3, avg_view_count: 100.1, retweet_ratio: 0.05, reply_ratio: 2.675,
      post_count: '12', video_count: 0, last_publish_at: null, recent_month_publish_count: 1, recent_week_publish_count: 0,
      last_post: '{"a":"\\t"}', evaluation_min: 1.2, evaluation_max: 3.5, category_ids: [1, 2], last_update_at: new Date(0),
    };
    const general = `${creatorsTable.columns.map(([column]) => copyField((row as Record<string, unknown>)[column])).join('\t')}\n`;
    expect(copyLine(row, creatorsTable)).toBe(general);
  });

  it('reads a timestamp exactly when parseInstant does, and stores it as toISOString() writes it', () => {
    const rng = seededRandom('instants');
    const texts = ['2024-02-29T00:00:00.000Z', '2023-02-29T00:00:00.000Z', '2100-02-29T12:00:00.000Z', '2000-02-29T12:00:00.000Z',
      '2026-13-01T00:00:00.000Z', '2026-00-10T00:00:00.000Z', '2026-04-31T00:00:00.000Z', '2026-04-30T24:00:00.000Z',
      '2026-04-30T23:60:00.000Z', '2026-04-30T23:59:60.000Z', '0099-01-01T00:00:00.000Z', '0100-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00+02:00', '2026-01-01T00:00:00Z', '2026-01-01 00:00:00.000Z',
      '2026-01-01T00:00:00.000z', '２026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.0000Z', '2026-01-01', ''];
    const pad = (value: number, width: number) => String(value).padStart(width, '0');
    for (let i = 0; i < 5_000; i++) {
      texts.push(`${pad(rng.int(0, 9999), 4)}-${pad(rng.int(0, 13), 2)}-${pad(rng.int(0, 32), 2)}T${pad(rng.int(0, 25), 2)}:${pad(rng.int(0, 61), 2)}:${pad(rng.int(0, 61), 2)}.${pad(rng.int(0, 999), 3)}Z`);
    }
    for (const text of texts) {
      const parsed = parseInstant(text);
      expect(isInstant(text), text).toBe(parsed !== null);
      if (parsed && text.includes('T')) expect(canonicalInstant(text), text).toBe(parsed.start.toISOString());
      // Independently of parseInstant: toISOString()'s form is valid when a Date gives it back (years from 100).
      if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(text)) {
        const date = new Date(text);
        const oracle = Number(text.slice(0, 4)) >= 100 && !Number.isNaN(date.getTime()) && date.toISOString() === text;
        expect(isInstant(text), text).toBe(oracle);
      }
    }
  });
});

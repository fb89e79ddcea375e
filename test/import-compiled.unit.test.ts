import { describe, expect, it } from 'vitest';
import { importers } from '../src/cli/import-batch.js';
import { assignableCategoryIds, demoCategories } from '../src/demo/categories.js';
import { makeCreator } from '../src/demo/creators.js';
import { makeLiveStream } from '../src/demo/live-streams.js';
import { makeChannel, makeVideo } from '../src/demo/videos.js';
import { channelRecord, creatorRecord, liveStreamRecord, videoRecord } from '../src/inputs/records.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';

// Imports validate with the record schemas compiled by zod (z.compile): the compiled parser must
// accept, produce and reject exactly what the schema does, with the same messages, on good lines
// and on lines broken one field at a time.

const rng = seededRandom('import-compiled');
const categoryIds = assignableCategoryIds(demoCategories());
const channels = Array.from({ length: 20 }, (_, i) => makeChannel(`t:channel:${i}`, `UCt${i}`));
const kinds = [
  { name: 'creators', schema: creatorRecord, record: (i: number) => makeCreator(`t:creator:${i}`, `9${i}`, i, categoryIds) },
  { name: 'channels', schema: channelRecord, record: (i: number) => channels[i % channels.length].record },
  { name: 'videos', schema: videoRecord, record: (i: number) => makeVideo(`t:video:${i}`, `tv${i}`, channels[i % channels.length], i) },
  { name: 'live-streams', schema: liveStreamRecord, record: (i: number) => makeLiveStream(`t:live:${i}`, `tl${i}`, `tu${i}`, i) },
] as const;

const badValues: unknown[] = [-1, 1.5, 2 ** 60, '', 'x'.repeat(3_000), 'a\u0000b', 'USA', '2026-13-01T00:00:00Z', '2026-05-01', null, true, [], {}, [0, -2], undefined];
const messages = { error: (issue: { code: string; input?: unknown }) => (issue.code === 'invalid_type' && issue.input === undefined ? 'required' : undefined) };

describe('compiled import schemas', () => {
  it.each(kinds)('$name: the same answer as the schema for good lines and lines with one bad field', ({ name, schema, record }) => {
    const compiled = importers[name].schema;
    let rejected = 0;
    for (let i = 0; i < 300; i++) {
      const value = JSON.parse(JSON.stringify(record(i))) as Record<string, unknown>;
      if (i % 3 !== 0) {
        const fields = Object.keys(value);
        const field = rng.int(0, 4) === 0 ? 'unexpected_field' : fields[rng.int(0, fields.length - 1)];
        value[field] = badValues[rng.int(0, badValues.length - 1)];
      }
      const expected = schema.safeParse(value, messages as never);
      const actual = compiled.safeParse(value, messages as never);
      expect(actual.success, JSON.stringify(value)).toBe(expected.success);
      if (expected.success) expect(actual.data).toEqual(expected.data);
      else {
        rejected++;
        expect(actual.error!.issues).toEqual(expected.error.issues);
      }
    }
    expect(rejected).toBeGreaterThan(50);
  });
});

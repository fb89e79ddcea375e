import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printSchemaSDL } from '../src/schema/index.js';

describe('schema.graphql', () => {
  it('matches the schema the code builds (run `npm run schema` after changing it)', () => {
    const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');
    expect(printSchemaSDL()).toBe(committed);
  });
});

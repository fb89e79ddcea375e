import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain script, without types
import { assemble } from '../scripts/range-kernel.mjs';

// The range index's SIMD passes run from bytes committed beside their source: they must be that
// source assembled (`npm run wasm`), or a change to the .wat would be tested and shipped unseen.
// What the passes compute is held by test/range-index.unit.test.ts.
describe('the range kernel', () => {
  it('is range-kernel.wat assembled', async () => {
    const committed = readFileSync(new URL('../src/search/primitives/range-kernel-wasm.ts', import.meta.url), 'utf8');
    expect(committed).toBe(await assemble());
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// docs/contract/ holds copies of the shared contract so that the repository stands on its own.
// The source of truth lives beside the checkout (../shared/contract, as in CI's fresh clone): a
// copy that drifts from it would document a contract we do not serve. A checkout without that
// folder beside it has nothing to compare with, so there the test is skipped, and says why.

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const sharedContract = resolve(repoRoot, '..', 'shared', 'contract');
const haveShared = existsSync(sharedContract);
const skipReason = `skipped: no ${sharedContract} beside this checkout to compare the copies with`;
if (!haveShared) console.log(`contract-copy.unit.test.ts: ${skipReason}`);

describe('docs/contract', () => {
  for (const name of ['service-contract.md', 'decisions.md']) {
    it.skipIf(!haveShared)(`docs/contract/${name} is byte-identical to ../shared/contract/${name}${haveShared ? '' : ` (${skipReason})`}`, () => {
      const copy = readFileSync(resolve(repoRoot, 'docs', 'contract', name));
      const source = readFileSync(resolve(sharedContract, name));
      const hint = `docs/contract/${name} differs from ${resolve(sharedContract, name)}: copy it again`;
      // The text first, for a readable diff; then the bytes (line endings, a BOM, invalid UTF-8).
      expect(copy.toString('utf8'), hint).toBe(source.toString('utf8'));
      expect(copy.equals(source), hint).toBe(true);
    });
  }
});

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// vitest globalSetup: the tests that run the `creator-data` bin run dist/, so dist/ is brought up
// to date with src/ first (incremental: a fraction of a second when nothing changed), whether the
// run came from `npm test` or `npx vitest`. A stale dist/ can never hide a change.

const root = fileURLToPath(new URL('../..', import.meta.url));

const listFiles = (dir: string) =>
  existsSync(join(root, dir)) ? readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }) : [];
const sources = (dir: string) => listFiles(dir).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));

/**
 * Whether dist/ holds exactly the compiled sources. `tsc -b` trusts its build info: it neither
 * rewrites an output deleted by hand nor removes the output of a deleted source (which npm pack
 * would then ship). Either calls for a clean build.
 */
function distMatchesSources(): boolean {
  const expected = new Set([
    ...sources('src').flatMap((file) => [file.replace(/\.ts$/, '.js'), file.replace(/\.ts$/, '.d.ts')]),
    ...sources('migrations').map((file) => join('migrations', file.replace(/\.ts$/, '.js'))),
  ]);
  const built = listFiles('dist').filter((file) => file.endsWith('.js') || file.endsWith('.d.ts'));
  return built.length === expected.size && built.every((file) => expected.has(file));
}

export default function buildDist(): void {
  const started = performance.now();
  if (!distMatchesSources()) rmSync(join(root, 'dist'), { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-b', 'tsconfig.build.json', 'tsconfig.migrations.json'], { cwd: root, stdio: 'inherit' });
  process.stderr.write(`dist/ up to date (${Math.round(performance.now() - started)} ms)\n`);
}

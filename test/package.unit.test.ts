import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';

// The package as a user gets it: what `npm pack` holds, what the bin costs to start, and what
// the client pulls in when imported. dist/ is fresh: test/support/build-dist.ts rebuilt it.

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin/creator-data.js');
const recorder = join(root, 'test/support/import-recorder.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'cds-package-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const sourceFiles = (dir: string) =>
  readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));

describe('npm pack', () => {
  it('holds the compiled package, the bin, the migrations, the docs and the schemas, and nothing else', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
    const files: string[] = JSON.parse(stdout)[0].files.map((file: { path: string }) => file.path);
    const expected = [
      'README.md',
      'package.json',
      'bin/creator-data.js',
      'openapi.json',
      'schema.graphql',
      ...sourceFiles('src').flatMap((file) => [`dist/${file.replace(/\.ts$/, '.js')}`, `dist/${file.replace(/\.ts$/, '.d.ts')}`]),
      // Read at run time by dist/store/migrate.js; JavaScript only.
      ...sourceFiles('migrations').map((file) => `dist/migrations/${file.replace(/\.ts$/, '.js')}`),
    ];
    expect(files.sort()).toEqual(expected.sort());
  });
});

describe('the creator-data bin', () => {
  it('answers --help in under 300 ms (median of 7 runs), without loading the server', () => {
    const medianMs = (args: string[]) => {
      const times: number[] = [];
      for (let run = 0; run < 7; run++) {
        const started = performance.now();
        const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
        times.push(performance.now() - started);
        expect(result.status).toBe(0);
      }
      return times.sort((a, b) => a - b)[3];
    };
    expect(spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' }).stdout).toContain('usage: creator-data <command>');
    // Other test files share the two cores: a round measured while they peak is measured again.
    const rounds: { help: number; bareNode: number }[] = [];
    for (let round = 0; round < 3 && !rounds.some((r) => r.help < 300); round++) {
      rounds.push({ help: medianMs([bin, '--help']), bareNode: medianMs(['-e', '0']) });
    }
    console.log(`creator-data --help, median ms per round: ${rounds.map((r) => `${r.help.toFixed(0)} (bare node ${r.bareNode.toFixed(0)})`).join(', ')}`);
    // Under 300 ms, or, on a machine so loaded that bare node starts slowly too, what the bin adds
    // to node's own start under 200 ms (a CI run beside a 10M-row seed: 348–477 ms, bare node 327–432).
    const best = rounds.reduce((a, b) => (b.help - b.bareNode < a.help - a.bareNode ? b : a));
    expect(Math.min(...rounds.map((r) => r.help)) < 300 || best.help - best.bareNode < 200, JSON.stringify(rounds)).toBe(true);
  });

  it('loads no more than its command table and config for --help', () => {
    const log = join(scratch, 'help-imports.log');
    const result = spawnSync(process.execPath, ['--import', recorder, bin, '--help'], { env: { ...process.env, IMPORT_LOG: log }, encoding: 'utf8' });
    expect(result.status).toBe(0);
    const dist = new URL('../dist/', import.meta.url).href;
    const loaded = readFileSync(log, 'utf8').trim().split('\n').filter((url) => url !== new URL('../bin/creator-data.js', import.meta.url).href);
    expect(loaded.filter((url) => !url.startsWith('node:')).sort()).toEqual([`${dist}cli/import-kinds.js`, `${dist}cli/main.js`, `${dist}cli/usage.js`, `${dist}config.js`]);
  });

  it('prints the committed OpenAPI document (`creator-data openapi`)', async () => {
    const result = await runCli(['openapi'], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(readFileSync(join(root, 'openapi.json'), 'utf8'));
  });
});

/** Every module URL a fresh node loads for `source` (an ES module body run in the package root). */
function modulesLoadedBy(source: string): string[] {
  const log = join(scratch, `imports-${Math.random().toString(36).slice(2)}.log`);
  const result = spawnSync(process.execPath, ['--import', recorder, '--input-type=module', '-e', source], {
    cwd: root,
    env: { ...process.env, IMPORT_LOG: log },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  return readFileSync(log, 'utf8').trim().split('\n');
}

describe("the client's package export", () => {
  it("loads only the client's own modules: no server code, no driver, no dependency at all", () => {
    const loaded = modulesLoadedBy("const { CreatorDataClient } = await import('creator-data-service/client'); new CreatorDataClient({ baseUrl: 'http://x', apiKey: 'k' });");
    const clientDir = new URL('../dist/client/', import.meta.url).href;
    expect(loaded).toContain(`${clientDir}index.js`);
    expect(loaded.filter((url) => !url.startsWith(clientDir))).toEqual([]);
  });

  it('the recorder does see what a server module pulls in (the check above can fail)', () => {
    const loaded = modulesLoadedBy("await import('./dist/rest/routes.js');");
    expect(loaded.some((url) => url.includes('/node_modules/zod/'))).toBe(true);
    expect(loaded.some((url) => url.includes('/node_modules/graphql/'))).toBe(true);
  });

  it('exports the client and nothing internal', () => {
    const attempt = (specifier: string) =>
      spawnSync(process.execPath, ['--input-type=module', '-e', `await import(${JSON.stringify(specifier)})`], { cwd: root, encoding: 'utf8' });
    expect(attempt('creator-data-service/client').status).toBe(0);
    for (const internal of ['creator-data-service', 'creator-data-service/dist/app.js', 'creator-data-service/dist/rest/openapi.js']) {
      const result = attempt(internal);
      expect(result.status, internal).not.toBe(0);
      expect(result.stderr, internal).toMatch(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
    }
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The layering of src/ (docs/architecture.md), lowest first: a module may import only from layers
// below its own. `config.ts`, `observability/log.ts` and the warning throttle it uses are leaves every layer may use; metrics
// watch the layers below them; `services.ts` is the type of what a request may use, built by
// app.ts and read by the layers that serve requests.

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');

const layers: [rank: number, parts: string[]][] = [
  [0, ['domain', 'config.ts', 'observability/throttled-warning.ts']],
  [1, ['observability/log.ts']],
  [2, ['inputs']],
  [3, ['store']],
  [4, ['search', 'upstreams', 'access']],
  [5, ['observability']],
  [6, ['services.ts']],
  [7, ['schema']],
  [8, ['rest']],
  [9, ['http']],
  [10, ['app.ts', 'collector', 'demo', 'client']],
  [11, ['cli']],
];

/** The most specific part a file belongs to: `observability/log.ts` before `observability`. */
function partOf(file: string): string {
  const path = relative(SRC, file);
  const candidates = layers.flatMap(([, parts]) => parts).filter((part) => path === part || path.startsWith(`${part}/`));
  return candidates.sort((a, b) => b.length - a.length)[0] ?? path;
}

const rankOf = (part: string) => layers.find(([, parts]) => parts.includes(part))?.[0];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Each source file's relative imports (type-only ones too: they couple the code just the same). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:import|export)[^'";]*?from\s+'(\.[^']+)'/g)].map((m) => resolve(dirname(file), m[1]).replace(/\.js$/, '.ts'));
    graph.set(file, targets);
  }
  return graph;
}

describe('the layering of src/', () => {
  const graph = importGraph();

  it('places every source file in a layer', () => {
    const unplaced = [...graph.keys()].map((file) => relative(SRC, file)).filter((path) => rankOf(partOf(join(SRC, path))) === undefined);
    expect(unplaced).toEqual([]);
  });

  it('imports only from lower layers (or within the same part)', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      const from = partOf(file);
      for (const target of targets) {
        const to = partOf(target);
        if (to === from) continue;
        if (rankOf(to)! >= rankOf(from)!) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('has no circle of imports between files', () => {
    const circles: string[][] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      stack.push(file);
      for (const target of graph.get(file) ?? []) {
        if (!graph.has(target)) continue;
        if (state.get(target) === 'open') circles.push(stack.slice(stack.indexOf(target)).map((f) => relative(SRC, f)));
        else if (!state.has(target)) visit(target);
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });

  it('would see an upward import (the check above can fail)', () => {
    expect(rankOf(partOf(join(SRC, 'store', 'creators.ts')))!).toBeLessThan(rankOf(partOf(join(SRC, 'search', 'types.ts')))!);
    expect(partOf(join(SRC, 'observability', 'log.ts'))).toBe('observability/log.ts');
    expect(partOf(join(SRC, 'observability', 'metrics.ts'))).toBe('observability');
  });
});

// `*.unit.test.ts` files run once in CI (.ci/run, docs/testing.md): what they test must not depend
// on the store or Redis a run is given. So none may read those settings or take a store, an app or
// a server from the helpers that follow them.
const TESTS = resolve(SRC, '..', 'test');
const STORE_HELPERS = /\b(createTestStore|createTestApp|cliStore|startDemoServer|browserTests)\b|process\.env\.(TEST_DATABASE_URL|REDIS_URL|DATABASE_URL)\b/;

function unitTestFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'support' || entry.name === 'fixtures' ? [] : unitTestFiles(path);
    return entry.name.endsWith('.unit.test.ts') ? [path] : [];
  });
}

describe('unit test files', () => {
  it('use no store, app or server that follows the run’s database or Redis', () => {
    // This file names them, to look for them.
    const files = unitTestFiles(TESTS).filter((file) => file !== fileURLToPath(import.meta.url));
    expect(files.length).toBeGreaterThan(20);
    const offenders = files.filter((file) => STORE_HELPERS.test(readFileSync(file, 'utf8'))).map((file) => relative(TESTS, file));
    expect(offenders).toEqual([]);
  });

  it('would see one that does (the check above can fail)', () => {
    expect(STORE_HELPERS.test(readFileSync(join(TESTS, 'start-database-errors.test.ts'), 'utf8'))).toBe(true);
    expect(STORE_HELPERS.test(readFileSync(join(TESTS, 'facets.test.ts'), 'utf8'))).toBe(true);
  });
});

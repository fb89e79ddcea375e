import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { Kysely } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import type { Database } from '../../src/store/database.js';
import { migrateToLatest } from '../../src/store/migrate.js';

// vitest globalSetup, embedded runs only: PGlite's initdb costs ~3.4 s per new database and the
// migrations a little more, for each of the ~30 test stores a run opens. One migrated database is
// made here and dumped; every test store starts from the dump (~1.1 s). The migrations still run
// on each test store (a no-op when the dump is current), so a stale dump cannot hide one.

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string | null;
  }
}

export default async function pgliteTemplate(project: TestProject): Promise<() => void> {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('pgliteTemplate', null);
    return () => {};
  }
  const pglite = await PGlite.create('memory://', { extensions: { pg_trgm } });
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  await migrateToLatest(db);
  const dump = await pglite.dumpDataDir('none');
  await db.destroy();
  const dir = mkdtempSync(join(tmpdir(), 'cds-pglite-template-'));
  const file = join(dir, 'migrated.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
  return () => rmSync(dir, { recursive: true, force: true });
}

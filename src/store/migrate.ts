import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

// From the sources (tsx, vitest) the migrations are migrations/*.ts; from the built package,
// dist/migrations/*.js beside dist/store/.
const fromSources = import.meta.url.endsWith('.ts');
const migrationFolder = fileURLToPath(new URL(fromSources ? '../../migrations' : '../migrations', import.meta.url));
const extension = fromSources ? '.ts' : '.js';

// Kysely's FileMigrationProvider imports from inside node_modules, where neither tsx nor vitest
// compiles TypeScript; importing from this module lets either load the `.ts` migrations.
const folderProvider: MigrationProvider = {
  async getMigrations() {
    const files = (await readdir(migrationFolder)).filter((f) => /^\d/.test(f) && f.endsWith(extension) && !f.endsWith('.d.ts')).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      migrations[file.slice(0, -extension.length)] = (await import(pathToFileURL(join(migrationFolder, file)).href)) as Migration;
    }
    return migrations;
  },
};

/** What a build says when it runs on a database a newer build migrated (the service's log, the CLI's stderr). */
export const NEWER_SCHEMA_WARNING = 'the database was migrated by a newer build: running on it without migrating';

/**
 * Applies this build's migrations the database has not run; returns their names. A database
 * migrated by a newer build (migrations this build does not know, every one it knows run) is left
 * as it is and `onNewer` told their names: migrations only add, or drop what no earlier build
 * needs (docs/operations.md, "Rolling back a deploy"), so the build before a deploy runs on the
 * newer schema, as Flyway's ignored future migrations do. One that lacks migrations this build
 * knows besides is of another line of builds: refused, nothing run.
 */
export async function migrateToLatest(db: Kysely<any>, onNewer: (names: string[]) => void = () => {}): Promise<string[]> {
  const migrations = await folderProvider.getMigrations();
  const known = Object.keys(migrations);
  const run = await migrationsRun(db);
  const newer = run.filter((name) => !Object.hasOwn(migrations, name));
  if (newer.length > 0) {
    const missing = known.filter((name) => !run.includes(name));
    if (missing.length > 0) {
      throw new Error(
        `the database was migrated by another line of builds: it has run ${newer.join(', ')}, which this build does not know, and not ${missing.join(', ')}, which it does`,
      );
    }
    onNewer(newer);
    return [];
  }
  const provider: MigrationProvider = { getMigrations: async () => migrations };
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The names of the migrations the database has run (none before its first). */
async function migrationsRun(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ present: boolean }>`SELECT to_regclass('kysely_migration') IS NOT NULL AS present`.execute(db);
  if (!rows[0].present) return [];
  return (await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(db)).rows.map((row) => row.name);
}

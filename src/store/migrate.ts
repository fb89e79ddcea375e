import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';

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

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results } = await new Migrator({ db, provider: folderProvider }).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

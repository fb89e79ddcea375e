import type { Config } from '../config.js';
import { openStore, type Store } from '../store/connect.js';
import { migrateToLatest, NEWER_SCHEMA_WARNING } from '../store/migrate.js';

/**
 * Opens the configured store, migrated, for one command, and closes it afterwards; `work` learns
 * which migrations this opening applied (the `migrate` command prints them).
 */
export async function withStore<T>(config: Config, work: (store: Store, applied: string[]) => Promise<T>): Promise<T> {
  const store = await openStore({ databaseUrl: config.databaseUrl, transactionPooler: config.transactionPooler, dataDir: config.dataDir });
  try {
    const applied = await migrateToLatest(store.db, (names) => process.stderr.write(`creator-data: ${NEWER_SCHEMA_WARNING} (${names.join(', ')})\n`));
    return await work(store, applied);
  } finally {
    await store.close();
  }
}

import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { sql } from 'kysely';
import { CreatorIndex } from '../../src/search/tables/creators.js';
import { VideoIndex } from '../../src/search/tables/videos.js';
import { writeSnapshot } from '../../src/search/runtime/snapshots.js';
import { openStore } from '../../src/store/connect.js';
import { migrateToLatest } from '../../src/store/migrate.js';

// Writes a search-index snapshot from a worker thread, as the index thread does, and reports
// what the write threw and the process warnings it raised. Only a worker thread sees a second
// close of a descriptor: Node tracks the ones it opened and warns of any other it closes.

interface Job {
  path: string;
  databaseUrl?: string;
  pgliteTemplate?: string | null;
}

const job = workerData as Job;
const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(warning.message));

const store = await openStore(
  job.databaseUrl
    ? { databaseUrl: job.databaseUrl }
    : { dataDir: 'memory://', startFrom: job.pgliteTemplate ? new Blob([readFileSync(job.pgliteTemplate)]) : undefined },
);
let error: string | null = null;
try {
  await migrateToLatest(store.db);
  // One change in the feed, so the snapshot has a position to be written at.
  await sql`INSERT INTO channels (channel_id) VALUES (${`snapshot-thread-${process.pid}-${Date.now()}`})`.execute(store.db);
  const { rows } = await sql<{ lastId: string }>`SELECT max(id)::text AS "lastId" FROM catalog_changes`.execute(store.db);
  await writeSnapshot(store.db, job.path, { lastId: rows[0].lastId, running: [] }, new CreatorIndex(), new VideoIndex());
} catch (thrown) {
  error = (thrown as NodeJS.ErrnoException).code ?? String(thrown);
} finally {
  await store.close();
}
// Warnings are emitted on the next tick.
await new Promise((resolve) => setImmediate(resolve));
parentPort!.postMessage({ error, warnings });

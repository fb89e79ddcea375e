import type { Kysely } from 'kysely';
import type { CategoryRecord, ChannelRecord, CreatorRecord, LiveStreamRecord, VideoRecord } from '../inputs/records.js';
import { writeRows } from './bulk.js';
import type { Database } from './database.js';
import {
  categoryKind,
  channelKind,
  creatorKind,
  liveStreamKind,
  resolveRows,
  videoKind,
  type RecordKind,
  type Rejection,
} from './imports.js';

// Import records upserted with statements (the demo data set, small writes): none of these opens a
// transaction, so callers may pass one. Bulk imports go through src/cli/import.ts.

/** Records per batch: how many the up-front checks look up at once. */
const UPSERT_BATCH_SIZE = 5_000;

/** Upserts records with statements through `db` (which may be a transaction), in batches. */
async function upsertRecords<T>(db: Kysely<Database>, kind: RecordKind<T>, records: readonly T[]): Promise<Rejection[]> {
  const rejections: Rejection[] = [];
  for (let offset = 0; offset < records.length; offset += UPSERT_BATCH_SIZE) {
    const batch = await resolveRows(db, kind as RecordKind<never>, records.slice(offset, offset + UPSERT_BATCH_SIZE).map(kind.toRow));
    for (const rejection of batch.rejections) rejections.push({ ...rejection, index: offset + rejection.index });
    await writeRows(db, kind.table, 'update-changed', batch.rows);
  }
  return rejections;
}

export const upsertCreators = (db: Kysely<Database>, records: readonly CreatorRecord[]) => upsertRecords(db, creatorKind, records);
export const upsertChannels = (db: Kysely<Database>, records: readonly ChannelRecord[]) => upsertRecords(db, channelKind, records);
export const upsertLiveStreams = (db: Kysely<Database>, records: readonly LiveStreamRecord[]) => upsertRecords(db, liveStreamKind, records);
export const upsertVideos = (db: Kysely<Database>, records: readonly VideoRecord[]) => upsertRecords(db, videoKind, records);
export const upsertCategories = (db: Kysely<Database>, records: readonly CategoryRecord[]) => upsertRecords(db, categoryKind, records);

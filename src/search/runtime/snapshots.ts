import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { changeFingerprint, type ChangeFingerprint, databaseName, type FeedPosition } from '../../store/changes.js';
import { processIsAlive } from '../../store/connect.js';
import type { Database } from '../../store/database.js';
import { SnapshotReader, SnapshotRejected, SnapshotWriter } from '../primitives/snapshot-io.js';
import { CreatorIndex } from '../tables/creators.js';
import { VideoIndex } from '../tables/videos.js';
import { type Partition, WHOLE } from './partition.js';

// The index on disk, so that a restarted process is ready in seconds instead of rebuilding from
// PostgreSQL (docs/operations.md, "Search index snapshots"). A snapshot holds the creator and
// video indexes as they were at one position of the change feed; a start loads it and catches up
// from the feed. The live-stream index, a few thousand rows, is read from the database each time.
//
// A snapshot is used only when all of these hold, else the index is rebuilt from the database:
// - the file is whole: magic, this format's version, every record of the kind expected, the
//   CRC-32 of every byte and the length in its trailer;
// - the database still holds the change at the snapshot's position, the same one: its id, time,
//   table and key. A feed pruned past the snapshot no longer has it; another database (a second
//   one pointed at the same folder, a copy that went its own way) has none or another one.

/** Bumped whenever any structure's save/load changes: an older file is rebuilt, never misread. */
// 2: range indexes bit-sliced; 3: a value held by few rows kept as a list of slots; 4: no hash per
// row-table slot, a creator's platform as a byte; 5: numeric columns in Int16, ids of one length
// without offsets, text entries in 2 bytes; 6: row tables place keys by multiply-shift, not by a
// power-of-two mask (a table of format 5 read as 6 would miss its keys); 7: sort orders without
// their keys (read from the columns); 8: row ids packed by alphabet, instants and
// whole numbers past an Int32 in 5 bytes, no channel country strings (issue 22); 9: range
// index slices in blocks of four words (the SIMD kernel's layout); 10: text groups' distances
// in a width per group, not LEB128 varints; 11: text groups' starts in 32 bits, not a Float64;
// 12: each video's channel gender; 13: creators' range codes in 8 bits (an older snapshot would
// keep its coarser buckets until a build from PostgreSQL).
export const SNAPSHOT_FORMAT = 13;

export interface SnapshotSettings {
  /** The folder of the snapshot files, one per database name. */
  dir: string;
  /** How often a snapshot is written while serving (0: only after a full load and at shutdown). */
  everyMs: number;
}

const digits = z.string().regex(/^[0-9]+$/);
/** The snapshot's first record: read from a file that may be anything, so checked like any input. */
const snapshotMeta = z.object({
  /** Files written before the feed recorded what it pruned also hold a `horizon`, no longer read. */
  position: z.object({ lastId: digits, running: z.array(digits) }),
  /** The change at `position.lastId`, as the database held it. */
  fingerprint: z.object({ changedAt: z.string(), entity: z.string(), platform: z.string().nullable(), key: z.string().nullable() }),
  writtenAt: z.string(),
  /** The partition it holds (./partition.ts); absent: the whole index. */
  partition: z.object({ index: z.number().int(), count: z.number().int() }).optional(),
});
type SnapshotMeta = z.infer<typeof snapshotMeta>;

export interface LoadedSnapshot {
  position: FeedPosition;
  creators: CreatorIndex;
  videos: VideoIndex;
  bytes: number;
}

/**
 * The snapshot file of the database `db` reads (named after it: databases of one server do not
 * share a file), and of the partition: each partition's thread writes its own.
 */
export async function snapshotPath(db: Kysely<Database>, dir: string, partition: Partition = WHOLE): Promise<string> {
  const name = (await databaseName(db)).replace(/[^A-Za-z0-9_.-]/g, '_');
  const part = partition.count === 1 ? '' : `.part${partition.index + 1}of${partition.count}`;
  return join(dir, `search-index.${name}${part}.snapshot`);
}

/**
 * Writes the indexes at `position` to `path`: a new file beside it, flushed to disk, then renamed
 * over the old one, so a crash leaves the previous snapshot whole. Returns the bytes written, or
 * null when the position cannot be verified later (an empty feed, or its change already gone).
 */
export async function writeSnapshot(
  db: Kysely<Database>,
  path: string,
  position: FeedPosition,
  creators: CreatorIndex,
  videos: VideoIndex,
  partition: Partition = WHOLE,
): Promise<number | null> {
  const fingerprint = position.lastId === '0' ? null : await changeFingerprint(db, position.lastId);
  if (!fingerprint) return null;
  const meta: SnapshotMeta = {
    position,
    fingerprint,
    writtenAt: new Date().toISOString(),
    ...(partition.count === 1 ? {} : { partition: { index: partition.index, count: partition.count } }),
  };
  mkdirSync(join(path, '..'), { recursive: true });
  const temporary = `${path}.${process.pid}-${threadId}.partial`;
  try {
    const fd = openSync(temporary, 'w');
    let bytes: number;
    // Closed exactly once, before the rename: a second close of the same number could close
    // whatever the process (another thread's socket) opened under it since.
    try {
      const out = new SnapshotWriter(fd, SNAPSHOT_FORMAT);
      out.value(meta);
      creators.save(out);
      videos.save(out);
      bytes = out.finish();
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
    return bytes;
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** A write's temporary file, as writeSnapshot names it: `<snapshot>.<pid>-<thread id>.partial`. */
const PARTIAL_FILE = /^search-index\..+\.snapshot\.(\d+)-\d+\.partial$/;
/** Untouched this long, a temporary file is no one's: a live writer writes to it every few seconds at most. */
const STALE_PARTIAL_MS = 60 * 60_000;

/**
 * Removes from `dir` the temporary files of writes that never finished: a writer killed mid-write
 * (SIGKILL, OOM, power loss) leaves one as large as a snapshot, and nothing else ever removes it.
 * Called once as a process starts, before its index threads write. A file is stale when no process
 * of its pid runs on this machine (its writer died), or when it has not been written to for an
 * hour (its pid now belongs to another process, or its writer ran on another machine sharing the
 * folder). The pid alone would keep a dead writer's file whose pid was reused; the age alone would
 * keep a crash's file until an hour after it. Taking a live writer of another machine for dead (its
 * pid free here) costs it that one write: its rename fails, it warns, and its next write succeeds.
 * Returns the names removed.
 */
export function removeStalePartials(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // No folder yet: nothing was ever written.
  }
  const removed: string[] = [];
  for (const name of names) {
    const writer = PARTIAL_FILE.exec(name);
    if (!writer) continue;
    const path = join(dir, name);
    try {
      const { mtimeMs } = statSync(path);
      if (processIsAlive(Number(writer[1])) && Date.now() - mtimeMs < STALE_PARTIAL_MS) continue;
      rmSync(path, { force: true });
      removed.push(name);
    } catch {
      // Gone already (its writer renamed it, another process removed it), or not ours to remove.
    }
  }
  return removed;
}

/**
 * The indexes of the snapshot at `path`, checked whole and against the database; null when there
 * is none. Throws SnapshotRejected, with the reason, for a file that must not be used.
 */
export async function readSnapshot(db: Kysely<Database>, path: string, partition: Partition = WHOLE): Promise<LoadedSnapshot | null> {
  if (!existsSync(path)) return null;
  let reader: SnapshotReader;
  try {
    reader = SnapshotReader.open(path);
  } catch (error) {
    if (error instanceof SnapshotRejected) throw error;
    throw new SnapshotRejected(`unreadable: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    if (reader.version !== SNAPSHOT_FORMAT) throw new SnapshotRejected(`format ${reader.version}, not ${SNAPSHOT_FORMAT}`);
    const parsed = snapshotMeta.safeParse(reader.value<unknown>());
    if (!parsed.success) throw new SnapshotRejected('no position in the change feed');
    const meta = parsed.data;
    const held = meta.partition ?? { index: 0, count: 1 };
    if (held.index !== partition.index || held.count !== partition.count) {
      throw new SnapshotRejected(`it holds partition ${held.index + 1} of ${held.count}, not ${partition.index + 1} of ${partition.count}`);
    }
    // Checked before the bulk is read: a foreign or outdated snapshot costs one query, not a load.
    const current = await changeFingerprint(db, meta.position.lastId);
    if (!current) throw new SnapshotRejected('the change feed no longer holds its position (pruned past it, or another database)');
    if (!sameChange(current, meta.fingerprint)) throw new SnapshotRejected('the change at its position differs (another database)');
    const creators = new CreatorIndex();
    creators.load(reader);
    const videos = new VideoIndex();
    videos.load(reader);
    reader.finish();
    return { position: meta.position, creators, videos, bytes: reader.size };
  } catch (error) {
    if (error instanceof SnapshotRejected) throw error;
    // A structure that could not take what it read (an array too short for its table...).
    throw new SnapshotRejected(`inconsistent: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    reader.close();
  }
}

const sameChange = (a: ChangeFingerprint, b: ChangeFingerprint) =>
  a.changedAt === b.changedAt && a.entity === b.entity && a.platform === b.platform && a.key === b.key;

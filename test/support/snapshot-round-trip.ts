import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Snapshotted } from '../../src/search/primitives/snapshot-io.js';
import { SnapshotReader, SnapshotWriter } from '../../src/search/primitives/snapshot-io.js';

/**
 * Saves `from` into a snapshot file of its own and loads it into `into` (a fresh structure made
 * as `from` was), checking the whole file; returns `into`.
 */
export function roundTrip<T extends Snapshotted>(from: Snapshotted, into: T): T {
  const folder = mkdtempSync(join(tmpdir(), 'cds-round-trip-'));
  try {
    const path = join(folder, 'snapshot');
    const fd = openSync(path, 'w');
    try {
      const out = new SnapshotWriter(fd, 1);
      from.save(out);
      out.finish();
    } finally {
      closeSync(fd);
    }
    const reader = SnapshotReader.open(path);
    try {
      into.load(reader);
      reader.finish();
    } finally {
      reader.close();
    }
    return into;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SnapshotReader, SnapshotWriter } from '../src/search/primitives/snapshot-io.js';

// Node 20's crc32 answers 0 for a view of an empty ArrayBuffer: an empty record (a value with no
// row left, an empty table) once reset the reader's running checksum and got a good file refused.

const folder = mkdtempSync(join(tmpdir(), 'cds-snapshot-io-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('snapshot records', () => {
  it('reads back empty arrays, and the checksum still holds', () => {
    const path = join(folder, 'empty');
    const fd = openSync(path, 'w');
    const out = new SnapshotWriter(fd, 7);
    out.array(new Int32Array([1, 2, 3]));
    out.array(new Int32Array(0));
    out.array(new Uint32Array([9, 8]), 0);
    out.value({ after: true });
    out.finish();
    closeSync(fd);
    const reader = SnapshotReader.open(path);
    expect([...reader.array(Int32Array)]).toEqual([1, 2, 3]);
    expect(reader.array(Int32Array).length).toBe(0);
    expect(reader.array(Uint32Array).length).toBe(0);
    expect(reader.value()).toEqual({ after: true });
    expect(() => reader.finish()).not.toThrow();
    reader.close();
  });
});

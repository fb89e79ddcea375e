import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { IdStore } from '../src/search/primitives/id-store.js';
import { SnapshotReader, SnapshotRejected, SnapshotWriter } from '../src/search/primitives/snapshot-io.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { roundTrip } from './support/snapshot-round-trip.js';

// Packed ids must behave exactly as their UTF-8 bytes: the same text back, the same equality for
// any probe, the same bytewise order (COLLATE "C"), through every change of form and a snapshot.

const DIGITS = '0123456789';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const bytewise = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));

function check(store: IdStore, ids: readonly string[], rng: ReturnType<typeof seededRandom>, probes: () => string): void {
  expect(store.size).toBe(ids.length);
  for (let n = 0; n < 2_000; n++) {
    const a = rng.int(0, ids.length - 1);
    const b = rng.int(0, ids.length - 1);
    const probe = rng.chance(0.3) ? ids[b] : probes();
    expect(store.get(a)).toBe(ids[a]);
    expect(Math.sign(store.compare(a, b))).toBe(bytewise(ids[a], ids[b]));
    expect(Math.sign(store.compareText(a, probe))).toBe(bytewise(ids[a], probe));
    expect(store.equals(a, probe)).toBe(ids[a] === probe);
    // A creator's key is its platform, a NUL, and its id: compared from the id on.
    expect(store.equals(a, `twitter\u0000${probe}`, 8)).toBe(ids[a] === probe);
  }
}

describe('the packed id store', () => {
  const rng = seededRandom('id-store');
  const random = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[rng.int(0, alphabet.length - 1)]).join('');

  it('keeps 13-digit ids in 7 bytes and 11-character base64url ids in 9, as their bytes would behave', () => {
    for (const [alphabet, width, packing] of [
      [DIGITS, 13, 'digits'],
      [DIGITS, 1, 'digits'],
      [BASE64URL, 11, 'base64url'],
      [BASE64URL, 24, 'base64url'],
    ] as const) {
      const ids = Array.from({ length: 500 }, () => random(alphabet, width));
      const store = new IdStore();
      for (const id of ids) store.push(id);
      expect(store.packing).toBe(packing);
      // Probes of the same length and alphabet, another alphabet, another length, and past ASCII.
      const probes = () => rng.pick([random(alphabet, width), random(BASE64URL, width), random(alphabet, width + 1), random(alphabet, width - 1), `${random(alphabet, width - 1)}é`, '']);
      check(store, ids, rng, probes);
      store.trim();
      const back = roundTrip(store, new IdStore());
      expect(back.packing).toBe(packing);
      check(back, ids, rng, probes);
      ids.push(random(alphabet, width));
      back.push(ids.at(-1)!);
      check(back, ids, rng, probes);
    }
  });

  it('moves from digits to base64url, and to plain bytes for another length or character, keeping every id', () => {
    for (const [other, packing] of [
      ['ABCDEFGHIJKLM', 'base64url'],
      ['12345', 'plain'],
      ['1234567890123x', 'plain'],
      ['123456789012é', 'plain'],
      ['12345678 0123', 'plain'],
    ] as const) {
      const ids = Array.from({ length: 300 }, () => random(DIGITS, 13));
      const at = rng.int(0, ids.length);
      ids.splice(at, 0, other);
      const store = new IdStore();
      for (const id of ids) store.push(id);
      expect(store.packing).toBe(packing);
      check(store, ids, rng, () => rng.pick([random(DIGITS, 13), other, random(BASE64URL, 13)]));
      const back = roundTrip(store, new IdStore());
      expect(back.packing).toBe(packing);
      check(back, ids, rng, () => random(DIGITS, 13));
    }
    const empty = new IdStore();
    empty.push('');
    expect([empty.packing, empty.get(0), empty.equals(0, '')]).toEqual(['plain', '', true]);
    expect(roundTrip(new IdStore(), new IdStore()).size).toBe(0);
  });

  it('rejects a snapshot whose digits say 10 to 15', () => {
    const folder = mkdtempSync(join(tmpdir(), 'cds-id-store-'));
    try {
      const path = join(folder, 'snapshot');
      const store = new IdStore();
      for (let i = 0; i < 10; i++) store.push(String(1_500_000_000_000 + i));
      const fd = openSync(path, 'w');
      const out = new SnapshotWriter(fd, 1);
      store.save(out);
      out.finish();
      closeSync(fd);
      const read = () => {
        const reader = SnapshotReader.open(path);
        try {
          new IdStore().load(reader);
        } finally {
          reader.close();
        }
      };
      expect(read).not.toThrow();
      // The digits' first byte ('1', '5' → 0x15) made 0x1f, and the file's checksum made good again.
      const bytes = readFileSync(path);
      const at = bytes.indexOf(Buffer.from([0x15, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]));
      bytes[at] = 0x1f;
      writeFileSync(path, rewriteChecksum(bytes));
      expect(read).toThrow(SnapshotRejected);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

/** The file with its trailer's CRC-32 computed again over the bytes before it. */
function rewriteChecksum(file: Buffer): Buffer {
  // Trailer: 'CDSEND\0\0', the CRC-32 (4 bytes), the length (a double).
  const crcAt = file.length - 12;
  file.writeUInt32LE(crc32(file.subarray(0, file.length - 20)) >>> 0, crcAt);
  return file;
}

import { grownLength } from './bitset.js';
import { SnapshotRejected, type SnapshotReader, type SnapshotWriter } from './snapshot-io.js';

// Append-only strings (row ids, the texts of a text index) as UTF-8 bytes in one buffer outside
// the V8 heap. Millions of small JS strings cost ~40 bytes each in old space and lengthen every
// major GC; here a string costs its bytes plus a 4-byte offset. Comparisons are bytewise, which is
// how PostgreSQL's COLLATE "C" orders ids, and substring tests on UTF-8 bytes mean the same as on
// the text (UTF-8 is self-synchronising).

const encoder = new TextEncoder();

/** Bytewise UTF-8 order of two strings without encoding them (UTF-16 order differs only past U+D7FF). */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+10000 and up in UTF-8) sort after U+E000–U+FFFF, not before.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

export class StringStore {
  #bytes: Buffer = Buffer.allocUnsafeSlow(1 << 16);
  /** String i is #bytes[#start[i] … #start[i + 1]). */
  #start = new Uint32Array(1025);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Appends `text`; returns its index. */
  push(text: string): number {
    const at = this.#start[this.#size];
    // A UTF-16 unit takes at most 3 bytes in UTF-8.
    this.#reserve(at + text.length * 3);
    const { written } = encoder.encodeInto(text, this.#bytes.subarray(at));
    const index = this.#size++;
    if (this.#size + 1 > this.#start.length) {
      const grown = new Uint32Array(grownLength(this.#start.length, this.#size + 1));
      grown.set(this.#start);
      this.#start = grown;
    }
    this.#start[this.#size] = at + written;
    return index;
  }

  get(index: number): string {
    return this.#bytes.toString('utf8', this.#start[index], this.#start[index + 1]);
  }

  /** Whether string `index` equals `text` from its character `from` on. */
  equals(index: number, text: string, from = 0): boolean {
    const bytes = this.#bytes;
    let at = this.#start[index];
    const end = this.#start[index + 1];
    if (end - at < text.length - from) return false;
    for (let i = from; i < text.length; i++, at++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) return this.#compareBytes(index, this.#start[index], encoder.encode(text.slice(from))) === 0;
      if (at >= end || bytes[at] !== code) return false;
    }
    return at === end;
  }

  /** Bytewise order of strings `a` and `b` of this store. */
  compare(a: number, b: number): number {
    return this.#bytes.compare(this.#bytes, this.#start[b], this.#start[b + 1], this.#start[a], this.#start[a + 1]);
  }

  /** Bytewise order of string `index` against `text`. */
  compareText(index: number, text: string): number {
    const bytes = this.#bytes;
    let at = this.#start[index];
    const end = this.#start[index + 1];
    for (let i = 0; i < text.length; i++, at++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) return this.#compareBytes(index, this.#start[index], encoder.encode(text));
      if (at >= end) return -1;
      if (bytes[at] !== code) return bytes[at] < code ? -1 : 1;
    }
    return at === end ? 0 : 1;
  }

  /** Whether string `index` contains `needle` (UTF-8 bytes). */
  includes(index: number, needle: Uint8Array): boolean {
    const start = this.#start[index];
    const end = this.#start[index + 1];
    if (needle.length === 0) return true;
    const bytes = this.#bytes;
    const first = needle[0];
    // Names and titles are short: a plain scan beats a native call on a fresh view per text.
    for (let at = start, last = end - needle.length; at <= last; at++) {
      if (bytes[at] !== first) continue;
      let i = 1;
      while (i < needle.length && bytes[at + i] === needle[i]) i++;
      if (i === needle.length) return true;
    }
    return false;
  }

  /** Whether string `index` starts with `needle` (UTF-8 bytes). */
  startsWith(index: number, needle: Uint8Array): boolean {
    const start = this.#start[index];
    if (this.#start[index + 1] - start < needle.length) return false;
    for (let i = 0; i < needle.length; i++) if (this.#bytes[start + i] !== needle[i]) return false;
    return true;
  }

  save(out: SnapshotWriter): void {
    out.value(this.#size);
    out.array(this.#bytes, this.#start[this.#size]);
    out.array(this.#start, this.#size + 1);
  }

  load(input: SnapshotReader): void {
    const size = input.value<number>();
    const bytes = input.bytes();
    const start = input.array(Uint32Array);
    if (!Number.isSafeInteger(size) || start.length !== size + 1 || start[size] !== bytes.length) throw new SnapshotRejected('a string store does not add up');
    this.#size = size;
    // An empty store keeps room to grow, as a new one has.
    this.#bytes = bytes.length > 0 ? bytes : Buffer.allocUnsafeSlow(1 << 16);
    this.#start = start;
  }

  /** Drops the growth room (after a bulk load). */
  trim(): void {
    const used = this.#start[this.#size];
    const bytes = Buffer.allocUnsafeSlow(Math.max(used, 1));
    this.#bytes.copy(bytes, 0, 0, used);
    this.#bytes = bytes;
    this.#start = this.#start.slice(0, this.#size + 1);
  }

  #compareBytes(index: number, start: number, other: Uint8Array): number {
    return this.#bytes.compare(other, 0, other.length, start, this.#start[index + 1]);
  }

  #reserve(size: number): void {
    if (size <= this.#bytes.length) return;
    const bytes = Buffer.allocUnsafeSlow(grownLength(this.#bytes.length, size));
    this.#bytes.copy(bytes, 0, 0, this.#start[this.#size]);
    this.#bytes = bytes;
  }
}

/** The UTF-8 bytes of a query, for includes/startsWith. */
export const utf8 = (text: string): Uint8Array => encoder.encode(text);

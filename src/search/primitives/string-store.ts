import { grownLength, withRoom } from './bitset.js';
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
  /**
   * String i is #bytes[#from(i) … #from(i + 1)): at i × #width while every string has #width
   * bytes (row ids of one platform usually do: no offsets, 4 bytes a row less), else at #start[i].
   */
  #start: Uint32Array | null = null;
  #width = 0;
  #size = 0;
  /** Bytes in use. */
  #used = 0;

  get size(): number {
    return this.#size;
  }

  /** Whether it keeps an offset per string (tests): only once strings of two lengths are in. */
  get hasOffsets(): boolean {
    return this.#start !== null;
  }

  #from(index: number): number {
    return this.#start === null ? index * this.#width : this.#start[index];
  }

  /** Appends `text`; returns its index. */
  push(text: string): number {
    const at = this.#used;
    // A UTF-16 unit takes at most 3 bytes in UTF-8.
    this.#reserve(at + text.length * 3);
    const { written } = encoder.encodeInto(text, this.#bytes.subarray(at));
    const index = this.#size++;
    this.#used += written;
    if (this.#start === null) {
      if (index === 0) this.#width = written;
      else if (written !== this.#width) this.#keepOffsets(index);
    }
    if (this.#start !== null) {
      this.#start = withRoom(this.#start, this.#size + 1);
      this.#start[this.#size] = this.#used;
    }
    return index;
  }

  /** The first string of another length: offsets from now on, those of the `count` before derived. */
  #keepOffsets(count: number): void {
    const start = new Uint32Array(grownLength(1025, count + 2));
    for (let i = 0; i <= count; i++) start[i] = i * this.#width;
    this.#start = start;
  }

  get(index: number): string {
    return this.#bytes.toString('utf8', this.#from(index), this.#from(index + 1));
  }

  /** Whether string `index` equals `text` from its character `from` on. */
  equals(index: number, text: string, from = 0): boolean {
    const bytes = this.#bytes;
    let at = this.#from(index);
    const end = this.#from(index + 1);
    if (end - at < text.length - from) return false;
    for (let i = from; i < text.length; i++, at++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) return this.#compareBytes(index, this.#from(index), encoder.encode(text.slice(from))) === 0;
      if (at >= end || bytes[at] !== code) return false;
    }
    return at === end;
  }

  /** Bytewise order of strings `a` and `b` of this store. */
  compare(a: number, b: number): number {
    return this.#bytes.compare(this.#bytes, this.#from(b), this.#from(b + 1), this.#from(a), this.#from(a + 1));
  }

  /** Bytewise order of string `index` against `text`. */
  compareText(index: number, text: string): number {
    const bytes = this.#bytes;
    let at = this.#from(index);
    const end = this.#from(index + 1);
    for (let i = 0; i < text.length; i++, at++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) return this.#compareBytes(index, this.#from(index), encoder.encode(text));
      if (at >= end) return -1;
      if (bytes[at] !== code) return bytes[at] < code ? -1 : 1;
    }
    return at === end ? 0 : 1;
  }

  /** Whether string `index` contains `needle` (UTF-8 bytes). */
  includes(index: number, needle: Uint8Array): boolean {
    const start = this.#from(index);
    const end = this.#from(index + 1);
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
    const start = this.#from(index);
    if (this.#from(index + 1) - start < needle.length) return false;
    for (let i = 0; i < needle.length; i++) if (this.#bytes[start + i] !== needle[i]) return false;
    return true;
  }

  save(out: SnapshotWriter): void {
    out.value({ size: this.#size, width: this.#start === null ? this.#width : null });
    out.array(this.#bytes, this.#used);
    if (this.#start !== null) out.array(this.#start, this.#size + 1);
  }

  load(input: SnapshotReader): void {
    const { size, width } = input.value<{ size: number; width: number | null }>();
    const bytes = input.bytes();
    const start = width === null ? input.array(Uint32Array) : null;
    const fits = start === null ? Number.isSafeInteger(width) && width! >= 0 && width! * size === bytes.length : start.length === size + 1 && start[size] === bytes.length;
    if (!Number.isSafeInteger(size) || !fits) throw new SnapshotRejected('a string store does not add up');
    this.#size = size;
    this.#used = bytes.length;
    this.#start = start;
    this.#width = width ?? 0;
    // An empty store keeps room to grow, as a new one has.
    this.#bytes = bytes.length > 0 ? bytes : Buffer.allocUnsafeSlow(1 << 16);
  }

  /** Drops the growth room (after a bulk load). */
  trim(): void {
    const bytes = Buffer.allocUnsafeSlow(Math.max(this.#used, 1));
    this.#bytes.copy(bytes, 0, 0, this.#used);
    this.#bytes = bytes;
    if (this.#start !== null) this.#start = this.#start.slice(0, this.#size + 1);
  }

  #compareBytes(index: number, start: number, other: Uint8Array): number {
    return this.#bytes.compare(other, 0, other.length, start, this.#from(index + 1));
  }

  #reserve(size: number): void {
    if (size <= this.#bytes.length) return;
    const bytes = Buffer.allocUnsafeSlow(grownLength(this.#bytes.length, size));
    this.#bytes.copy(bytes, 0, 0, this.#used);
    this.#bytes = bytes;
  }
}

/** The UTF-8 bytes of a query, for includes/startsWith. */
export const utf8 = (text: string): Uint8Array => encoder.encode(text);

import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';

// The framing of an index snapshot file: a sequence of records, each a typed array or a small JSON
// value, behind a magic and a format version and followed by a CRC-32 of every byte before it.
// Each index structure writes its own records and reads them back in the same order
// (`save(out)` / `load(input)`); a record of another kind than asked, a length past the file's
// end or a checksum that does not match rejects the whole file. Arrays go straight between the
// file and their own memory: writing or reading a snapshot holds no second copy of the index.

export type NumericArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array | Int16Array;
type NumericArrayClass = Uint8ArrayConstructor | Uint16ArrayConstructor | Uint32ArrayConstructor | Int32ArrayConstructor | Float64ArrayConstructor | Int16ArrayConstructor;

// A kind is its index here: new kinds go at the end.
const KINDS: readonly NumericArrayClass[] = [Uint8Array, Uint16Array, Uint32Array, Int32Array, Float64Array, Int16Array];
const VALUE = 0x40;
const MAGIC = Buffer.from('CDSINDEX');
const END = Buffer.from('CDSEND\0\0');
/** A record's head: its kind (one byte) and its element count (a double: arrays may pass 4G bytes). */
const HEAD = 9;
/** Writes and reads below this go through the buffer; larger ones straight to the array. */
const DIRECT = 1 << 16;
const BUFFER = 1 << 20;

/** A structure that writes its records and reads them back, in the same order. */
export interface Snapshotted {
  save(out: SnapshotWriter): void;
  load(input: SnapshotReader): void;
}

/** The file is not a usable snapshot: the index is rebuilt from the database instead. */
export class SnapshotRejected extends Error {}

function kindOf(view: NumericArray): number {
  // From the last: no kind is a subclass of another, but Buffer is a Uint8Array.
  for (let kind = KINDS.length - 1; kind >= 0; kind--) if (view instanceof KINDS[kind]) return kind;
  throw new Error('not a numeric array');
}

export class SnapshotWriter {
  readonly #fd: number;
  readonly #buffer = Buffer.allocUnsafe(BUFFER);
  #used = 0;
  #crc = 0;
  #bytes = 0;

  /** Starts a snapshot of format `version` on an open, empty file. */
  constructor(fd: number, version: number) {
    this.#fd = fd;
    this.#put(MAGIC);
    const head = Buffer.alloc(4);
    head.writeUInt32LE(version);
    this.#put(head);
  }

  /** The first `length` elements of `view`. */
  array(view: NumericArray, length = view.length): void {
    this.#head(kindOf(view), length);
    this.#put(new Uint8Array(view.buffer, view.byteOffset, length * view.BYTES_PER_ELEMENT));
  }

  /** A small value as JSON (no NaN or Infinity: JSON has neither). */
  value(value: unknown): void {
    const json = Buffer.from(JSON.stringify(value));
    this.#head(VALUE, json.length);
    this.#put(json);
  }

  /** Writes the checksum and the length; the caller then syncs and closes the file. */
  finish(): number {
    const trailer = Buffer.alloc(END.length + 4 + 8);
    END.copy(trailer);
    trailer.writeUInt32LE(this.#crc >>> 0, END.length);
    trailer.writeDoubleLE(this.#bytes + trailer.length, END.length + 4);
    this.#raw(trailer);
    this.#flush();
    return this.#bytes;
  }

  #head(kind: number, length: number): void {
    const head = Buffer.allocUnsafe(HEAD);
    head.writeUInt8(kind);
    head.writeDoubleLE(length, 1);
    this.#put(head);
  }

  #put(bytes: Uint8Array): void {
    // Node 20's crc32 answers 0, not the running value, for a view of an empty ArrayBuffer.
    if (bytes.length > 0) this.#crc = crc32(bytes, this.#crc);
    this.#raw(bytes);
  }

  #raw(bytes: Uint8Array): void {
    this.#bytes += bytes.length;
    if (bytes.length >= DIRECT) {
      this.#flush();
      writeAll(this.#fd, bytes);
      return;
    }
    if (this.#used + bytes.length > BUFFER) this.#flush();
    this.#buffer.set(bytes, this.#used);
    this.#used += bytes.length;
  }

  #flush(): void {
    if (this.#used === 0) return;
    writeAll(this.#fd, this.#buffer.subarray(0, this.#used));
    this.#used = 0;
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}

export class SnapshotReader {
  readonly #fd: number;
  readonly #size: number;
  readonly #buffer = Buffer.allocUnsafe(BUFFER);
  /** Buffered bytes are #buffer[#at … #end); #position is the file offset of #buffer[#end]. */
  #at = 0;
  #end = 0;
  #position = 0;
  #crc = 0;
  readonly version: number;

  /** Opens `path` and reads its magic and format version (throws SnapshotRejected when it has neither). */
  static open(path: string): SnapshotReader {
    const fd = openSync(path, 'r');
    try {
      return new SnapshotReader(fd);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  private constructor(fd: number) {
    this.#fd = fd;
    this.#size = fstatSync(fd).size;
    if (this.#size < MAGIC.length + 4 + END.length + 12) throw new SnapshotRejected('shorter than any snapshot');
    if (!MAGIC.equals(this.#take(MAGIC.length))) throw new SnapshotRejected('not a snapshot file');
    this.version = this.#take(4).readUInt32LE();
  }

  close(): void {
    closeSync(this.#fd);
  }

  /** The file's length in bytes. */
  get size(): number {
    return this.#size;
  }

  /** The next record, an array of exactly this class. */
  array<T extends NumericArray>(kind: { new (length: number): T; BYTES_PER_ELEMENT: number }): T {
    return this.arrayInto(kind, (length) => new kind(length));
  }

  /**
   * The next record, an array of exactly this class, read into the one `into` gives for its
   * length (memory the caller keeps, such as a kernel's), with no array of its own between.
   */
  arrayInto<T extends NumericArray>(kind: { BYTES_PER_ELEMENT: number }, into: (length: number) => T): T {
    const expected = KINDS.indexOf(kind as unknown as NumericArrayClass);
    const { kind: found, length } = this.#head();
    if (found !== expected) throw new SnapshotRejected(`record of kind ${found} where ${expected} was expected`);
    const view = into(this.#checkedLength(length, kind.BYTES_PER_ELEMENT));
    if (view.length !== length || view.BYTES_PER_ELEMENT !== kind.BYTES_PER_ELEMENT) throw new Error('arrayInto: the array given does not fit the record');
    return this.#fill(view);
  }

  /** The next record, an array of whichever class was written (a column that may have widened). */
  anyArray(): NumericArray {
    const { kind, length } = this.#head();
    const type = KINDS[kind];
    if (!type) throw new SnapshotRejected(`record of kind ${kind} where an array was expected`);
    return this.#fill(new type(this.#checkedLength(length, type.BYTES_PER_ELEMENT)));
  }

  /** The next record, as bytes outside the V8 heap (string stores). */
  bytes(): Buffer {
    const { kind, length } = this.#head();
    if (kind !== 0) throw new SnapshotRejected(`record of kind ${kind} where bytes were expected`);
    return this.#fill(Buffer.allocUnsafeSlow(this.#checkedLength(length, 1)));
  }

  value<T>(): T {
    const { kind, length } = this.#head();
    if (kind !== VALUE) throw new SnapshotRejected(`record of kind ${kind} where a value was expected`);
    const json = this.#take(this.#checkedLength(length, 1));
    try {
      return JSON.parse(json.toString('utf8')) as T;
    } catch {
      throw new SnapshotRejected('a value record is not JSON');
    }
  }

  /** Checks the trailer: the checksum of every byte read, and that nothing follows. */
  finish(): void {
    const crc = this.#crc;
    const trailer = this.#take(END.length + 12, false);
    if (!END.equals(trailer.subarray(0, END.length))) throw new SnapshotRejected('records do not end where the trailer begins');
    if (trailer.readUInt32LE(END.length) !== crc >>> 0) throw new SnapshotRejected('checksum mismatch');
    if (trailer.readDoubleLE(END.length + 4) !== this.#size || this.#offset !== this.#size) throw new SnapshotRejected('length mismatch');
  }

  get #offset(): number {
    return this.#position - (this.#end - this.#at);
  }

  #head(): { kind: number; length: number } {
    const head = this.#take(HEAD);
    return { kind: head.readUInt8(0), length: head.readDoubleLE(1) };
  }

  /** A record's element count, refused when it is not one or when its bytes would pass the file's end. */
  #checkedLength(length: number, bytesPerElement: number): number {
    if (!Number.isSafeInteger(length) || length < 0 || length * bytesPerElement > this.#size - this.#offset) {
      throw new SnapshotRejected('a record runs past the end of the file');
    }
    return length;
  }

  /** The next `length` bytes, copied out of the buffer. */
  #take(length: number, checked = true): Buffer {
    const out = Buffer.allocUnsafe(length);
    this.#read(out, checked);
    return out;
  }

  #fill<T extends NumericArray>(view: T): T {
    this.#read(new Uint8Array(view.buffer, view.byteOffset, view.byteLength), true);
    return view;
  }

  #read(out: Uint8Array, checked: boolean): void {
    let done = 0;
    while (done < out.length) {
      if (this.#at === this.#end) {
        const left = out.length - done;
        if (left >= DIRECT) {
          const got = readSync(this.#fd, out, done, left, this.#position);
          if (got === 0) throw new SnapshotRejected('the file ends inside a record');
          this.#position += got;
          done += got;
          continue;
        }
        const got = readSync(this.#fd, this.#buffer, 0, BUFFER, this.#position);
        if (got === 0) throw new SnapshotRejected('the file ends inside a record');
        this.#position += got;
        this.#at = 0;
        this.#end = got;
      }
      const n = Math.min(out.length - done, this.#end - this.#at);
      out.set(this.#buffer.subarray(this.#at, this.#at + n), done);
      this.#at += n;
      done += n;
    }
    if (checked && out.length > 0) this.#crc = crc32(out, this.#crc);
  }
}

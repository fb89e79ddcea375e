import { compareUtf8, StringStore } from './string-store.js';
import { SnapshotRejected, type SnapshotReader, type SnapshotWriter } from './snapshot-io.js';

// A row table's ids, packed. Platform ids are short strings of one length over a small alphabet:
// Twitter's user ids 13 decimal digits, YouTube's video ids 11 characters and channel ids 24 of
// base64url. While every id of a table has one length and fits one alphabet, each character is kept
// as its rank in the alphabet (4 bits a digit, 6 a base64url character), packed most significant
// bit first: 7 bytes a creator id instead of 13, 9 a video id instead of 11, 18 a channel id
// instead of 24 (about 110 MB less at 10M creators and 20M videos). Ranks follow the characters'
// byte order, so packed ids of one length compare as their UTF-8 bytes do (PostgreSQL's COLLATE
// "C", the id tie-break of every order). The first id of another length or character moves the
// store once: digits to base64url, anything else to plain UTF-8 bytes (a StringStore).

interface Alphabet {
  name: 'digits' | 'base64url';
  chars: string;
  bits: number;
}

const DIGITS: Alphabet = { name: 'digits', chars: '0123456789', bits: 4 };
// In byte order: '-' 0x2d, digits, capitals, '_' 0x5f, small letters.
const BASE64URL: Alphabet = { name: 'base64url', chars: '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz', bits: 6 };
const ALPHABETS = [DIGITS, BASE64URL];

/** A character's rank in each alphabet by char code, -1 outside it. */
const ranks = ALPHABETS.map(({ chars }) => {
  const rank = new Int8Array(128).fill(-1);
  for (let i = 0; i < chars.length; i++) rank[chars.charCodeAt(i)] = i;
  return rank;
});

/** The narrowest alphabet (its index) holding every character of `text`, -1 for none. */
function alphabetOf(text: string): number {
  for (let a = 0; a < ALPHABETS.length; a++) {
    const rank = ranks[a];
    let fits = true;
    for (let i = 0; i < text.length && fits; i++) {
      const code = text.charCodeAt(i);
      fits = code < 128 && rank[code] !== -1;
    }
    if (fits) return a;
  }
  return -1;
}

export class IdStore {
  /** Packed ids, `#stride` bytes each; null once the ids went plain. */
  #bytes: Buffer | null = Buffer.allocUnsafeSlow(1 << 16);
  #alphabet = 0;
  /** Characters an id (set by the first). */
  #width = -1;
  #stride = 0;
  #size = 0;
  #plain: StringStore | null = null;
  /** Scratch for packing a probe. */
  #probe = Buffer.alloc(0);

  get size(): number {
    return this.#plain?.size ?? this.#size;
  }

  /** How ids are kept (tests): an alphabet's name, or 'plain'. */
  get packing(): 'digits' | 'base64url' | 'plain' {
    return this.#plain ? 'plain' : ALPHABETS[this.#alphabet].name;
  }

  /** Appends `id`; returns its index. */
  push(id: string): number {
    if (this.#plain) return this.#plain.push(id);
    if (this.#width === -1) {
      const alphabet = alphabetOf(id);
      if (alphabet === -1 || id.length === 0) return this.#goPlain().push(id);
      this.#setForm(alphabet, id.length);
    }
    if (id.length !== this.#width) return this.#goPlain().push(id);
    const needed = alphabetOf(id);
    if (needed === -1) return this.#goPlain().push(id);
    if (needed > this.#alphabet) this.#repack(needed);
    const index = this.#size;
    this.#reserve((index + 1) * this.#stride);
    pack(id, 0, ranks[this.#alphabet], ALPHABETS[this.#alphabet].bits, this.#bytes!, index * this.#stride, this.#stride);
    this.#size++;
    return index;
  }

  get(index: number): string {
    if (this.#plain) return this.#plain.get(index);
    const { chars, bits } = ALPHABETS[this.#alphabet];
    const bytes = this.#bytes!;
    let at = index * this.#stride;
    let acc = 0;
    let held = 0;
    let out = '';
    for (let i = 0; i < this.#width; i++) {
      while (held < bits) {
        acc = ((acc << 8) | bytes[at++]) & 0xffff;
        held += 8;
      }
      held -= bits;
      out += chars[(acc >>> held) & ((1 << bits) - 1)];
    }
    return out;
  }

  /** Whether id `index` equals `text` from its character `from` on. */
  equals(index: number, text: string, from = 0): boolean {
    if (this.#plain) return this.#plain.equals(index, text, from);
    if (text.length - from !== this.#width) return false;
    const stride = this.#stride;
    if (this.#probe.length < stride) this.#probe = Buffer.alloc(stride);
    if (!pack(text, from, ranks[this.#alphabet], ALPHABETS[this.#alphabet].bits, this.#probe, 0, stride)) return false;
    const bytes = this.#bytes!;
    const at = index * stride;
    for (let i = 0; i < stride; i++) if (bytes[at + i] !== this.#probe[i]) return false;
    return true;
  }

  /** Bytewise order of ids `a` and `b`. */
  compare(a: number, b: number): number {
    if (this.#plain) return this.#plain.compare(a, b);
    const bytes = this.#bytes!;
    const stride = this.#stride;
    for (let i = 0, x = a * stride, y = b * stride; i < stride; i++, x++, y++) {
      if (bytes[x] !== bytes[y]) return bytes[x] < bytes[y] ? -1 : 1;
    }
    return 0;
  }

  /** Bytewise order of id `index` against `text` (a cursor's id: once a page). */
  compareText(index: number, text: string): number {
    if (this.#plain) return this.#plain.compareText(index, text);
    return compareUtf8(this.get(index), text);
  }

  /** Drops the growth room (after a bulk load). */
  trim(): void {
    if (this.#plain) return this.#plain.trim();
    const used = this.#size * this.#stride;
    const bytes = Buffer.allocUnsafeSlow(Math.max(used, 1));
    this.#bytes!.copy(bytes, 0, 0, used);
    this.#bytes = bytes;
  }

  save(out: SnapshotWriter): void {
    if (this.#plain) {
      out.value({ packing: 'plain' });
      this.#plain.save(out);
      return;
    }
    out.value({ packing: ALPHABETS[this.#alphabet].name, width: this.#width, size: this.#size });
    out.array(this.#bytes!, this.#size * this.#stride);
  }

  load(input: SnapshotReader): void {
    const { packing, width, size } = input.value<{ packing: string; width?: number; size?: number }>();
    if (packing === 'plain') {
      this.#plain = new StringStore();
      this.#plain.load(input);
      this.#bytes = null;
      return;
    }
    const alphabet = ALPHABETS.findIndex(({ name }) => name === packing);
    const bytes = input.bytes();
    if (alphabet === -1 || !Number.isSafeInteger(size) || size! < 0 || !Number.isSafeInteger(width) || width! < -1 || width === 0) {
      throw new SnapshotRejected('an id store does not add up');
    }
    this.#setForm(alphabet, width!);
    if (bytes.length !== size! * this.#stride || (width === -1 && size !== 0)) throw new SnapshotRejected('an id store does not add up');
    // Every rank within the alphabet: a digit's 4 bits can say 10–15, which no id holds.
    if (ALPHABETS[alphabet].chars.length < 1 << ALPHABETS[alphabet].bits && !validDigits(bytes, this.#stride, width!)) {
      throw new SnapshotRejected('an id store holds a character outside its alphabet');
    }
    this.#size = size!;
    this.#bytes = bytes.length > 0 ? bytes : Buffer.allocUnsafeSlow(1 << 16);
  }

  #setForm(alphabet: number, width: number): void {
    this.#alphabet = alphabet;
    this.#width = width;
    this.#stride = width === -1 ? 0 : Math.ceil((width * ALPHABETS[alphabet].bits) / 8);
  }

  /** Every id again in a wider alphabet (digits to base64url: the ranks change). */
  #repack(alphabet: number): void {
    const ids = Array.from({ length: this.#size }, (_, i) => this.get(i));
    this.#setForm(alphabet, this.#width);
    this.#bytes = Buffer.allocUnsafeSlow(Math.max(this.#size * this.#stride, 1 << 16));
    for (const [i, id] of ids.entries()) pack(id, 0, ranks[alphabet], ALPHABETS[alphabet].bits, this.#bytes, i * this.#stride, this.#stride);
  }

  #goPlain(): StringStore {
    const plain = new StringStore();
    for (let i = 0; i < this.#size; i++) plain.push(this.get(i));
    this.#plain = plain;
    this.#bytes = null;
    return plain;
  }

  #reserve(size: number): void {
    const bytes = this.#bytes!;
    if (size <= bytes.length) return;
    // Past a million ids by an eighth, as the other columns grow.
    const grown = Buffer.allocUnsafeSlow(Math.max(size, bytes.length > 1 << 20 ? Math.ceil(bytes.length * 1.125) : bytes.length * 2));
    bytes.copy(grown, 0, 0, this.#size * this.#stride);
    this.#bytes = grown;
  }
}

/**
 * Packs `text` from character `from` into `stride` bytes at `at`, most significant bit first, the
 * last byte's unused bits zero; false when a character is outside the alphabet.
 */
function pack(text: string, from: number, rank: Int8Array, bits: number, out: Uint8Array, at: number, stride: number): boolean {
  let acc = 0;
  let held = 0;
  let o = at;
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const r = code < 128 ? rank[code] : -1;
    if (r === -1) return false;
    acc = ((acc << bits) | r) & 0xffff;
    held += bits;
    while (held >= 8) {
      held -= 8;
      out[o++] = (acc >>> held) & 0xff;
    }
  }
  if (held > 0) out[o++] = (acc << (8 - held)) & 0xff;
  return o - at === stride;
}

/** Whether every 4-bit rank of every id is a digit (0–9) and each id's padding is zero. */
function validDigits(bytes: Uint8Array, stride: number, width: number): boolean {
  const padded = width % 2 === 1;
  for (let at = 0; at < bytes.length; at += stride) {
    for (let i = 0; i < stride; i++) {
      const byte = bytes[at + i];
      if (byte >>> 4 > 9) return false;
      const last = i === stride - 1 && padded;
      if (last ? (byte & 0xf) !== 0 : (byte & 0xf) > 9) return false;
    }
  }
  return true;
}

import { describe, expect, it } from 'vitest';
import { compareUtf8, StringStore, utf8 } from '../src/search/primitives/string-store.js';
import { seededRandom } from '../src/upstreams/seeded-random.js';
import { roundTrip } from './support/snapshot-round-trip.js';

// Ids and texts live as UTF-8 bytes: every comparison must order them as PostgreSQL's COLLATE "C"
// does (bytewise UTF-8, which differs from JS string order past U+D7FF) and every test must say
// what the same test on the JS string says.

const ALPHABET = ['a', 'b', 'z', 'A', '0', '_', '\u0000', 'é', 'ß', 'ж', '中', '\uff5e', '\ue000', '😀', '𝔸'];

describe('the byte string store', () => {
  it('orders, matches and returns strings as bytewise UTF-8 does, for ASCII and beyond', () => {
    const rng = seededRandom('string-store');
    const randomText = () => Array.from({ length: rng.int(0, 6) }, () => (rng.chance(0.6) ? rng.pick(['a', 'b', 'z']) : rng.pick(ALPHABET))).join('');
    const texts = Array.from({ length: 400 }, randomText);
    const store = new StringStore();
    for (const text of texts) store.push(text);
    store.trim();
    store.push('after-trim');
    texts.push('after-trim');
    const bytewise = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));

    for (let n = 0; n < 3_000; n++) {
      const a = rng.int(0, texts.length - 1);
      const b = rng.int(0, texts.length - 1);
      const probe = rng.chance(0.5) ? texts[b] : randomText();
      expect(store.get(a)).toBe(texts[a]);
      expect(Math.sign(store.compare(a, b))).toBe(bytewise(texts[a], texts[b]));
      expect(Math.sign(store.compareText(a, probe))).toBe(bytewise(texts[a], probe));
      expect(Math.sign(compareUtf8(texts[a], probe))).toBe(bytewise(texts[a], probe));
      expect(store.equals(a, probe)).toBe(texts[a] === probe);
      expect(store.equals(a, `p\u0000${probe}`, 2)).toBe(texts[a] === probe);
      const needle = Array.from(probe).slice(0, rng.int(0, 3)).join(''); // whole characters, as a query has
      expect(store.includes(a, utf8(needle))).toBe(texts[a].includes(needle));
      expect(store.startsWith(a, utf8(needle))).toBe(texts[a].startsWith(needle));
    }
  });

  it('orders a supplementary character after U+E000..U+FFFF, as UTF-8 bytes do (JS strings do not)', () => {
    expect('😀' < '\uff5e').toBe(true);
    expect(compareUtf8('😀', '\uff5e')).toBe(1);
    const store = new StringStore();
    store.push('😀');
    store.push('\uff5e');
    expect(store.compare(0, 1)).toBe(1);
    expect(store.compareText(0, '\uff5e')).toBe(1);
  });

  it('keeps strings of one length without offsets, and every string through the first of another length and a snapshot', () => {
    const rng = seededRandom('string-store-width');
    const ids = Array.from({ length: 3_000 }, (_, i) => `v${String(i).padStart(6, '0')}ж`);
    const store = new StringStore();
    for (const id of ids) store.push(id);
    expect(store.hasOffsets).toBe(false);
    const fixed = roundTrip(store, new StringStore());
    expect(fixed.hasOffsets).toBe(false);
    store.trim();
    for (const other of ['', 'v1', `${ids[0]}x`]) {
      const from = rng.int(0, ids.length - 1);
      const copy = new StringStore();
      for (const id of ids.slice(0, from)) copy.push(id);
      for (const text of [other, ...ids.slice(from)]) copy.push(text);
      const expected = [...ids.slice(0, from), other, ...ids.slice(from)];
      expect(copy.hasOffsets).toBe(true);
      const back = roundTrip(copy, new StringStore());
      for (const [index, text] of expected.entries()) {
        expect(copy.get(index)).toBe(text);
        expect(back.get(index)).toBe(text);
        expect(back.equals(index, text)).toBe(true);
      }
      back.push('after');
      expect(back.get(expected.length)).toBe('after');
    }
    for (const [index, id] of ids.entries()) {
      expect(store.get(index)).toBe(id);
      expect(fixed.get(index)).toBe(id);
      expect(fixed.equals(index, id)).toBe(true);
      expect(Math.sign(fixed.compareText(index, ids[1500]))).toBe(Math.sign(index - 1500));
    }
    fixed.push('longer than the rest');
    expect([fixed.hasOffsets, fixed.get(ids.length), fixed.get(ids.length - 1)]).toEqual([true, 'longer than the rest', ids.at(-1)]);
  });
});

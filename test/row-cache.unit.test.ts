import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { RowCache, SearchRows } from '../src/search/row-cache.js';

// The row cache in front of reads by key: what it returns, what it asks the database for, and
// that it never keeps a row read before an invalidation.

interface Row {
  id: string;
  version: number;
}

function source() {
  const asked: string[][] = [];
  let version = 1;
  return {
    asked,
    bump: () => version++,
    // Rows come back out of order, and a key starting with "gone" has no row.
    load: async (keys: string[]) => {
      asked.push(keys);
      return keys.filter((key) => !key.startsWith('gone')).reverse().map((id) => ({ id, version }));
    },
  };
}
const idOf = (row: Row) => row.id;

describe('RowCache', () => {
  it('answers in key order, leaves out keys without a row, and keeps a row on its second miss', async () => {
    const cache = new RowCache<Row>(100);
    const db = source();
    expect((await cache.read(['a', 'gone1', 'b'], db.load, idOf)).map(idOf)).toEqual(['a', 'b']);
    // Read once: not kept (a page anywhere in a large table is rarely read again).
    expect((await cache.read(['c', 'b', 'a'], db.load, idOf)).map(idOf)).toEqual(['c', 'b', 'a']);
    expect(db.asked).toEqual([
      ['a', 'gone1', 'b'],
      ['c', 'b', 'a'],
    ]);
    // a and b missed twice and are kept; c only now.
    await cache.read(['a', 'b', 'c'], db.load, idOf);
    expect(db.asked.at(-1)).toEqual(['c']);
    await cache.read(['a', 'b', 'c'], db.load, idOf);
    expect(db.asked).toHaveLength(3);
  });

  it('reads a forgotten key again, and does not keep a row read while it was forgotten', async () => {
    const cache = new RowCache<Row>(100);
    const db = source();
    await cache.read(['a', 'b'], db.load, idOf);
    await cache.read(['a', 'b'], db.load, idOf);
    db.bump();
    cache.forget(['a']);
    expect(await cache.read(['a', 'b'], db.load, idOf)).toEqual([{ id: 'a', version: 2 }, { id: 'b', version: 1 }]);

    // A read in flight when its key is forgotten returns what it read but does not store it.
    await cache.read(['c'], db.load, idOf);
    let release!: () => void;
    const slow = async (keys: string[]) => {
      await new Promise<void>((resolve) => (release = resolve));
      return db.load(keys);
    };
    const pending = cache.read(['c'], slow, idOf);
    await Promise.resolve();
    cache.forget(['c']);
    db.bump();
    release();
    expect(await pending).toEqual([{ id: 'c', version: 3 }]);
    db.bump();
    expect(await cache.read(['c'], db.load, idOf)).toEqual([{ id: 'c', version: 4 }]);
    cache.clear();
    expect(await cache.read(['a', 'b'], db.load, idOf)).toEqual([{ id: 'a', version: 4 }, { id: 'b', version: 4 }]);
  });

  it('keeps rows offered by a read made elsewhere as it keeps read ones, unless something was forgotten since that read began', async () => {
    const cache = new RowCache<Row>(100);
    const db = source();
    // Never missed before: an offered row is not kept either.
    cache.offer([{ id: 'w', version: 1 }], idOf, cache.generation);
    expect(await cache.read(['w'], db.load, idOf)).toEqual([{ id: 'w', version: 1 }]);
    expect(db.asked).toEqual([['w']]);

    await cache.read(['x', 'y'], db.load, idOf);
    db.asked.length = 0;
    cache.offer([{ id: 'x', version: 1 }], idOf, cache.generation);
    expect(await cache.read(['x'], db.load, idOf)).toEqual([{ id: 'x', version: 1 }]);
    expect(db.asked).toEqual([]);

    const stale = cache.generation;
    cache.forget(['z']);
    cache.offer([{ id: 'y', version: 1 }], idOf, stale);
    db.bump();
    expect(await cache.read(['y'], db.load, idOf)).toEqual([{ id: 'y', version: 2 }]);
    expect(db.asked).toEqual([['y']]);
  });

  it('keeps a row read often while rows read once pass through, and never more than its capacity', async () => {
    const cache = new RowCache<Row>(100);
    const db = source();
    for (let i = 0; i < 1_000; i++) {
      await cache.read([`hot`, `cold${i}`], db.load, idOf);
    }
    // "hot" was loaded twice (kept on its second miss); every cold key once.
    expect(db.asked.flat().filter((key) => key === 'hot')).toHaveLength(2);
    expect(db.asked.flat()).toHaveLength(1_002);
    // A cold key read once was not kept; read again, it is.
    db.asked.length = 0;
    await cache.read(['cold999', 'hot'], db.load, idOf);
    expect(db.asked).toEqual([['cold999']]);
    await cache.read(['cold999', 'hot'], db.load, idOf);
    expect(db.asked).toHaveLength(1);
    // Never more than the capacity: of 1,000 keys each kept on a second read, at most 100 are
    // answered without a load.
    for (let i = 0; i < 1_000; i++) {
      await cache.read([`warm${i}`], db.load, idOf);
      await cache.read([`warm${i}`], db.load, idOf);
    }
    db.asked.length = 0;
    for (let i = 0; i < 1_000; i++) await cache.read([`warm${i}`], db.load, idOf);
    expect(db.asked.length).toBeGreaterThanOrEqual(900);
    expect(db.asked.length).toBeLessThan(1_000);
  });

  it('sizes every cache of a process by ROW_CACHE_ROWS (default 10,000), and refuses a value that is not a count', async () => {
    expect(loadConfig({}).rowCacheRows).toBe(10_000);
    expect(loadConfig({ ROW_CACHE_ROWS: '50' }).rowCacheRows).toBe(50);
    for (const bad of ['-1', '1.5', 'many']) expect(() => loadConfig({ ROW_CACHE_ROWS: bad }), bad).toThrow(/ROW_CACHE_ROWS/);
    const rows = new SearchRows<Row, Row, Row, Row>(loadConfig({ ROW_CACHE_ROWS: '50' }).rowCacheRows);
    for (const cache of [rows.creators('twitter'), rows.videos, rows.channels, rows.liveStreams]) {
      const db = source();
      // Each read twice: a row is kept on its second miss.
      for (let i = 0; i < 200; i++) for (const _ of [1, 2]) await cache.read([`key${i}`], db.load, idOf);
      db.asked.length = 0;
      // The last keys read are still there; the first 100 were pushed out by a 50-row cache.
      await cache.read(Array.from({ length: 10 }, (_, i) => `key${190 + i}`), db.load, idOf);
      expect(db.asked).toEqual([]);
      await cache.read(Array.from({ length: 100 }, (_, i) => `key${i}`), db.load, idOf);
      expect(db.asked.flat()).toHaveLength(100);
    }
  });
});

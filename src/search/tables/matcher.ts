import { parseInstant } from '../../inputs/common.js';
import { andInto, type BitsetPool, orInto, popcount, type WordWindow } from '../primitives/bitset.js';
import { centsAtLeast, centsAtMost } from '../primitives/decimal.js';
import type { Bounds, RangeIndex } from '../primitives/range-index.js';
import type { Match } from '../primitives/result-cache.js';
import type { TextIndex } from '../primitives/text-index.js';
import type { ValueIndex } from '../primitives/value-index.js';

// Evaluates a filter as bitset operations: start from the rows of one bitmap (the platform, the
// live rows), AND in each condition, count with one popcount. Conditions are what the SQL WHERE
// says, one for one, so the rows are the rows SQL would find.
//
// A range narrows the window of words the search works on to the words its rows can be in
// (RangeIndex.wordWindow): every later condition, and the count, touch only those words. Give the
// narrowest range first.

/** A numeric filter column and how its bounds are compared: whole numbers, or decimals in cents. */
export interface NumericColumn {
  range: RangeIndex;
  unit: 'count' | 'cents';
}

/** `column >= min AND column <= max` in the column's stored unit (either bound may be absent). */
export function inclusiveBounds(unit: NumericColumn['unit'], min: number | null | undefined, max: number | null | undefined): Bounds {
  const convert = (value: number, round: 'up' | 'down') => (unit === 'count' ? value : round === 'up' ? centsAtLeast(value) : centsAtMost(value));
  return {
    ...(min != null ? { min: convert(min, 'up') } : {}),
    ...(max != null ? { max: convert(max, 'down') } : {}),
  };
}

/**
 * The filter's fields that ask for something: set, and not an empty list or text, which ask for
 * nothing (the SQL path and #match skip them alike), so a search chooses its way with or without them.
 */
export function conditionsOf(filter: object): [string, unknown][] {
  return Object.entries(filter).filter(([, value]) => value != null && value !== '' && !(Array.isArray(value) && value.length === 0));
}

/** A time range filter (`createAtStart`/`createAtEnd`) in epoch ms: from the start, to the end's exclusive end. */
export function instantBounds(filter: { createAtStart?: string | null; createAtEnd?: string | null }): Bounds {
  return {
    ...(filter.createAtStart ? { min: parseInstant(filter.createAtStart)!.start.getTime() } : {}),
    ...(filter.createAtEnd ? { max: parseInstant(filter.createAtEnd)!.endExclusive.getTime(), maxExclusive: true } : {}),
  };
}

export class Matcher {
  readonly bits: Uint32Array;
  /** Taken when a condition first needs it; every user writes the words it reads. */
  #scratch: Uint32Array | null = null;
  /**
   * The rows to start from, not yet written into `bits` (null: none; undefined: written). The
   * first condition writes them within its own window only, zeros outside: a date range that
   * keeps a tenth of 20M videos' words does not copy the other nine tenths only to clear them.
   */
  #start: Uint32Array | null | undefined;
  /** The words that may still hold a match: [#from, #to); every word outside is 0. */
  #from = 0;
  #to: number;
  /** Until the starting rows are written: the words of `bits` its last user may have left set. */
  readonly #dirty: WordWindow;

  constructor(
    readonly words: number,
    private readonly pool: BitsetPool,
    start: Uint32Array | null,
  ) {
    const taken = pool.takeDirty(words);
    this.bits = taken.bits;
    this.#dirty = taken.dirty;
    this.#start = start;
    this.#to = words;
  }

  /** Rows holding any of `values`. */
  values<V extends string | number | boolean>(index: ValueIndex<V>, values: readonly V[]): this {
    this.#begin();
    index.selectInto(this.bits, values, this.#scratchBits(), this.#from, this.#to);
    return this;
  }

  range(range: RangeIndex, bounds: Bounds): this {
    if (bounds.min === undefined && bounds.max === undefined) return this;
    this.#narrow(range.wordWindow(bounds));
    range.selectInto(this.bits, this.#to, bounds, this.#scratchBits(), this.#from);
    return this;
  }

  #narrow(window: WordWindow): void {
    const from = Math.max(this.#from, window.from);
    const to = Math.max(from, Math.min(this.#to, window.to));
    const bits = this.bits;
    if (this.#start === undefined) {
      bits.fill(0, this.#from, from);
      bits.fill(0, to, this.#to);
    } else {
      // Zeros outside the window, written only where the bitset's last user may have left a bit.
      const start = this.#start;
      const dirty = this.#dirty;
      bits.fill(0, dirty.from, Math.min(from, dirty.to));
      const copied = start === null ? from : Math.max(from, Math.min(to, start.length));
      if (start !== null && copied > from) bits.set(start.subarray(from, copied), from);
      bits.fill(0, Math.max(copied, dirty.from), dirty.to);
      this.#start = undefined;
    }
    this.#from = from;
    this.#to = to;
  }

  /** The starting rows written into `bits`, if no condition has written them yet. */
  #begin(): void {
    if (this.#start !== undefined) this.#narrow({ from: 0, to: this.words });
  }

  #scratchBits(): Uint32Array {
    return (this.#scratch ??= this.pool.takeUncleared(this.words));
  }

  /** Rows whose text in any of `columns` contains `query` (lower-cased). */
  text(columns: readonly TextIndex[], query: string): this {
    this.#begin();
    const scratch = this.#scratchBits();
    scratch.fill(0, this.#from, this.#to);
    for (const column of columns) orInto(scratch, column.rowsMatching(query, this.words), this.#to, this.#from);
    andInto(this.bits, scratch, this.#to, this.#from);
    return this;
  }

  /** Keeps only the rows passing `test`, one by one (for a few rows, cheaper than a bitmap). */
  keep(test: (slot: number) => boolean): this {
    this.#begin();
    const bits = this.bits;
    for (let i = this.#from; i < this.#to; i++) {
      let word = bits[i];
      while (word !== 0) {
        const lowest = word & -word;
        if (!test((i << 5) + 31 - Math.clz32(lowest))) bits[i] &= ~lowest;
        word ^= lowest;
      }
    }
    return this;
  }

  /** How many rows match so far. */
  count(): number {
    this.#begin();
    return popcount(this.bits, this.#to, this.#from);
  }

  /** Rows of a bitmap computed by the caller into the scratch space. */
  computed(fill: (scratch: Uint32Array) => void): this {
    this.#begin();
    const scratch = this.#scratchBits();
    scratch.fill(0);
    fill(scratch);
    andInto(this.bits, scratch, this.#to, this.#from);
    return this;
  }

  /** The matching rows and their number; the scratch space goes back to the pool. */
  finish(): Match {
    this.#begin();
    if (this.#scratch) this.pool.give(this.#scratch);
    return { bits: this.bits, count: popcount(this.bits, this.#to, this.#from), window: { from: this.#from, to: this.#to } };
  }
}

// Rows per distinct combination of three small codes (a video's title entry, description entry and
// type), kept while the combinations are few: a count over conditions on those columns alone is
// then a pass over the combinations, not over the rows. A fragment of a common word matched a
// tenth of 20M videos or all of them, and the bits of its rows cost 20–50 ms a search
// (docs/performance.md).
//
// Past `limit` combinations (texts that rarely repeat, as real titles may) it stops counting, and
// `kept` says so, until `clear` starts it over from a pass over every row.

/** The combinations a table starts with room for; it doubles past half full. */
const INITIAL_ROOM = 1024;
const EMPTY = -1;

export class CombinationCounts {
  #first = new Int32Array(INITIAL_ROOM).fill(EMPTY);
  #second = new Int32Array(INITIAL_ROOM);
  #third = new Int32Array(INITIAL_ROOM);
  #rows = new Int32Array(INITIAL_ROOM);
  /** The highest key a row of the combination has had since it was counted: a removal does not lower it. */
  #top = new Float64Array(INITIAL_ROOM);
  #used = 0;
  #kept = true;

  /** @param limit combinations counted at most (65,536: 2 MB of table at most) */
  constructor(readonly limit = 1 << 16) {}

  /** Whether every row is counted (false past `limit` combinations, until `clear`). */
  get kept(): boolean {
    return this.#kept;
  }

  /** Combinations held, those down to no row included. */
  get size(): number {
    return this.#used;
  }

  clear(): void {
    this.#allocate(INITIAL_ROOM);
    this.#kept = true;
  }

  /**
   * Adds `rows` (negative: takes them) to the combination (first, second, third), and raises its
   * top to `key` when rows are added (a video's plays: where its rows begin in the most-played order).
   */
  add(first: number, second: number, third: number, rows: number, key = -Infinity): void {
    if (!this.#kept) return;
    const mask = this.#first.length - 1;
    let place = hashOf(first, second, third) & mask;
    for (; this.#first[place] !== EMPTY; place = (place + 1) & mask) {
      if (this.#first[place] === first && this.#second[place] === second && this.#third[place] === third) {
        this.#rows[place] += rows;
        if (rows > 0 && key > this.#top[place]) this.#top[place] = key;
        return;
      }
    }
    if (this.#used >= this.limit) {
      // Too many to be worth keeping: free the table, answer nothing until the next clear.
      this.#allocate(0);
      this.#kept = false;
      return;
    }
    this.#first[place] = first;
    this.#second[place] = second;
    this.#third[place] = third;
    this.#rows[place] = rows;
    this.#top[place] = rows > 0 ? key : -Infinity;
    if (++this.#used * 2 > this.#first.length) this.#grow();
  }

  /** The rows of every combination `accept` takes; call only while `kept`. */
  count(accept: (first: number, second: number, third: number) => boolean): number {
    let total = 0;
    this.forEach((first, second, third, rows) => {
      if (accept(first, second, third)) total += rows;
    });
    return total;
  }

  /** Calls `visit` with every combination that has rows, its rows and its top; call only while `kept`. */
  forEach(visit: (first: number, second: number, third: number, rows: number, top: number) => void): void {
    if (!this.#kept) throw new Error('the combinations were not kept');
    for (let place = 0; place < this.#first.length; place++) {
      const first = this.#first[place];
      if (first !== EMPTY && this.#rows[place] !== 0) visit(first, this.#second[place], this.#third[place], this.#rows[place], this.#top[place]);
    }
  }

  #allocate(room: number): void {
    this.#first = new Int32Array(room).fill(EMPTY);
    this.#second = new Int32Array(room);
    this.#third = new Int32Array(room);
    this.#rows = new Int32Array(room);
    this.#top = new Float64Array(room);
    this.#used = 0;
  }

  #grow(): void {
    const [first, second, third, rows, top] = [this.#first, this.#second, this.#third, this.#rows, this.#top];
    this.#allocate(first.length * 2);
    for (let place = 0; place < first.length; place++) if (first[place] !== EMPTY) this.add(first[place], second[place], third[place], rows[place], top[place]);
  }
}

function hashOf(first: number, second: number, third: number): number {
  let hash = Math.imul(first, 0x9e3779b1) ^ Math.imul(second + 0x7f4a7c15, 0x85ebca6b) ^ Math.imul(third + 0x165667b1, 0xc2b2ae35);
  hash ^= hash >>> 15;
  return Math.imul(hash, 0x2c1b3c6d) >>> 0;
}

import { hashOf } from '../primitives/row-table.js';

// One search thread serves one search at a time, and at ten million rows a filtered search is
// 6–23 ms of it (docs/performance.md): the thread was the limit while the machine's other core
// sat idle. So the index can be split into partitions, each in a thread of its own holding the
// creators, videos and live streams whose id hashes to it (and every channel: the video filters
// read them). A search asks every partition and merges their answers (./partitioned.ts).

export interface Partition {
  /** This partition's number, 0 … count − 1. */
  index: number;
  count: number;
  /** Whether the row of this id (a creator's user id, a video's id, a live stream's id) is this partition's. */
  holds(id: string): boolean;
}

export function partition(index: number, count: number): Partition {
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(index) || index < 0 || index >= count) {
    throw new RangeError(`no partition ${index} of ${count}`);
  }
  return { index, count, holds: count === 1 ? () => true : (id) => hashOf(id) % count === index };
}

/** The whole index in one partition. */
export const WHOLE = partition(0, 1);

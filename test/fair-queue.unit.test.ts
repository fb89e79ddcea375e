import { describe, expect, it } from 'vitest';
import { FairQueue } from '../src/search/runtime/fair-queue.js';

// The index thread's line (src/search/runtime/fair-queue.ts): the next search is the first of the
// caller that has had the least of the thread's time.

/** Runs every job waiting, each costing what `cost` says, and returns them in the order run. */
function drain(queue: FairQueue<string>, cost: (job: string) => number): string[] {
  const order: string[] = [];
  for (let next = queue.next(); next; next = queue.next()) {
    order.push(next.job);
    queue.charge(next.caller, cost(next.job));
  }
  return order;
}

describe('FairQueue', () => {
  it('keeps one caller in its own order, as a plain line would', () => {
    const queue = new FairQueue<string>();
    for (const job of ['a1', 'a2', 'a3']) queue.push(job, 'a');
    expect(queue.size).toBe(3);
    expect(drain(queue, () => 5)).toEqual(['a1', 'a2', 'a3']);
    expect(queue.size).toBe(0);
  });

  it('serves a caller who arrives behind a burst next, not after the burst', () => {
    const queue = new FairQueue<string>();
    for (let i = 1; i <= 16; i++) queue.push(`heavy${i}`, 'a');
    queue.push('cheap1', 'b');
    queue.push('cheap2', 'b');
    const order = drain(queue, (job) => (job.startsWith('heavy') ? 140 : 3));
    // heavy1 is charged first (ties go to the first in line); then b has had less.
    expect(order.slice(0, 3)).toEqual(['heavy1', 'cheap1', 'cheap2']);
    expect(order.filter((job) => job.startsWith('heavy'))).toEqual(Array.from({ length: 16 }, (_, i) => `heavy${i + 1}`));
  });

  it('shares the time, not the turns: a cheap caller runs many searches for one heavy one', () => {
    const queue = new FairQueue<string>();
    for (let i = 0; i < 10; i++) queue.push(`heavy${i}`, 'a');
    for (let i = 0; i < 100; i++) queue.push(`cheap${i}`, 'b');
    const order = drain(queue, (job) => (job.startsWith('heavy') ? 50 : 1));
    // While both wait, b runs about fifty searches for each of a's.
    const firstHeavies = order.slice(0, 60).filter((job) => job.startsWith('heavy')).length;
    expect(firstHeavies).toBeGreaterThanOrEqual(1);
    expect(firstHeavies).toBeLessThanOrEqual(3);
  });

  it('lets no caller bank idle time: one back after a pause starts level with those waiting', () => {
    const queue = new FairQueue<string>();
    queue.push('b0', 'b');
    drain(queue, () => 1);
    // a runs alone for a long while; b was idle meanwhile.
    for (let i = 0; i < 50; i++) queue.push(`a${i}`, 'a');
    for (let i = 0; i < 40; i++) {
      const next = queue.next()!;
      queue.charge(next.caller, 10);
    }
    for (let i = 0; i < 5; i++) queue.push(`b${i + 1}`, 'b');
    // b may not now run 400 ms of work before a runs again: they alternate.
    const order = drain(queue, () => 10);
    expect(order.slice(0, 6)).toEqual(['b1', 'a40', 'b2', 'a41', 'b3', 'a42']);
  });

  it('forgets callers gone quiet, so what it keeps stays the size of the callers active', () => {
    const queue = new FairQueue<string>();
    for (let i = 0; i < 10_000; i++) {
      queue.push(`busy${i}`, 'busy');
      queue.push(`job${i}`, `account${i}`);
      for (let next = queue.next(); next; next = queue.next()) queue.charge(next.caller, next.caller === 'busy' ? 2 : 1);
    }
    expect(queue.callersKept).toBeLessThanOrEqual(130);
    // A caller forgotten comes back level: it is served next, then the busy one.
    queue.push('busy-last', 'busy');
    queue.push('late', 'account0');
    expect(drain(queue, () => 1)).toEqual(['late', 'busy-last']);
  });
});

import { describe, expect, it } from 'vitest';
import { SingleFlight } from '../../src/upstreams/single-flight.js';

describe('SingleFlight', () => {
  it('runs a task again once the previous call with its key has settled', async () => {
    const flight = new SingleFlight<number>();
    let runs = 0;
    const task = async () => ++runs;
    expect(await Promise.all([flight.run('k', task), flight.run('k', task)])).toEqual([1, 1]);
    expect(flight.size).toBe(0);
    expect(await flight.run('k', task)).toBe(2);
  });

  it('shares a synchronous throw as a rejection and forgets the key', async () => {
    const flight = new SingleFlight<number>();
    const task = (): Promise<number> => {
      throw new Error('boom');
    };
    await expect(Promise.all([flight.run('k', task), flight.run('k', task)])).rejects.toThrow('boom');
    expect(flight.size).toBe(0);
  });
});

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

  it('lets a caller leave at once, and aborts the shared work only when the last caller has left', async () => {
    const flight = new SingleFlight<number>();
    let workSignal: AbortSignal | undefined;
    const task = (signal: AbortSignal) =>
      new Promise<number>((_, reject) => {
        workSignal = signal;
        signal.addEventListener('abort', () => reject(signal.reason));
      });
    const [first, second] = [new AbortController(), new AbortController()];
    const firstCall = flight.run('k', task, first.signal);
    const secondCall = flight.run('k', task, second.signal);
    first.abort(new Error('first left'));
    await expect(firstCall).rejects.toThrow('first left');
    expect(workSignal!.aborted).toBe(false);
    // A caller joining now shares the same work, and so does one without a signal.
    const third = new AbortController();
    const thirdCall = flight.run('k', task, third.signal);
    second.abort(new Error('second left'));
    await expect(secondCall).rejects.toThrow('second left');
    expect(workSignal!.aborted).toBe(false);
    third.abort(new Error('third left'));
    await expect(thirdCall).rejects.toThrow('third left');
    expect(workSignal!.aborted).toBe(true);
    expect(flight.size).toBe(0);
  });

  it('starts anew for a caller arriving after everyone left an aborted call', async () => {
    const flight = new SingleFlight<number>();
    let runs = 0;
    const task = (signal: AbortSignal) =>
      new Promise<number>((resolve, reject) => {
        const run = ++runs;
        signal.addEventListener('abort', () => setTimeout(() => reject(signal.reason), 50));
        if (run === 2) resolve(run);
      });
    const gone = new AbortController();
    const left = flight.run('k', task, gone.signal);
    gone.abort();
    await expect(left).rejects.toThrow();
    // The first call is still winding down; a new caller must not inherit its abort.
    expect(await flight.run('k', task, new AbortController().signal)).toBe(2);
  });

  it('never aborts work a caller without a signal waits for', async () => {
    const flight = new SingleFlight<number>();
    let workSignal: AbortSignal | undefined;
    let finish: (value: number) => void = () => {};
    const task = (signal: AbortSignal) =>
      new Promise<number>((resolve) => {
        workSignal = signal;
        finish = resolve;
      });
    const patient = flight.run('k', task);
    const gone = new AbortController();
    const leaving = flight.run('k', task, gone.signal);
    gone.abort();
    await expect(leaving).rejects.toThrow();
    expect(workSignal!.aborted).toBe(false);
    finish(7);
    expect(await patient).toBe(7);
  });
});

// Waits that a caller may stop: the work itself runs on (others may still want it, or it cannot
// be stopped), only this caller's wait ends.

/**
 * `work`'s outcome, or `aborted()`'s as soon as `signal` aborts (at once if it already has):
 * its value, or the error it throws.
 */
export function untilAborted<T, A>(work: Promise<T>, signal: AbortSignal, aborted: () => A): Promise<T | A> {
  if (signal.aborted) {
    work.catch(() => {});
    return new Promise<A>((resolve) => resolve(aborted()));
  }
  return new Promise<T | A>((resolve, reject) => {
    const onAbort = () => {
      try {
        resolve(aborted());
      } catch (error) {
        reject(error);
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

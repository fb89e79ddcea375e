/**
 * Collapses concurrent calls with the same key into one execution: every caller awaits the same
 * promise, so they all receive the very same result object (treat it as read-only) or error.
 * The key is forgotten as soon as the call settles; nothing is cached.
 */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Promise<T>>();

  run(key: string, task: () => Promise<T>): Promise<T> {
    const shared = this.#inFlight.get(key);
    if (shared) return shared;
    // new Promise turns a synchronous throw from task into a rejection shared like any other.
    const call = new Promise<T>((resolve) => resolve(task())).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, call);
    return call;
  }

  get size(): number {
    return this.#inFlight.size;
  }
}

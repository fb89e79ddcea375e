interface Flight<T> {
  call: Promise<T>;
  /** Aborts the shared work: only once no caller waits for it. */
  controller: AbortController;
  /** Callers still waiting; one without a signal waits to the end. */
  waiting: number;
}

/**
 * Collapses concurrent calls with the same key into one execution: every caller awaits the same
 * promise, so they all receive the very same result object (treat it as read-only) or error.
 * The key is forgotten as soon as the call settles; nothing is cached.
 *
 * A caller whose signal aborts stops waiting at once (rejected with the signal's reason); the
 * shared work is aborted only when the last caller has left, so one caller leaving never cuts off
 * the others. A call aborted that way is forgotten at once: a caller arriving after it starts anew.
 */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Flight<T>>();

  run(key: string, task: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const flight = this.#inFlight.get(key) ?? this.#start(key, task);
    return this.#join(key, flight, signal);
  }

  get size(): number {
    return this.#inFlight.size;
  }

  #start(key: string, task: (signal: AbortSignal) => Promise<T>): Flight<T> {
    const controller = new AbortController();
    // new Promise turns a synchronous throw from task into a rejection shared like any other.
    const run = new Promise<T>((resolve) => resolve(task(controller.signal)));
    const flight: Flight<T> = { call: run.finally(() => this.#forget(key, flight)), controller, waiting: 0 };
    this.#inFlight.set(key, flight);
    return flight;
  }

  #join(key: string, flight: Flight<T>, signal: AbortSignal | undefined): Promise<T> {
    flight.waiting += 1;
    if (!signal) return flight.call;
    return new Promise<T>((resolve, reject) => {
      const leave = () => {
        reject(signal.reason);
        flight.waiting -= 1;
        if (flight.waiting > 0) return;
        this.#forget(key, flight);
        flight.controller.abort(signal.reason);
      };
      signal.addEventListener('abort', leave, { once: true });
      // The listener goes with the call: a long-lived signal must not keep every call it joined.
      flight.call.then(resolve, reject).finally(() => signal.removeEventListener('abort', leave));
    });
  }

  #forget(key: string, flight: Flight<T>): void {
    if (this.#inFlight.get(key) === flight) this.#inFlight.delete(key);
  }
}

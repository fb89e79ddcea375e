// The work of the requests in flight, so the end of a shutdown grace can stop it all. A request's
// work signal aborts when its client goes away or when the server gives up waiting for it.
//
// Not AbortSignal.any([request.signal, shutdownSignal]): on Node 20 every such call leaves ~1 KB
// behind on the long-lived shutdown signal (a leak of a few MB a minute under load).
import { setMaxListeners } from 'node:events';

export interface InFlightWork {
  /** The request's work signal (the same one for every call with the same request). */
  signal(request: Request): AbortSignal;
  /** The request has been answered: nothing to stop any more. */
  end(request: Request): void;
  /** Aborts the work of every request still running. */
  abortAll(): void;
  /** Requests whose work is still registered (to see that it stays bounded). */
  readonly size: number;
}

export function createInFlightWork(): InFlightWork {
  const controllers = new Map<Request, AbortController>();
  let stopping = false;
  const end = (request: Request) => void controllers.delete(request);
  return {
    signal(request) {
      let controller = controllers.get(request);
      if (!controller) {
        controller = new AbortController();
        // Each of the request's statements waiting for a connection, and each of its lookups
        // waiting for a shared statement, listens on it: a document of many roots has more than 10.
        setMaxListeners(0, controller.signal);
        if (stopping || request.signal.aborted) controller.abort();
        else {
          const work = controller;
          controllers.set(request, work);
          request.signal.addEventListener(
            'abort',
            () => {
              work.abort();
              end(request);
            },
            { once: true },
          );
        }
      }
      return controller.signal;
    },
    end,
    abortAll() {
      stopping = true;
      for (const controller of controllers.values()) controller.abort();
    },
    get size() {
      return controllers.size;
    },
  };
}

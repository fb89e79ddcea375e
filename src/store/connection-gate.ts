// Who gets a pool's next connection. One account's heavy operations (32 connections of ten-root
// documents in the probe) took every connection: hence a share per account. Several heavy accounts,
// each within its share, still filled the pool, and pg-pool's first-come line put a light account's
// one statement behind all of theirs (seconds, or the connect timeout's 503): hence the order.

export class RequestAbortedError extends Error {
  override readonly name = 'AbortError';
}

export const abortError = (signal: AbortSignal) => new RequestAbortedError('the request was aborted', { cause: signal.reason });

/**
 * All but a fifth of the pool (8 of 10): the rest stays free for other accounts. Half the pool cost
 * a lone account's DB-bound work a tenth of its rate (`nodes`, 100 ids: 0.92× in `npm run
 * bench:compare`), with nobody else waiting.
 */
export const tenantShare = (poolSize: number) => Math.max(1, poolSize - Math.ceil(poolSize / 5));

interface Waiter {
  /** Arrival order: ties between tenants go to the one waiting longest. */
  seq: number;
  give(): void;
}

/**
 * Every connection of one pool is checked out through its gate, which holds at most the pool's
 * size, so pg-pool never queues and the gate decides the order. A tenant (account) holds at most
 * `perTenant` at once; when one frees, it goes to the waiting tenant holding the fewest (ties: the
 * one waiting longest), so a light account waits for one statement, not for the heavy ones' queue.
 * Work with no tenant (key lookups, quota charges, system work) goes before every tenant: it is
 * short and bounded by the requests admitted, and each request's key check precedes its tenant's
 * statements, so queued behind tenants it would put the light account behind the heavy ones again.
 */
export class ConnectionGate {
  #free: number;
  readonly #held = new Map<string, number>();
  readonly #tenants = new Map<string, Waiter[]>();
  readonly #system: Waiter[] = [];
  #seq = 0;

  constructor(
    size: number,
    private readonly perTenant: number,
    private readonly timeoutMs: number,
  ) {
    this.#free = size;
  }

  /** Statements waiting for a connection. */
  get waiting(): number {
    let count = this.#system.length;
    for (const queue of this.#tenants.values()) count += queue.length;
    return count;
  }

  /**
   * Waits for a connection slot of `tenant` (within the connect timeout, and until `signal`
   * aborts) and answers how to give it back, once.
   */
  async enter(tenant: string | undefined, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw abortError(signal);
    if (this.#free > 0 && this.#mayHold(tenant)) this.#take(tenant);
    else await this.#wait(tenant, signal);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#free++;
      if (tenant !== undefined) {
        const held = this.#held.get(tenant)! - 1;
        if (held > 0) this.#held.set(tenant, held);
        else this.#held.delete(tenant);
      }
      this.#grant();
    };
  }

  #mayHold(tenant: string | undefined): boolean {
    return tenant === undefined || (this.#held.get(tenant) ?? 0) < this.perTenant;
  }

  #take(tenant: string | undefined): void {
    this.#free--;
    if (tenant !== undefined) this.#held.set(tenant, (this.#held.get(tenant) ?? 0) + 1);
  }

  #wait(tenant: string | undefined, signal: AbortSignal | undefined): Promise<void> {
    let queue = tenant === undefined ? this.#system : this.#tenants.get(tenant);
    if (!queue) this.#tenants.set(tenant!, (queue = []));
    const line = queue;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        seq: this.#seq++,
        give: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const drop = (error: Error) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        line.splice(line.indexOf(waiter), 1);
        if (line.length === 0 && tenant !== undefined) this.#tenants.delete(tenant);
        reject(error);
      };
      // The message pg-pool gives the same wait: read as an unavailable database (503), as theirs is.
      const timer = setTimeout(() => drop(new Error('timeout exceeded when trying to connect')), this.timeoutMs);
      const onAbort = () => drop(abortError(signal!));
      signal?.addEventListener('abort', onAbort, { once: true });
      line.push(waiter);
    });
  }

  /** Free slots go to work without a tenant first, then to the tenant holding the fewest. */
  #grant(): void {
    while (this.#free > 0) {
      let tenant: string | undefined;
      let queue: Waiter[] | undefined = this.#system.length > 0 ? this.#system : undefined;
      if (!queue) {
        let fewest = Infinity;
        for (const [candidate, line] of this.#tenants) {
          const held = this.#held.get(candidate) ?? 0;
          if (held >= this.perTenant || held > fewest || (held === fewest && line[0]!.seq > queue![0]!.seq)) continue;
          [tenant, queue, fewest] = [candidate, line, held];
        }
      }
      if (!queue) return;
      const waiter = queue.shift()!;
      if (queue.length === 0 && tenant !== undefined) this.#tenants.delete(tenant);
      this.#take(tenant);
      waiter.give();
    }
  }
}

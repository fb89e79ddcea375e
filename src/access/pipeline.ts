import { ApiError } from '../domain/errors.js';
import { type EndpointId, endpoints } from './endpoints.js';

// The one request pipeline, for REST and GraphQL alike (docs/contract/decisions.md §4):
//   route (404) → identify the key (401) → rate and in-flight limits (429) → validate (400)
//   → plan, subscription, quota reserved (403) → the work → charge on success, refund on failure.
// Routing and validation belong to the two front doors (src/rest, src/schema); every other step
// is here, behind AccessService.

export interface Caller {
  keyId: string;
  accountId: string;
  planId: string;
  /** The endpoint ids the plan covers. */
  endpoints: string[];
  ratePerSecond: number;
  burst: number;
  maxInFlight: number;
  subscriptionEndsAt: Date | null;
}

export interface Reservation {
  /** Units left on the account once this reservation holds. */
  remaining: number;
  /** The units reserved. */
  units: number;
  /** Whether refund() has given them back. */
  readonly refunded: boolean;
  /** Gives the units back. Never throws: a refund the database cannot take now is retried later. */
  refund(): Promise<void>;
  /** The call succeeded: the units stay charged, and no longer count as held (src/access/holds.ts). */
  keep(): void;
}

/** Who reserves: one request (its units held count for the others' waits) and its end. */
export interface ReservingRequest {
  holder?: object;
  signal?: AbortSignal;
}

export interface AccessService {
  /** The caller behind an `Authorization` header, or ApiError UNAUTHENTICATED. */
  identify(authorization: string | null): Promise<Caller>;
  /**
   * Forgets what it knows of one key (by the base64 of its hash, as key changes are announced) or,
   * without one, of every key: after a key changed (rotate, disable, enable, delete).
   */
  forgetKeys(keyHash?: string): void;
  /** Takes a rate token and an in-flight slot, or ApiError RATE_LIMITED; returns the release. */
  admit(caller: Caller): Promise<() => Promise<void>>;
  /**
   * Checks plan and subscription and reserves the cost atomically, or ApiError FORBIDDEN/QUOTA_EXHAUSTED;
   * refused for quota while other requests hold units that may come back, it waits for them first.
   */
  reserve(caller: Caller, endpoint: EndpointId, cost: number, by?: ReservingRequest): Promise<Reservation>;
  /** The plan check alone: FORBIDDEN unless the plan names every one of `endpoints` and the subscription runs. */
  checkPlan(caller: Caller, endpoints: readonly EndpointId[]): void;
  /**
   * What reserve() would check, reserving nothing (a GraphQL dry run): the plan names every one of
   * `endpoints`, the subscription runs, and `units` are left; the units left, or the ApiError.
   */
  quote(caller: Caller, endpoints: readonly EndpointId[], units: number): Promise<number>;
  /** Units left, for X-Quota-Remaining when nothing was charged. */
  remaining(caller: Caller): Promise<number>;
  /** Units of the account this process holds in a lease and has not sold (counted as used in the database). */
  unsold(accountId: string): number;
  /** Units whose refund is still waiting for the database (they are retried until it takes them). */
  pendingRefunds(): number;
  /** Tries the waiting refunds once more, for a clean shutdown. */
  close(): Promise<void>;
}

/**
 * One request's way through the pipeline. The request's AbortSignal ends it early: a client that
 * has gone away (its timeout fired, it was cancelled, its process stopped) frees its in-flight
 * slot at once and pays nothing, even for a result computed just before it left.
 */
export class RequestAccess {
  caller: Caller | null = null;
  private release: (() => Promise<void>) | null = null;
  private readonly reservations: { root: string; endpoint: EndpointId; reservation: Reservation }[] = [];
  private lastRemaining: number | null = null;
  private abandoned = false;
  /** Each root field's share of the operation's price, once a GraphQL door has priced it. */
  private shares: ReadonlyMap<string, number> | null = null;
  #dryRun = false;

  constructor(
    private readonly service: AccessService,
    readonly authorization: string | null,
    readonly signal?: AbortSignal,
  ) {
    signal?.addEventListener('abort', () => void this.abandon(), { once: true });
  }

  /** Steps 2 and 3: who is calling, and may they call now. */
  async enter(): Promise<Caller> {
    const caller = await this.service.identify(this.authorization);
    this.caller = caller;
    this.release = await this.service.admit(caller);
    // The client left while we waited for the limiter: give the slot back at once.
    if (this.abandoned) await this.releaseSlot();
    return caller;
  }

  /**
   * The price of each root field, by response key (src/schema/price.ts): what reserve() takes for
   * that root instead of the endpoint's own cost. REST routes never set it: they cost their endpoint.
   */
  setShares(shares: ReadonlyMap<string, number>): void {
    this.shares = shares;
  }

  /**
   * Step 5, once per metered root field: `root` names the field (its response key) so its errors
   * can refund it. It reserves the root's share of the operation's price when one was set (its
   * nested connections and facets included), else the endpoint's cost; `endpoint` is what the
   * plan must name either way.
   */
  async reserve(endpoint: EndpointId, root: string): Promise<void> {
    if (!this.caller) throw new ApiError('UNAUTHENTICATED', 'Unauthorized');
    if (this.abandoned) throw new RequestAbandonedError();
    if (this.#dryRun) {
      this.service.checkPlan(this.caller, [endpoint]);
      throw new DryRunReached();
    }
    const units = this.shares?.get(root) ?? endpoints[endpoint].cost;
    const reservation = await this.service.reserve(this.caller, endpoint, units, { holder: this, signal: this.signal });
    this.reservations.push({ root, endpoint, reservation });
    // Root fields reserve concurrently and their answers may come back in any order: the lowest
    // figure is the one taken after all the others this request has seen.
    this.lastRemaining = Math.min(this.lastRemaining ?? Infinity, reservation.remaining);
    if (this.abandoned) await this.refundAll();
  }

  /**
   * Step 5's plan check for data a field reaches that another endpoint sells (the photo platform's
   * posts and authors, looked up by global id): 403 unless the plan covers that endpoint too.
   */
  requirePlan(endpoint: EndpointId): void {
    if (!this.caller) throw new ApiError('UNAUTHENTICATED', 'Unauthorized');
    this.service.checkPlan(this.caller, [endpoint]);
  }

  /**
   * Step 7: keeps the charge of every root field that succeeded and refunds the others, then frees
   * the in-flight slot, whatever happens to the refunds. Safe to call more than once.
   */
  async settle(failedRoots: ReadonlySet<string> | 'all'): Promise<void> {
    try {
      for (const { root, reservation } of this.reservations) {
        if (failedRoots === 'all' || failedRoots.has(root)) {
          await reservation.refund();
          this.lastRemaining = null;
        } else reservation.keep();
      }
    } finally {
      await this.releaseSlot();
    }
  }

  /** The client went away: nothing it asked for is charged, and its slot is free for its next call. */
  async abandon(): Promise<void> {
    this.abandoned = true;
    try {
      await this.refundAll();
    } finally {
      await this.releaseSlot();
    }
  }

  /** Units kept per endpoint: what this request was charged. */
  charged(): { endpoint: EndpointId; units: number }[] {
    return this.reservations.filter(({ reservation }) => !reservation.refunded).map(({ endpoint, reservation }) => ({ endpoint, units: reservation.units }));
  }

  /** Units charged in all: X-Quota-Cost. */
  chargedUnits(): number {
    return this.charged().reduce((sum, { units }) => sum + units, 0);
  }

  /**
   * A dry run from here on: reserve() checks the plan and then stops the work with DryRunReached,
   * so a resolver runs its validation (400) and plan check (403) and nothing after them.
   */
  startDryRun(): void {
    this.#dryRun = true;
  }

  /** A dry run: the units left if `units` could be paid now under `endpoints`, else the ApiError reserve() would throw. */
  async quote(endpoints: readonly EndpointId[], units: number): Promise<number> {
    if (!this.caller) throw new ApiError('UNAUTHENTICATED', 'Unauthorized');
    return (this.lastRemaining = await this.service.quote(this.caller, endpoints, units));
  }

  /** X-Quota-Remaining for an identified caller (read once, then known until a refund changes it). */
  async quotaRemaining(): Promise<number | null> {
    if (!this.caller) return null;
    return (this.lastRemaining ??= await this.service.remaining(this.caller));
  }

  private async refundAll(): Promise<void> {
    // Reservation.refund is idempotent: one already refunded by settle is not refunded twice.
    for (const { reservation } of this.reservations) await reservation.refund();
    this.lastRemaining = null;
  }

  private async releaseSlot(): Promise<void> {
    const release = this.release;
    this.release = null;
    await release?.();
  }
}

// The RequestAccess of a request, for what is decided after the response is made (headers, logs).
const accessByRequest = new WeakMap<Request, RequestAccess>();
export const attachAccess = (request: Request, access: RequestAccess): void => void accessByRequest.set(request, access);
export const accessOf = (request: Request): RequestAccess | undefined => accessByRequest.get(request);

/** Where a dry run stops a metered field: at its charge, after its validation and plan check. */
export class DryRunReached extends Error {
  override readonly name = 'DryRunReached';
  constructor() {
    super('a dry run stops before the charge');
  }
}

/** Thrown into work that tries to go on after its client left; nobody reads the answer. */
export class RequestAbandonedError extends Error {
  override readonly name = 'AbortError';
  constructor() {
    super('the client closed the request');
  }
}

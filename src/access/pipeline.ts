import { ApiError } from '../errors.js';
import { endpoints, type EndpointId } from './endpoints.js';

// The one request pipeline, for REST and GraphQL alike (decisions.md §4):
//   route (404) → identify the key (401) → rate and in-flight limits (429) → validate (400)
//   → plan, subscription, quota reserved (403) → the work → charge on success, refund on failure.
// Routing and validation belong to the two front doors (src/rest, src/schema); every other step
// is here, behind AccessService.

export interface Caller {
  keyId: string;
  accountId: string;
  planId: string;
  ratePerSecond: number;
  burst: number;
  maxInFlight: number;
}

export interface Reservation {
  /** Units left on the account once this reservation holds. */
  remaining: number;
  refund(): Promise<void>;
}

export interface AccessService {
  /** The caller behind an `Authorization` header, or ApiError UNAUTHENTICATED. */
  identify(authorization: string | null): Promise<Caller>;
  /** Takes a rate token and an in-flight slot, or ApiError RATE_LIMITED; returns the release. */
  admit(caller: Caller): Promise<() => Promise<void>>;
  /** Checks plan and subscription and reserves the cost atomically, or ApiError FORBIDDEN/QUOTA_EXHAUSTED. */
  reserve(caller: Caller, endpoint: EndpointId, cost: number): Promise<Reservation>;
  /** Units left, for X-Quota-Remaining when nothing was charged. */
  remaining(caller: Caller): Promise<number>;
}

export class RequestAccess {
  caller: Caller | null = null;
  private release: (() => Promise<void>) | null = null;
  private readonly reservations: { root: string; reservation: Reservation }[] = [];
  private lastRemaining: number | null = null;

  constructor(
    private readonly service: AccessService,
    readonly authorization: string | null,
  ) {}

  /** Steps 2 and 3: who is calling, and may they call now. */
  async enter(): Promise<Caller> {
    const caller = await this.service.identify(this.authorization);
    this.caller = caller;
    this.release = await this.service.admit(caller);
    return caller;
  }

  /** Step 5, once per metered root field: `root` names the field so its errors can refund it. */
  async reserve(endpoint: EndpointId, root: string): Promise<void> {
    if (!this.caller) throw new ApiError('UNAUTHENTICATED', 'Unauthorized');
    const reservation = await this.service.reserve(this.caller, endpoint, endpoints[endpoint].cost);
    this.reservations.push({ root, reservation });
    this.lastRemaining = reservation.remaining;
  }

  /**
   * Step 7: keeps the charge of every root field that succeeded and refunds the others, then frees
   * the in-flight slot. Safe to call more than once.
   */
  async settle(failedRoots: ReadonlySet<string> | 'all'): Promise<void> {
    const pending = this.reservations.splice(0);
    for (const { root, reservation } of pending) {
      if (failedRoots === 'all' || failedRoots.has(root)) {
        await reservation.refund();
        this.lastRemaining = null;
      }
    }
    const release = this.release;
    this.release = null;
    await release?.();
  }

  /** X-Quota-Remaining for an identified caller. */
  async quotaRemaining(): Promise<number | null> {
    if (!this.caller) return null;
    return this.lastRemaining ?? this.service.remaining(this.caller);
  }
}

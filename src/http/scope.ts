import { randomUUID } from 'node:crypto';
import { RequestAccess } from '../access/pipeline.js';
import type { ErrorReport } from '../domain/errors.js';
import { errorReport } from '../observability/log.js';
import type { Services } from '../services.js';
import type { CancellableDatabases } from '../store/connect.js';
import { readBodyText } from './body.js';
import { routeOf, type Telemetry } from './telemetry.js';

/**
 * One request's way through the service, whichever door it takes: its id and route label, its
 * key and limits, quota reservations and their settlement (RequestAccess), its body read with the
 * byte limit, and the cancellation of its work when the client leaves or the shutdown grace ends.
 * The front door (server.ts) opens one per request and finishes it with the response; the REST
 * and GraphQL doors only call enter(), run() and settle() on it.
 */
export class RequestScope {
  readonly access: RequestAccess;
  /** Aborts when the client goes away or the server stops waiting: running statements are cancelled. */
  readonly signal: AbortSignal;
  readonly #telemetry: Telemetry;
  #databases: CancellableDatabases | null = null;

  constructor(
    private readonly services: Services,
    readonly request: Request,
    readonly url: URL,
  ) {
    this.signal = services.work.signal(request);
    this.access = new RequestAccess(services.access, request.headers.get('authorization'), this.signal);
    this.#telemetry = { id: requestId(request), at: performance.now(), route: routeOf(url, request.method) };
  }

  get id(): string {
    return this.#telemetry.id;
  }

  /** Where this request's unexpected errors are logged, with its id. */
  get errors(): ErrorReport {
    return errorReport(this.services.log, this.#telemetry.id);
  }

  /** Pipeline steps 2-3: the key (401), then rate and in-flight limits (429). */
  enter(): Promise<unknown> {
    return this.access.enter();
  }

  /** The body as text within MAX_BODY_BYTES, or null when it is larger. */
  async readBody(): Promise<string | null> {
    try {
      return await readBodyText(this.request, this.services.config.maxBodyBytes);
    } catch (error) {
      // A body cut short by a client that left ends like any work whose client left: its socket's
      // ECONNRESET would otherwise read as a database outage.
      if (this.signal.aborted) throw this.signal.reason;
      throw error;
    }
  }

  /** The databases as this request's work uses them: its statements are cancelled on the server if the client leaves. */
  get databases(): CancellableDatabases {
    return (this.#databases ??= this.services.store.cancellable(this.signal, () => this.access.caller?.accountId));
  }

  /** Pipeline step 7: keeps the charges of the root fields that succeeded, refunds the rest, frees the slot. */
  settle(failedRoots: ReadonlySet<string> | 'all'): Promise<void> {
    return this.access.settle(failedRoots);
  }

  /** The response as sent: request id and quota headers, one log line and the metrics. */
  async finish(response: Response): Promise<Response> {
    this.services.work.end(this.request);
    this.#databases?.close();
    const { services, access } = this;
    const seconds = (performance.now() - this.#telemetry.at) / 1000;
    response.headers.set('x-request-id', this.#telemetry.id);
    if (access.caller) {
      // The units this request was charged, REST and GraphQL alike (0 when nothing succeeded).
      response.headers.set('x-quota-cost', String(access.chargedUnits()));
      // The database may have gone away after the work: the answer stands without the header.
      const remaining = await access.quotaRemaining().catch(() => null);
      if (remaining !== null) response.headers.set('x-quota-remaining', String(remaining));
    }
    const route = this.#telemetry.route;
    // A client that left is sent nothing: its 503 would count as our failure. nginx's 499 says who left.
    const status = this.request.signal.aborted ? CLIENT_CLOSED_REQUEST : response.status;
    services.metrics.request(route, status, seconds);
    if (route === 'healthz' || route === 'readyz' || route === 'metrics') return response;
    const charged = access.charged();
    for (const { endpoint, units } of charged) services.metrics.charged(endpoint, units);
    services.log.info('request', {
      requestId: this.#telemetry.id,
      method: this.request.method,
      route,
      status,
      durationMs: Math.round(seconds * 10_000) / 10,
      accountId: access.caller?.accountId,
      units: access.chargedUnits(),
    });
    return response;
  }
}

/** The status logged and counted for a request whose client went away before its answer (nginx's "client closed request"). */
const CLIENT_CLOSED_REQUEST = 499;

/** What the front door hands yoga with each request. */
export interface ScopeContext {
  scope: RequestScope;
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The caller's own X-Request-Id when it is sane, else a new one; echoed back either way. */
function requestId(request: Request): string {
  const given = request.headers.get('x-request-id');
  return given && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

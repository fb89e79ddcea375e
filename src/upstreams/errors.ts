export type UpstreamName = 'instagram' | 'twitch';

/** The upstream answered 404: the account does not exist or is not public. */
export class UpstreamNotFoundError extends Error {
  override readonly name = 'UpstreamNotFoundError';

  constructor(readonly upstream: UpstreamName) {
    super(`${upstream} upstream has no such resource`);
  }
}

export type UnavailableReason =
  | 'timeout'
  | 'network'
  | 'status'
  /** The upstream refused the request itself (a 4xx other than 404 and 429): not a sign of an outage. */
  | 'rejected'
  | 'malformed'
  | 'rate-limited'
  | 'circuit-open'
  | 'recent-failure';

/**
 * The upstream could not give a usable answer; retrying later may succeed.
 * Messages name the upstream and the reason only, never a URL or a credential, so they are safe to log.
 */
export class UpstreamUnavailableError extends Error {
  override readonly name = 'UpstreamUnavailableError';

  constructor(
    readonly upstream: UpstreamName,
    readonly reason: UnavailableReason,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${upstream} upstream unavailable (${reason}): ${detail}`, options);
  }
}

/**
 * Whoever waited for the call stopped waiting (its client left, the server is stopping), so it was
 * cut off: it says nothing about the upstream. Named AbortError, as work ended that way is (a 503).
 */
export class UpstreamCallCancelledError extends Error {
  override readonly name = 'AbortError';

  constructor(
    readonly upstream: UpstreamName,
    options?: { cause?: unknown },
  ) {
    super(`${upstream} upstream call cancelled by its caller`, options);
  }
}

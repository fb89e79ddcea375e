import { z } from 'zod';
import type { FetchedMedia } from '../../domain/records.js';
import { type BreakerState, CircuitBreaker, type CircuitBreakerOptions } from '../circuit-breaker.js';
import { UpstreamNotFoundError, UpstreamUnavailableError } from '../errors.js';
import { createUpstreamHttp, parseUpstreamBody, type UpstreamHttp } from '../http.js';
import { SingleFlight } from '../single-flight.js';

/** One post as the service stores and answers it (store/medias.ts). */
export type MediaItem = FetchedMedia;

export interface MediaAuthor {
  userId: string;
  username: string;
  nickname: string;
}

export interface UserMediaPage {
  more: boolean;
  /** The platform's cursor for the next page (its next_max_id); "" when more is false. */
  offset: string;
  /** Newest first. Shared between concurrent identical calls: do not mutate. */
  medias: readonly MediaItem[];
  /** The account as its own posts show it; null when no post of this page is its own. */
  author: MediaAuthor | null;
}

export interface InstagramClientOptions {
  baseUrl: string;
  timeoutMs?: number;
  breaker?: Omit<CircuitBreakerOptions, 'isFailure'>;
  /** The connections to use; by default the client's own, closed by close(). */
  http?: UpstreamHttp;
}

export interface InstagramClient {
  /**
   * One page of the account's feed; `offset` is a page's `offset` (the platform's own cursor).
   * @throws UpstreamNotFoundError when the platform has no such public account, or the id is not all digits
   * @throws UpstreamUnavailableError on a timeout, a network error, a non-404 error status (a 4xx
   *   other than 429 with reason 'rejected'), a malformed body, or while the circuit is open
   * @throws the signal's reason once `signal` aborts; the platform call is cut off when no other
   *   caller of the same page waits for it
   */
  fetchUserMedias(userId: string, offset?: string, signal?: AbortSignal): Promise<UserMediaPage>;
  readonly breakerState: BreakerState;
  /** Accounts failing fast for now (bounded). */
  readonly cachedFailures: number;
  /** Lets in-flight calls finish, then closes the connections. */
  close(): Promise<void>;
}

export function createInstagramClient({ baseUrl, timeoutMs = 10_000, breaker, http = createUpstreamHttp() }: InstagramClientOptions): InstagramClient {
  const feedBase = `${baseUrl.replace(/\/+$/, '')}/api/v1/feed/user/`;
  const circuit = new CircuitBreaker('instagram', {
    ...breaker,
    // A 404 is a healthy upstream answering about a missing account, and a 400 one refusing a
    // request: neither says anything about its health.
    isFailure: (error) => !(error instanceof UpstreamNotFoundError || (error instanceof UpstreamUnavailableError && error.reason === 'rejected')),
  });
  const inFlight = new SingleFlight<UserMediaPage>();

  async function requestPage(userId: string, offset: string, signal: AbortSignal): Promise<UserMediaPage> {
    const query = offset === '' ? '' : `?${new URLSearchParams({ max_id: offset })}`;
    const response = await http.get('instagram', `${feedBase}${userId}/${query}`, { timeoutMs, signal });
    if (response.status === 404) throw new UpstreamNotFoundError('instagram');
    if (response.status === 429) throw new UpstreamUnavailableError('instagram', 'rate-limited', 'answered 429');
    if (response.status >= 400 && response.status < 500) {
      throw new UpstreamUnavailableError('instagram', 'rejected', `answered ${response.status}`);
    }
    if (response.status < 200 || response.status >= 300) {
      throw new UpstreamUnavailableError('instagram', 'status', `answered ${response.status}`);
    }
    const feed = parseUpstreamBody('instagram', quoteLargeIds(response.text), feedSchema);
    return toUserMediaPage(feed, userId, offset);
  }

  return {
    async fetchUserMedias(userId, offset = '', signal) {
      // The platform's account ids are digits; anything else names no account and must not be
      // spliced into the upstream path ("..", say).
      if (!/^\d+$/.test(userId)) throw new UpstreamNotFoundError('instagram');
      // Single flight outside the breaker: a burst of identical calls is one upstream call and,
      // if it fails, one failure. The breaker keys failures by account. The call is cut off only
      // once every caller sharing it has gone.
      return inFlight.run(JSON.stringify([userId, offset]), (shared) => circuit.run(userId, () => requestPage(userId, offset, shared)), signal);
    },
    get breakerState() {
      return circuit.state;
    },
    get cachedFailures() {
      return circuit.cachedFailures;
    },
    close: () => http.close(),
  };
}

// ---- the platform's feed shape ----

/** Ids arrive as digit strings or as JSON numbers; both become strings. */
const idSchema = z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]).transform(String);
const countSchema = z.number().int().nonnegative();
const versionSchema = z.object({
  url: z.string().min(1),
  width: z.number().nonnegative().optional(),
  height: z.number().nonnegative().optional(),
});
const imageVersionsSchema = z.object({ candidates: z.array(versionSchema).min(1) });
const imageFields = { media_type: z.literal(1), image_versions2: imageVersionsSchema };
const videoFields = {
  media_type: z.literal(2),
  image_versions2: imageVersionsSchema,
  video_versions: z.array(versionSchema).min(1),
  video_duration: z.number().nonnegative(),
};
const carouselChildSchema = z.discriminatedUnion('media_type', [z.object(imageFields), z.object(videoFields)]);
const postFields = {
  pk: idSchema,
  code: z.string().min(1),
  taken_at: z.number().int().nonnegative(),
  like_count: countSchema,
  comment_count: countSchema,
  // The platform omits play_count where nothing plays.
  play_count: countSchema.optional(),
  caption: z.object({ text: z.string() }).nullish(),
  accessibility_caption: z.string().nullish(),
  user: z.object({ pk: idSchema, username: z.string().min(1), full_name: z.string().nullish() }),
};
const feedItemSchema = z.discriminatedUnion('media_type', [
  z.object({ ...postFields, ...imageFields }),
  z.object({ ...postFields, ...videoFields }),
  z.object({ ...postFields, media_type: z.literal(8), carousel_media: z.array(carouselChildSchema).min(1) }),
]);
const feedSchema = z.object({
  items: z.array(feedItemSchema),
  more_available: z.boolean(),
  next_max_id: z.union([z.string(), z.number().transform(String)]).nullish(),
});

type FeedItem = z.output<typeof feedItemSchema>;
type Media = z.output<typeof carouselChildSchema>;
type Version = z.output<typeof versionSchema>;

/**
 * Media pks pass 2^53 and JSON.parse would round them silently, so a pk or cursor sent as a bare
 * number is quoted before parsing. The pattern cannot match inside a JSON string, where quotes are escaped.
 */
function quoteLargeIds(json: string): string {
  return json.replace(/("(?:pk|next_max_id)"\s*:\s*)(\d{16,})/g, '$1"$2"');
}

function toUserMediaPage(feed: z.output<typeof feedSchema>, userId: string, sentOffset: string): UserMediaPage {
  const nextOffset = feed.next_max_id ?? '';
  // A cursor that is empty or does not advance would page forever: treat it as the end.
  const more = feed.more_available && nextOffset !== '' && nextOffset !== sentOffset;
  // Pinned posts come first whatever their age; the contract promises newest first.
  const medias = feed.items.map(toMediaItem).sort((a, b) => b.createAt.getTime() - a.createAt.getTime());
  const own = feed.items.find((item) => item.user.pk === userId)?.user;
  return {
    more,
    offset: more ? nextOffset : '',
    medias,
    author: own ? { userId: own.pk, username: own.username, nickname: own.full_name ?? '' } : null,
  };
}

function toMediaItem(item: FeedItem): MediaItem {
  const parts: Media[] = item.media_type === 8 ? item.carousel_media : [item];
  const lead = parts[0];
  const resources = parts.map(mainUrl);
  return {
    authorUserId: item.user.pk,
    authorUsername: item.user.username,
    authorNickname: item.user.full_name ?? '',
    mediaId: item.pk,
    mediaCode: item.code,
    createAt: new Date(item.taken_at * 1000),
    coverUrl: lead.image_versions2.candidates[0].url,
    resources,
    description: item.caption?.text ?? '',
    accessibilityCaption: item.accessibility_caption ?? '',
    mediaUrl: resources[0],
    mediaType: item.media_type,
    // A carousel reports its lead child's duration, the one media_url points at.
    duration: lead.media_type === 2 ? Math.round(lead.video_duration) : 0,
    likeCount: item.like_count,
    commentCount: item.comment_count,
    playCount: item.play_count ?? 0,
  };
}

/** A video plays its largest video version; anything else shows its largest image candidate. */
function mainUrl(media: Media): string {
  return largest(media.media_type === 2 ? media.video_versions : media.image_versions2.candidates).url;
}

/** By area; the first wins a tie, and versions without dimensions count as 0. */
function largest(versions: Version[]): Version {
  const area = (version: Version): number => (version.width ?? 0) * (version.height ?? 0);
  return versions.reduce((best, version) => (area(version) > area(best) ? version : best));
}

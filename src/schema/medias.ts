import { ApiError } from '../domain/errors.js';
import { realtimeMediasArgs } from '../inputs/medias.js';
import type { Services } from '../services.js';
import { writeThroughMedias } from '../store/medias.js';
import { UpstreamNotFoundError, UpstreamUnavailableError } from '../upstreams/errors.js';
import type { MediaItem, UserMediaPage } from '../upstreams/instagram/client.js';
import { builder } from './builder.js';
import type { Context } from './context.js';
import { NodeRef } from './node.js';

export const MediaObject = builder.objectRef<MediaItem>('Media').implement({
  description: 'A post on the photo platform, as fetched at request time',
  interfaces: [NodeRef],
  fields: (t) => ({
    authorUserId: t.exposeString('authorUserId'),
    authorUsername: t.exposeString('authorUsername'),
    authorNickname: t.exposeString('authorNickname', { description: "The author's full name" }),
    mediaId: t.exposeString('mediaId', { description: "The platform's pk, as a string (it passes 2^53)" }),
    mediaCode: t.exposeString('mediaCode', { description: "The platform's shortcode" }),
    createAt: t.expose('createAt', { type: 'DateTime' }),
    coverUrl: t.exposeString('coverUrl', { description: 'First image candidate of the post (of its first child for a carousel)' }),
    resources: t.exposeStringList('resources', { description: 'Main URL of each carousel child in order; a single post: its own' }),
    description: t.exposeString('description', { description: 'Caption text' }),
    accessibilityCaption: t.exposeString('accessibilityCaption'),
    mediaUrl: t.exposeString('mediaUrl', { description: 'Largest video version for a video, else largest image' }),
    mediaType: t.exposeInt('mediaType', { description: "The platform's own values: 1 image, 2 video, 8 carousel" }),
    duration: t.exposeInt('duration', { description: 'Whole seconds; 0 for images' }),
    likeCount: t.expose('likeCount', { type: 'SafeInt' }),
    commentCount: t.expose('commentCount', { type: 'SafeInt' }),
    playCount: t.expose('playCount', { type: 'SafeInt' }),
  }),
});

const RealtimeMediaPage = builder.objectRef<UserMediaPage>('RealtimeMediaPage').implement({
  description: "One page of an account's most recent posts, newest first",
  fields: (t) => ({
    more: t.exposeBoolean('more', { description: 'Whether older posts exist' }),
    offset: t.exposeString('offset', { description: 'Pass as offset for the next page; "" when more is false' }),
    medias: t.field({ type: [MediaObject], resolve: (page) => page.medias as MediaItem[] }),
  }),
});

// Concurrent identical requests share one upstream page object (the client's single flight);
// they share its write-through too, instead of upserting the same rows once each.
const writes = new WeakMap<UserMediaPage, Promise<void>>();

function writeThrough(services: Services, page: UserMediaPage): Promise<void> {
  let write = writes.get(page);
  if (!write) {
    write = writeThroughMedias(services.store.db, page.medias);
    writes.set(page, write);
  }
  return write;
}

/** The request's work signal (`access.signal`): a client that left, or a shutdown past its grace, stops the wait. */
async function fetchPage({ services, access, requestId }: Context, userId: string, offset: string): Promise<UserMediaPage> {
  const { signal } = access;
  const client = services.instagram;
  if (!client) throw new ApiError('UPSTREAM_UNAVAILABLE', 'upstream unavailable');
  try {
    return await client.fetchUserMedias(userId, offset, signal);
  } catch (error) {
    if (error instanceof UpstreamNotFoundError) throw new ApiError('NOT_FOUND', 'Not Found: no such account on the platform');
    if (error instanceof UpstreamUnavailableError) {
      // The reason (timeout, status, circuit-open…) is for operators; the client sees a retryable 500.
      services.log.warn('upstream unavailable', { requestId, upstream: error.upstream, reason: error.reason });
      throw new ApiError('UPSTREAM_UNAVAILABLE', 'upstream unavailable');
    }
    throw error;
  }
}

builder.queryField('realtimeMedias', (t) =>
  t.field({
    type: RealtimeMediaPage,
    // Nullable so that one failing root field leaves the others' data intact.
    nullable: true,
    description:
      "An account's most recent posts, fetched from the photo platform at request time and kept in the database " +
      '(REST: GET /api/v1/instagram/realtime/user/medias); 100 quota units, charged only on success',
    args: {
      userId: t.arg.string({ required: true }),
      offset: t.arg.string(),
    },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(realtimeMediasArgs, rawArgs);
      const offsets = ctx.services.realtimeOffsets;
      // Before any charge or upstream call: an offset we did not issue for this account is the
      // client's mistake, and must not reach the platform (whose 400s would be ours to answer).
      const cursor = args.offset ? offsets.open(args.userId, args.offset) : '';
      if (cursor === null) throw ApiError.badRequest([{ field: 'offset', message: 'is not an offset this service returned for this account' }]);
      await ctx.access.reserve('realtime.medias', info.path.key as string);
      const page = await fetchPage(ctx, args.userId, cursor);
      // Part of the work, not a side effect: if the page cannot be kept, the call fails (500) and
      // the pipeline refunds it, rather than charging for data the database silently lacks.
      await writeThrough(ctx.services, page);
      return page.more ? { ...page, offset: offsets.seal(args.userId, page.offset) } : page;
    },
  }),
);

import { checkCursors } from '../domain/cursors.js';
import type { LiveStreamFacet } from '../domain/facets.js';
import { liveStreamOrder } from '../domain/orders.js';
import type { LiveStream } from '../domain/records.js';
import { valueFacetArgs } from '../inputs/facets.js';
import { liveStreamFilterShape, liveStreamsArgs, liveStreamTypeSchema } from '../inputs/live-streams.js';
import { countLiveStreams, liveStreamFacets, liveStreamsByKey, searchLiveStreams } from '../store/live-streams.js';
import { builder } from './builder.js';
import { connectionType, cursorArgs, searchConnection } from './connection.js';
import { facetsType, requestedFacets } from './facets.js';
import { enumFromZod, inputFromZod } from './zod-input.js';

// Only the filter is an enum: the item's `type` is the platform's own string ("live" or ""), which
// no enum value could carry.
enumFromZod('LiveStreamType', liveStreamTypeSchema);
const LiveStreamFilter = inputFromZod('LiveStreamFilter', liveStreamFilterShape, 'Live-stream search filters, combined with AND');

export const LiveStreamObject = builder.objectRef<LiveStream>('LiveStream').implement({
  description: 'A live broadcast on the live-stream platform, from the latest collected snapshot',
  fields: (t) => ({
    id: t.exposeString('id'),
    userId: t.exposeString('userId'),
    userLogin: t.exposeString('userLogin'),
    userName: t.exposeString('userName'),
    gameId: t.exposeString('gameId'),
    gameName: t.exposeString('gameName'),
    type: t.exposeString('type', { description: '"live", or "" when the platform withholds it' }),
    title: t.exposeString('title'),
    viewerCount: t.expose('viewerCount', { type: 'SafeInt' }),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    language: t.exposeString('language'),
    thumbnailUrl: t.exposeString('thumbnailUrl'),
    tags: t.exposeStringList('tags'),
    isMature: t.exposeBoolean('isMature'),
    lastUpdateAt: t.expose('lastUpdateAt', { type: 'DateTime', description: 'When the snapshot holding this stream was collected or imported' }),
  }),
});

const LiveStreamFacets = facetsType<LiveStreamFacet>('LiveStreamFacets', "Exact counts of a live-stream search's matches", [
  { facet: 'game', description: 'By game id; label: the game name', args: valueFacetArgs },
  { facet: 'language', description: 'By broadcast language ("en", "other")', args: valueFacetArgs },
]);

const LiveStreamConnection = connectionType<LiveStream>('LiveStream', LiveStreamObject, LiveStreamFacets);

builder.queryField('liveStreams', (t) =>
  t.field({
    type: LiveStreamConnection,
    // Nullable so that one failing root field leaves the others' data intact.
    nullable: true,
    description: 'Live-stream search, viewer count descending then id (REST: POST /api/v1/twitch/search/live); 1 quota unit',
    args: {
      filter: t.arg({ type: LiveStreamFilter }),
      ...cursorArgs(t.arg),
    },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(liveStreamsArgs, rawArgs);
      const filter = args.filter ?? {};
      checkCursors(liveStreamOrder, args);
      const facets = requestedFacets(info, ctx, LiveStreamFacets);
      await ctx.access.reserve('live.search', info.path.key as string);
      return searchConnection(info, ctx.services.search?.liveStreams(filter, args, facets, ctx.access.caller?.accountId) ?? null, {
        order: liveStreamOrder,
        facets: { requested: facets, sql: (requests) => liveStreamFacets(ctx.readDb, filter, requests) },
        rowsById: (ids) => ctx.lookup(liveStreamsByKey, '', ids),
        idOf: (stream) => stream.id,
        cache: ctx.services.search?.rows.liveStreams,
        sqlPage: () => searchLiveStreams(ctx.readDb, filter, args),
        sqlCount: () => countLiveStreams(ctx.readDb, filter),
      });
    },
  }),
);

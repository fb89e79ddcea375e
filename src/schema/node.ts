import { encodeGlobalId, type NodeKey, parseGlobalId, parseGlobalIds } from '../domain/global-ids.js';
import { type Category, type Channel, type Creator, type FetchedMedia, PHOTO_PLATFORM, type Video } from '../domain/records.js';
import { nodeArgs, nodesArgs } from '../inputs/lookups.js';
import { builder } from './builder.js';
import type { Context } from './context.js';
import { platformKey } from './loaders.js';

// Relay's global object identification (docs/contract/decisions.md §6.1), hand-built rather than
// @pothos/plugin-relay's: that plugin is not a dependency, and its node fields resolve through
// loaders of its own, while ours go through the request's DataLoaders and the search index's row
// caches like every other read; our connections (PageInfo, *Connection, *Edge) stay as they are.

export type NodeValue = Creator | Channel | Video | FetchedMedia | Category;

/** The key of a loaded record, told apart by the field only its type has (videoId before channelId: a video has both). */
export function nodeKeyOf(value: NodeValue): NodeKey {
  if ('videoId' in value) return { type: 'Video', videoId: value.videoId };
  if ('mediaId' in value) return { type: 'Media', platform: PHOTO_PLATFORM, mediaId: value.mediaId };
  if ('userId' in value) return { type: 'Creator', platform: value.platform, userId: value.userId };
  if ('channelId' in value) return { type: 'Channel', channelId: value.channelId };
  return { type: 'Category', categoryId: value.categoryId };
}

export const NodeRef = builder.interfaceRef<NodeValue>('Node').implement({
  description: 'An object with a global id: fetch it again with `node(id)`. The id is opaque; do not parse it.',
  fields: (t) => ({
    id: t.id({ resolve: (value) => encodeGlobalId(nodeKeyOf(value)) }),
  }),
  resolveType: (value) => nodeKeyOf(value).type,
});

/**
 * The photo platform's posts and their authors come in through realtime fetches only: reaching
 * them by global id needs a plan that covers those fetches (docs/decisions.md), whatever it costs.
 */
function requirePlanFor(ctx: Context, keys: readonly NodeKey[]): void {
  if (keys.some((key) => (key.type === 'Media' || key.type === 'Creator') && key.platform === PHOTO_PLATFORM)) ctx.access.requirePlan('realtime.medias');
}

/** The record a key names, through the request's loaders (one batch per type), or null. */
async function loadNode(ctx: Context, key: NodeKey): Promise<NodeValue | null> {
  switch (key.type) {
    case 'Creator':
      return ctx.loaders.creator.load(platformKey(key.platform, key.userId));
    case 'Channel':
      return ctx.loaders.channel.load(key.channelId);
    case 'Video':
      return ctx.loaders.video.load(key.videoId);
    case 'Media':
      return ctx.loaders.media.load(platformKey(key.platform, key.mediaId));
    case 'Category':
      return (await ctx.loaders.taxonomy()).byId.get(key.categoryId) ?? null;
  }
}

builder.queryField('node', (t) =>
  t.field({
    type: NodeRef,
    nullable: true,
    description: 'Any object by its global id; null when nothing has that id. 1 quota unit',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(nodeArgs, { id: String(rawArgs.id) });
      const key = parseGlobalId(args.id, 'id');
      requirePlanFor(ctx, [key]);
      await ctx.access.reserve('graph.lookup', info.path.key as string);
      return loadNode(ctx, key);
    },
  }),
);

builder.queryField('nodes', (t) =>
  t.field({
    type: [NodeRef],
    nullable: { list: false, items: true },
    description: 'Objects by their global ids (at most 100), in the order asked; null where nothing has that id. 1 quota unit per id',
    args: { ids: t.arg.idList({ required: true }) },
    resolve: async (_root, rawArgs, ctx, info) => {
      const args = ctx.validated(nodesArgs, { ids: rawArgs.ids.map(String) });
      const keys = parseGlobalIds(args.ids, 'ids');
      requirePlanFor(ctx, keys);
      await ctx.access.reserve('graph.lookup', info.path.key as string);
      return Promise.all(keys.map((key) => loadNode(ctx, key)));
    },
  }),
);

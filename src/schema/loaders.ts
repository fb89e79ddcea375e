import DataLoader from 'dataloader';
import type { Kysely } from 'kysely';
import type { Page, PageArgs } from '../domain/cursors.js';
import type { FacetRequest, VideoFacet } from '../domain/facets.js';
import type { Category, Creator, FetchedMedia, Video } from '../domain/records.js';
import type { VideoSearch } from '../inputs/videos.js';
import type { RowCache } from '../search/row-cache.js';
import type { IndexPage, Search } from '../search/types.js';
import { loadTaxonomy } from '../store/categories.js';
import { creatorsByKey } from '../store/creators.js';
import type { Database } from '../store/database.js';
import type { LookupByKey } from '../store/key-batches.js';
import { mediasByKey } from '../store/medias.js';
import { searchChannelsVideos, videosByKey } from '../store/videos.js';

// The graph's per-request loaders: every key a document names, however deep, is read once per type
// in one batch (DataLoader), through the row caches of search pages while the index is loaded (its
// change feed keeps them fresh, so a looked-up row is never older than the index).

/**
 * The rows of `keys` in that order, null where none exists: cached rows as they are, the others in
 * one read. The cache is used only while the index is loaded (then its change feed keeps it fresh).
 */
export async function readByKey<Row>(
  keys: readonly string[],
  cache: RowCache<Row> | null,
  load: (missing: string[]) => Promise<Row[]>,
  keyOf: (row: Row) => string,
): Promise<(Row | null)[]> {
  const rows = cache ? await cache.read(keys, load, keyOf) : await load([...keys]);
  const byKey = new Map(rows.map((row) => [keyOf(row), row]));
  return keys.map((key) => byKey.get(key) ?? null);
}

/** A creator's or a post's loader key: `<platform>:<id>` (a platform has no colon). */
export const platformKey = (platform: string, id: string) => `${platform}:${id}`;

function groupByPlatform(keys: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const key of keys) {
    const colon = key.indexOf(':');
    const [platform, id] = [key.slice(0, colon), key.slice(colon + 1)];
    const group = groups.get(platform);
    if (group) group.push(id);
    else groups.set(platform, [id]);
  }
  return groups;
}

/** Loads per platform, one read each (creators are twitter's, and the photo platform's post authors). */
async function byPlatform<Row>(keys: readonly string[], read: (platform: string, ids: string[]) => Promise<(Row | null)[]>): Promise<(Row | null)[]> {
  const found = new Map<string, Row | null>();
  await Promise.all(
    [...groupByPlatform(keys)].map(async ([platform, ids]) => {
      const rows = await read(platform, ids);
      ids.forEach((id, i) => found.set(platformKey(platform, id), rows[i]));
    }),
  );
  return keys.map((key) => found.get(key) ?? null);
}

export interface Taxonomy {
  all: Category[];
  byId: Map<number, Category>;
  children: Map<number, Category[]>;
}

function taxonomyOf(all: Category[]): Taxonomy {
  const children = new Map<number, Category[]>();
  for (const category of all) {
    if (category.parentId === null) continue;
    const siblings = children.get(category.parentId);
    if (siblings) siblings.push(category);
    else children.set(category.parentId, [category]);
  }
  return { all, byId: new Map(all.map((category) => [category.categoryId, category])), children };
}

/** What `Channel.videos` asks at one place of a document: the same object under every channel there. */
export interface ChannelVideosQuery {
  filter: VideoSearch['filter'];
  sort: VideoSearch['sort'];
  page: PageArgs;
  /** The facets asked of this connection, counted by the index with its page. */
  facets: readonly FacetRequest<VideoFacet>[];
}

/** One page of a channel's videos, as `Channel.videos` asks for it. */
export interface ChannelVideosKey {
  query: ChannelVideosQuery;
  channelId: string;
}

/** The index's page and its rows, or (index not loaded) the SQL path's page and total. */
export type ChannelVideosAnswer = { indexed: IndexPage; rows: Video[] } | { indexed: null; page: Page<Video>; total: number };

export interface GraphLoaders {
  creator: DataLoader<string, Creator | null>;
  video: DataLoader<string, Video | null>;
  media: DataLoader<string, FetchedMedia | null>;
  /** The whole taxonomy, read at most once per request. */
  taxonomy: () => Promise<Taxonomy>;
  channelVideos: DataLoader<ChannelVideosKey, ChannelVideosAnswer, string>;
}

export function graphLoaders(options: {
  readDb: Kysely<Database>;
  /** Rows by key, shared with the account's other requests (src/store/key-batches.ts). */
  lookup: LookupByKey;
  search: Search | null;
  /** The account asking, once the key is known: the index serves accounts in turn. */
  caller: () => string | undefined;
  /** Videos by id with their channels (src/schema/context.ts). */
  videosById: (ids: string[]) => Promise<Video[]>;
}): GraphLoaders {
  const { readDb, lookup, search, caller } = options;
  const rows = () => (search?.ready ? search.rows : null);

  const creator = new DataLoader<string, Creator | null>((keys) =>
    byPlatform(keys, (platform, ids) => readByKey(ids, rows()?.creators(platform) ?? null, (missing) => lookup(creatorsByKey, platform, missing), creatorIdOf)),
  );
  const video = new DataLoader<string, Video | null>((ids) => readByKey(ids, rows()?.videos ?? null, options.videosById, videoIdOf));
  // Posts are not indexed (no feed keeps a cache of them fresh): read every time.
  const media = new DataLoader<string, FetchedMedia | null>((keys) =>
    byPlatform(keys, (platform, ids) => readByKey(ids, null, (missing) => lookup(mediasByKey, platform, missing), mediaIdOf)),
  );
  // Imports write categories without the change feed: a per-process copy could miss one, so the
  // taxonomy (a few hundred rows) is read once per request that needs it.
  let taxonomy: Promise<Taxonomy> | null = null;

  // Every `Channel.videos` of a document level arrives in one batch: those of the same place in
  // the document (one query object, see ChannelVideosQuery) are answered together, from the index
  // (one call for all the channels of a place) or by one SQL statement; then the rows of every
  // indexed page, whatever its place, in one read by key. Their channel is the one that asked
  // (already loaded), so no join.
  const queryIds = new Map<ChannelVideosQuery, number>();
  const queryId = (query: ChannelVideosQuery) => {
    let id = queryIds.get(query);
    if (id === undefined) queryIds.set(query, (id = queryIds.size));
    return id;
  };
  const channelVideos = new DataLoader<ChannelVideosKey, ChannelVideosAnswer, string>(
    async (keys) => {
      const answers: ChannelVideosAnswer[] = new Array(keys.length);
      const groups = new Map<ChannelVideosQuery, number[]>();
      keys.forEach((key, i) => {
        const group = groups.get(key.query);
        if (group) group.push(i);
        else groups.set(key.query, [i]);
      });
      const indexed: { members: number[]; found: IndexPage[] }[] = [];
      await Promise.all(
        [...groups].map(async ([query, members]) => {
          const { page, facets } = query;
          const filtered: VideoSearch = { filter: query.filter, sort: query.sort, channelId: null };
          const channelIds = members.map((i) => keys[i].channelId);
          const found = search ? await search.channelVideos(filtered, channelIds, page, facets, caller()) : null;
          if (found) {
            indexed.push({ members, found });
            return;
          }
          const pages = await searchChannelsVideos(readDb, channelIds, filtered, page);
          for (const i of members) answers[i] = { indexed: null, ...pages.get(keys[i].channelId)! };
        }),
      );
      if (indexed.length > 0) {
        // A DataLoader here made two promises a video (a hundred rows a page of 20 channels) for nothing to batch.
        const ids = [...new Set(indexed.flatMap(({ found }) => found.flatMap((page) => page.ids)))];
        const videos = await readByKey(ids, rows()?.videos ?? null, (missing) => lookup(videosByKey, '', missing), videoIdOf);
        const byId = new Map<string, Video>();
        ids.forEach((id, i) => {
          if (videos[i]) byId.set(id, videos[i]);
        });
        for (const { members, found } of indexed) {
          members.forEach((i, j) => (answers[i] = { indexed: found[j], rows: found[j].ids.flatMap((id) => byId.get(id) ?? []) }));
        }
      }
      return answers;
    },
    { cacheKeyFn: (key) => `${queryId(key.query)}:${key.channelId}` },
  );

  return {
    creator,
    video,
    media,
    taxonomy: () => (taxonomy ??= loadTaxonomy(readDb).then(taxonomyOf)),
    channelVideos,
  };
}

const creatorIdOf = (row: Creator) => row.userId;
const videoIdOf = (row: Video) => row.videoId;
const mediaIdOf = (row: FetchedMedia) => row.mediaId;

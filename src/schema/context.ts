import DataLoader from 'dataloader';
import type { GraphQLResolveInfo } from 'graphql';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { RequestAccess } from '../access/pipeline.js';
import { ApiError, fieldErrorsFromZod } from '../domain/errors.js';
import type { Channel, Video } from '../domain/records.js';
import type { Services } from '../services.js';
import { channelsByKey } from '../store/channels.js';
import type { CancellableDatabases } from '../store/connect.js';
import type { Database } from '../store/database.js';
import type { LookupByKey } from '../store/key-batches.js';
import { videosWithChannelsByKey } from '../store/videos.js';
import { graphLoaders, type GraphLoaders, readByKey } from './loaders.js';

export interface Context {
  /** The primary: writes, and reads that must see them. */
  db: Kysely<Database>;
  /** Where searches read: a replica when DATABASE_READ_URL is set. */
  readDb: Kysely<Database>;
  /** Rows by key from readDb, in one statement with the same lookups of the account's other requests. */
  lookup: LookupByKey;
  services: Services;
  access: RequestAccess;
  loaders: { channel: DataLoader<string, Channel | null> } & GraphLoaders;
  /** The videos of a page found by the index, their channels read with them. */
  videosById: (ids: string[]) => Promise<Video[]>;
  /**
   * A field's arguments as its zod schema (src/inputs/) types them, or 400 naming each bad one
   * (`filter.followerCountMin`). Arguments the REST door has already validated pass as they are:
   * its wire schema ends in the same input schema, and the schemas only validate, never transform.
   */
  validated<S extends z.ZodType>(schema: S, args: unknown): z.output<S>;
  /**
   * What `prepare` makes of a field's arguments and selection, once per request and place of the
   * field in the document: a field resolved under every element of a list (`Channel.videos` under
   * a page of 20 videos) has the same arguments, variables and selection each time, so they are
   * validated and read once, not 20 times.
   */
  perField<T>(info: GraphQLResolveInfo, prepare: () => T): T;
  /** The request's id (X-Request-Id), for the log lines its work writes. */
  requestId?: string;
}

export interface ContextOptions {
  /** The arguments come from the REST door, which validated its body once already. */
  argumentsValidated?: boolean;
  /** The request's id, for the log lines its work writes. */
  requestId?: string;
}

function parseArguments<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  const result = schema.safeParse(args);
  if (!result.success) throw ApiError.badRequest(fieldErrorsFromZod(result.error));
  return result.data;
}

const asValidated = <S extends z.ZodType>(_schema: S, args: unknown) => args as z.output<S>;

// Loaders live for one request: a page of videos asks for its channels in one batched query,
// only for those the search index's row cache does not hold (it is used only while the index is
// loaded: then its change feed keeps the cache fresh).
export function createContext(services: Services, access: RequestAccess, databases: Pick<CancellableDatabases, 'db' | 'readDb' | 'lookup'>, options: ContextOptions = {}): Context {
  const { db, readDb, lookup } = databases;
  const search = services.search;
  const channels = (ids: readonly string[]): Promise<(Channel | null)[]> =>
    readByKey(ids, search?.ready ? search.rows.channels : null, (missing) => lookup(channelsByKey, '', missing), channelIdOf);
  const channel = new DataLoader(channels);
  // The channels come in the videos' statement: the page's channel fields then need none of their
  // own, and later pages find them in the row cache.
  const videosById = async (ids: string[]): Promise<Video[]> => {
    const cache = search?.ready ? search.rows.channels : null;
    const since = cache?.generation ?? 0;
    const found = await lookup(videosWithChannelsByKey, '', ids);
    const channels = new Map<string, Channel>();
    for (const row of found) if (row.channel) channels.set(row.channel.channelId, row.channel);
    for (const row of channels.values()) channel.prime(row.channelId, row);
    cache?.offer([...channels.values()], channelIdOf, since);
    return found.map((row) => row.video);
  };
  const validated = options.argumentsValidated ? asValidated : parseArguments;
  const loaders = { channel, ...graphLoaders({ readDb, lookup, search, caller: () => access.caller?.accountId, videosById }) };
  // Keyed by the field's nodes: the executor hands the same array to every element of a list.
  const prepared = new WeakMap<object, unknown>();
  const perField = <T>(info: GraphQLResolveInfo, prepare: () => T): T => {
    if (prepared.has(info.fieldNodes)) return prepared.get(info.fieldNodes) as T;
    const value = prepare();
    prepared.set(info.fieldNodes, value);
    return value;
  };
  return { db, readDb, lookup, services, access, loaders, videosById, validated, perField, requestId: options.requestId };
}

const channelIdOf = (channel: Channel) => channel.channelId;

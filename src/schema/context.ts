import DataLoader from 'dataloader';
import type { Kysely } from 'kysely';
import type { RequestAccess } from '../access/pipeline.js';
import { loadChannels, type Channel } from '../store/channels.js';
import type { Database } from '../store/database.js';
import type { Services } from '../services.js';

export interface Context {
  /** The primary: writes, and reads that must see them. */
  db: Kysely<Database>;
  /** Where searches read: a replica when DATABASE_READ_URL is set. */
  readDb: Kysely<Database>;
  services: Services;
  access: RequestAccess;
  loaders: { channel: DataLoader<string, Channel | null> };
}

// Loaders live for one request: a page of videos asks for its channels in one batched query,
// only for those the search index's row cache does not hold (it is used only while the index is
// loaded: then its change feed keeps the cache fresh).
export function createContext(services: Services, access: RequestAccess): Context {
  const { db, readDb } = services.store;
  const search = services.search;
  const channels = async (ids: readonly string[]): Promise<(Channel | null)[]> => {
    if (!search?.ready) return loadChannels(readDb, ids);
    const found = await search.rows.channels.read(ids, async (missing) => (await loadChannels(readDb, missing)).filter((c): c is Channel => c !== null), channelIdOf);
    const byId = new Map(found.map((channel) => [channel.channelId, channel]));
    return ids.map((id) => byId.get(id) ?? null);
  };
  return { db, readDb, services, access, loaders: { channel: new DataLoader(channels) } };
}

const channelIdOf = (channel: Channel) => channel.channelId;

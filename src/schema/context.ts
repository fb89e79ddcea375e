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

// Loaders live for one request: a page of videos asks for its channels in one batched query.
export function createContext(services: Services, access: RequestAccess): Context {
  const { db, readDb } = services.store;
  return {
    db,
    readDb,
    services,
    access,
    loaders: { channel: new DataLoader((ids: readonly string[]) => loadChannels(readDb, ids)) },
  };
}

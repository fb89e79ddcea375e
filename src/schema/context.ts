import DataLoader from 'dataloader';
import type { Kysely } from 'kysely';
import type { RequestAccess } from '../access/pipeline.js';
import { loadChannels, type Channel } from '../store/channels.js';
import type { Database } from '../store/database.js';
import type { Services } from '../services.js';

export interface Context {
  db: Kysely<Database>;
  services: Services;
  access: RequestAccess;
  loaders: { channel: DataLoader<string, Channel | null> };
}

// Loaders live for one request: a page of videos asks for its channels in one batched query.
export function createContext(services: Services, access: RequestAccess): Context {
  const db = services.store.db;
  return {
    db,
    services,
    access,
    loaders: { channel: new DataLoader((ids: readonly string[]) => loadChannels(db, ids)) },
  };
}

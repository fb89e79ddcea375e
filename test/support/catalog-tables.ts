import { Writable } from 'node:stream';
import type { Database } from '../../src/store/database.js';

/** The catalogue tables `seed` and `import` write, and each one's key (for ordering and comparing rows). */
export const catalogTables = ['categories', 'creators', 'channels', 'videos', 'live_streams'] as const satisfies readonly (keyof Database)[];
export type CatalogTable = (typeof catalogTables)[number];
export const catalogKeys: Record<CatalogTable, string> = {
  categories: 'id',
  creators: 'platform, user_id',
  channels: 'channel_id',
  videos: 'video_id',
  live_streams: 'id',
};

/** A stream that keeps what is written to it (a command's stderr), as text and as non-empty lines. */
export function capture() {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text, lines: () => text.split('\n').filter((line) => line !== '') };
}

import type { AccessService } from './access/pipeline.js';
import type { Config } from './config.js';
import type { Store } from './store/connect.js';
import type { InstagramClient } from './upstreams/instagram/client.js';

// Everything a request may use, built once per process (src/app.ts) and passed down explicitly.
export interface Services {
  config: Config;
  store: Store;
  access: AccessService;
  log: Logger;
  /** The photo platform's feed API for realtime fetches; without it they answer 500 (upstream unavailable). */
  instagram?: InstagramClient;
}

export interface Logger {
  info(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

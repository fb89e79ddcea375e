import type { InFlightWork } from './access/in-flight.js';
import type { AccessService } from './access/pipeline.js';
import type { KeylessBudget } from './access/keyless-budget.js';
import type { Config } from './config.js';
import type { Logger } from './observability/log.js';
import type { Metrics } from './observability/metrics.js';
import type { Search } from './search/types.js';
import type { Store } from './store/connect.js';
import type { InstagramClient } from './upstreams/instagram/client.js';
import type { OffsetSeal } from './upstreams/offset-seal.js';

// Everything a request may use, built once per process (src/app.ts) and passed down explicitly.
export interface Services {
  config: Config;
  store: Store;
  access: AccessService;
  log: Logger;
  metrics: Metrics;
  /** The photo platform's feed API for realtime fetches; without it they answer 500 (upstream unavailable). */
  instagram?: InstagramClient;
  /** Seals the realtime offsets handed out and opens those sent back (only issued ones open). */
  realtimeOffsets: OffsetSeal;
  /** The work of the requests in flight: it stops when a client leaves or the shutdown grace is over (503). */
  work: InFlightWork;
  /** The in-memory search index; null: every search runs SQL. */
  search: Search | null;
  /** The CPU time work answered without a key (introspection) may take. */
  keylessBudget: KeylessBudget;
}

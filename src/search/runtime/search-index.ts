import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { PageArgs } from '../../domain/cursors.js';
import type { CreatorFacet, FacetRequest, LiveStreamFacet, VideoFacet } from '../../domain/facets.js';
import type { CreatorKey } from '../../domain/index-rows.js';
import type { CreatorSearch } from '../../inputs/creators.js';
import type { LiveStreamFilter } from '../../inputs/live-streams.js';
import type { VideoSearch } from '../../inputs/videos.js';
import type { Logger } from '../../observability/log.js';
import { type ThrottledWarning, throttledWarning } from '../../observability/throttled-warning.js';
import {
  type CatalogChange,
  type CatalogEntity,
  CHANGE_RETENTION_MS,
  feedPosition,
  type FeedPosition,
  holdFeed,
  READER_RENEW_MS,
  readChanges,
  releaseFeed,
} from '../../store/changes.js';
import { channelIndexRows, channelIndexRowsById } from '../../store/channels.js';
import { creatorIndexRows, creatorIndexRowsByKey } from '../../store/creators.js';
import type { Database } from '../../store/database.js';
import { loadLiveStreamIndexRows } from '../../store/live-streams.js';
import { videoIdsByDate, videoIndexRows, videoIndexRowsById } from '../../store/videos.js';
import { CreatorIndex } from '../tables/creators.js';
import { LiveStreamIndex } from '../tables/live-streams.js';
import { VideoIndex } from '../tables/videos.js';
import type { IndexPage, Search, SearchIndexStats, ServerRows } from '../types.js';
import { type RowChanges, SearchRows } from '../row-cache.js';
import { SnapshotRejected } from '../primitives/snapshot-io.js';
import { type Partition, WHOLE } from './partition.js';
import { readSnapshot, type SnapshotSettings, snapshotPath, writeSnapshot } from './snapshots.js';

// The search index of one server process: loaded at start from its snapshot file and caught up
// from the change feed (./snapshots.ts), or else from PostgreSQL (in one transaction snapshot),
// then kept within about a second of it by following the change feed (src/store/changes.ts).
// Until a table is loaded, and while it reloads after a bulk load, its searches return null and
// the caller runs the SQL path instead: answers are exact either way.

const LOAD_BATCH = 10_000;
const ID_BATCH = 50_000;
const APPLY_BATCH = 5_000;

export interface SearchIndexOptions {
  db: Kysely<Database>;
  log: Logger;
  /** How often the change feed is read. */
  pollMs?: number;
  /** Told which cached rows are stale, before the index reads any changed row itself. */
  onRowsChanged?: (changes: RowChanges) => void;
  /** Where and how often the index is written to disk; unset: never (every start loads from the database). */
  snapshots?: SnapshotSettings;
  /** The share of the rows this index holds (./partition.ts); unset: all of them. */
  partition?: Partition;
  /** How often a load renews its hold on the feed until its first read (READER_RENEW_MS; tests shorten it). */
  feedRenewMs?: number;
}

export class SearchIndex {
  #creators: CreatorIndex | null = null;
  #videos: VideoIndex | null = null;
  #live: LiveStreamIndex | null = null;
  #position: FeedPosition | null = null;
  /**
   * The position comes from a full load or a snapshot file, not from the last read: the next read
   * first checks that the feed was not pruned past it (a load longer than the feed's retention).
   */
  #positionUnverified = false;
  #lastRead: number | null = null;
  #loadedFrom: 'snapshot' | 'database' | null = null;
  /** The feed position the snapshot file holds (null: none written or loaded by this process). */
  #snapshotAt: string | null = null;
  #lastSnapshot = 0;
  /** Loaded from a snapshot and reading what changed since: not ready, and searches go to SQL. */
  #catchingUp = false;
  /** The snapshot file's path, named after the database: asked once. */
  #snapshotPath: Promise<string> | null = null;
  #stopped = false;
  #timer: NodeJS.Timeout | null = null;
  /** Feed reads and loads run one at a time. */
  #queue: Promise<void> = Promise.resolve();
  readonly #pollMs: number;
  /** Asked by a load between batches: stop() abandons a load (tens of seconds to minutes) rather than wait for it. */
  readonly #stoppedYet = () => this.#stopped;
  readonly #partition: Partition;
  /** A database away fails every poll (twice a second): one warning per interval, and one line when back. */
  readonly #feedFailing: ThrottledWarning;
  /** This index as a registered reader of the feed (holdFeed), from a full load to its first read. */
  readonly #reader = `search index ${randomUUID()}`;
  /** Renews that registration while it is held (null: not held). */
  #holding: NodeJS.Timeout | null = null;
  /** The renewal on its way (one at a time): a release waits for it, or it would register the reader again. */
  #renewing: Promise<void> | null = null;

  constructor(private readonly options: SearchIndexOptions) {
    this.#pollMs = options.pollMs ?? 500;
    this.#partition = options.partition ?? WHOLE;
    this.#feedFailing = throttledWarning(options.log, 'search index: reading the change feed failed; retrying', FEED_WARNING_INTERVAL_MS);
  }

  /** Loads every table, then follows the feed until stop(). Resolves once loaded. */
  start(): Promise<void> {
    const loading = this.#serial(async () => {
      try {
        if (await this.#loadSnapshot()) return;
        await this.#loadAll();
      } catch (error) {
        // Stopped while loading: nothing failed, and there is nothing to write.
        if (error instanceof LoadStopped) return;
        throw error;
      }
      await this.#writeSnapshot('after a full load');
    });
    loading.then(
      () => this.#schedule(),
      (error: unknown) => {
        this.options.log.warn('search index not loaded; searches use SQL until it is', { error: errorText(error) });
        this.#schedule();
      },
    );
    return loading;
  }

  /** Reads the feed now and applies it (tests; normally the timer does this). */
  refresh(): Promise<void> {
    return this.#serial(() => this.#poll());
  }

  /** Stops following the feed and writes a last snapshot (when snapshots are on and it moved on). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#queue.catch(() => {});
    await this.#releaseFeed();
    await this.#serial(() => this.#writeSnapshot('at shutdown')).catch(() => {});
  }

  /** Every table loaded: searches are served from memory. */
  get ready(): boolean {
    return !this.#catchingUp && this.#creators !== null && this.#videos !== null && this.#live !== null;
  }

  // The page and its facets in one call: both from the index as it is at this moment.
  creators(search: CreatorSearch, page: PageArgs, facets: readonly FacetRequest<CreatorFacet>[] = []): IndexPage | null {
    const index = this.#catchingUp ? null : this.#creators;
    if (!index) return null;
    // Facets first: they make the filter's whole match, which the page then takes from the cache
    // (a bound on the sort key would otherwise count its other conditions apart, own-key.ts).
    const counted = facets.length > 0 ? index.facets(search, facets) : null;
    const found = index.search(search, page);
    return counted ? { ...found, facets: counted } : found;
  }

  videos(search: VideoSearch, page: PageArgs, facets: readonly FacetRequest<VideoFacet>[] = [], needsTotal = true): IndexPage | null {
    const index = this.#catchingUp ? null : this.#videos;
    // Facets are counted on the filter's match: with them the match is made anyway.
    return index && withFacets(index.search(search, page, undefined, needsTotal || facets.length > 0), facets, () => index.facets(search, facets));
  }

  channelVideos(search: VideoSearch, channelIds: readonly string[], page: PageArgs, facets: readonly FacetRequest<VideoFacet>[] = []): IndexPage[] | null {
    const index = this.#catchingUp ? null : this.#videos;
    if (!index) return null;
    return channelIds.map((channelId) => {
      const scoped = { ...search, channelId };
      return withFacets(index.search(scoped, page), facets, () => index.facets(scoped, facets));
    });
  }

  liveStreams(filter: LiveStreamFilter, page: PageArgs, facets: readonly FacetRequest<LiveStreamFacet>[] = []): IndexPage | null {
    const index = this.#catchingUp ? null : this.#live;
    return index && withFacets(index.search(filter, page), facets, () => index.facets(filter, facets));
  }

  stats(): SearchIndexStats {
    return {
      creators: this.#creators?.table.aliveCount ?? null,
      videos: this.#videos?.table.aliveCount ?? null,
      channels: this.#videos?.channelCount ?? null,
      liveStreams: this.#live?.table.aliveCount ?? null,
      lagMs: this.#lastRead === null ? null : Date.now() - this.#lastRead,
      loadedFrom: this.#loadedFrom,
    };
  }

  #serial(work: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(work);
    this.#queue = run.catch(() => {});
    return run;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      void this.#serial(async () => {
        await this.#poll();
        this.#feedFailing.recovered('search index: reading the change feed again');
        const every = this.options.snapshots?.everyMs ?? 0;
        if (every > 0 && Date.now() - this.#lastSnapshot >= every) await this.#writeSnapshot('periodic');
      })
        .catch((error: unknown) => {
          if (!(error instanceof LoadStopped)) this.#feedFailing.failed(error);
        })
        .finally(() => this.#schedule());
    }, this.#pollMs);
    // The feed alone must not keep a finished process alive.
    this.#timer.unref();
  }

  async #loadAll(): Promise<void> {
    const started = performance.now();
    this.options.onRowsChanged?.({ creators: 'all', videos: 'all', channels: 'all', liveStreams: true });
    // Held before the load's own snapshot, at a position no later than it: the pruning keeps what
    // the load will have yet to read, however long it takes, until its first read.
    await this.#holdFeed();
    try {
      await this.options.db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const position = await feedPosition(trx);
          const creators = await loadCreators(trx, this.#partition, this.#stoppedYet);
          const videos = await loadVideoIndex(trx, this.#partition, this.#stoppedYet);
          const live = await this.#loadLiveStreams(trx);
          this.#creators = creators;
          this.#videos = videos;
          this.#live = live;
          this.#position = position;
          this.#positionUnverified = true;
        });
    } catch (error) {
      await this.#releaseFeed();
      throw error;
    }
    this.#lastRead = Date.now();
    this.#loadedFrom = 'database';
    this.options.log.info('search index loaded', {
      ...this.stats(),
      durationMs: Math.round(performance.now() - started),
      heapUsedMb: Math.round(process.memoryUsage().heapUsed / 1_048_576),
    });
  }

  /** The snapshot file, checked and caught up from the feed; false (and nothing loaded) when there is none or it is refused. */
  async #loadSnapshot(): Promise<boolean> {
    const settings = this.options.snapshots;
    if (!settings) return false;
    const log = this.options.log;
    const started = performance.now();
    let path = '';
    try {
      path = await this.#snapshotFile(settings.dir);
      const snapshot = await readSnapshot(this.options.db, path, this.#partition);
      if (!snapshot) {
        log.info('search index: no snapshot yet; loading from the database', { path });
        return false;
      }
      const readMs = Math.round(performance.now() - started);
      this.options.onRowsChanged?.({ creators: 'all', videos: 'all', channels: 'all', liveStreams: true });
      this.#creators = snapshot.creators;
      this.#videos = snapshot.videos;
      this.#live = await this.#loadLiveStreams(this.options.db);
      this.#position = snapshot.position;
      this.#positionUnverified = true;
      this.#snapshotAt = snapshot.position.lastId;
      this.#lastSnapshot = Date.now();
      this.#lastRead = Date.now();
      this.#loadedFrom = 'snapshot';
      // Ready once it has caught up with what changed since it was written: until then a search
      // would answer from the file's moment, minutes or hours behind.
      this.#catchingUp = true;
      try {
        await this.#poll();
        // Stopped before it caught up: not ready, ever (a search would answer from the file's moment).
        if (this.#stopped) throw new LoadStopped();
      } finally {
        this.#catchingUp = false;
      }
      log.info('search index loaded from its snapshot', {
        ...this.stats(),
        path,
        bytes: snapshot.bytes,
        readMs,
        durationMs: Math.round(performance.now() - started),
      });
      return true;
    } catch (error) {
      this.#creators = null;
      this.#videos = null;
      this.#live = null;
      this.#position = null;
      this.#snapshotAt = null;
      this.#loadedFrom = null;
      if (error instanceof LoadStopped) throw error;
      const reason = error instanceof SnapshotRejected ? error.message : `catching up failed: ${errorText(error)}`;
      log.warn('search index snapshot not used; loading from the database', { path, reason });
      return false;
    }
  }

  #snapshotFile(dir: string): Promise<string> {
    this.#snapshotPath ??= snapshotPath(this.options.db, dir, this.#partition).catch((error: unknown) => {
      this.#snapshotPath = null;
      throw error;
    });
    return this.#snapshotPath;
  }

  /** Writes the creator and video indexes to the snapshot file, if snapshots are on and the index moved on since the last one. */
  async #writeSnapshot(why: string): Promise<void> {
    const settings = this.options.snapshots;
    const position = this.#position;
    if (!settings || !this.#creators || !this.#videos || !position || this.#snapshotAt === position.lastId) return;
    const started = performance.now();
    this.#lastSnapshot = Date.now();
    try {
      const path = await this.#snapshotFile(settings.dir);
      const bytes = await writeSnapshot(this.options.db, path, position, this.#creators, this.#videos, this.#partition);
      if (bytes === null) {
        this.options.log.info('search index snapshot not written: the change feed has recorded no change yet', { why });
        return;
      }
      this.#snapshotAt = position.lastId;
      this.options.log.info('search index snapshot written', { why, path, bytes, durationMs: Math.round(performance.now() - started) });
    } catch (error) {
      this.options.log.warn('search index snapshot not written', { why, error: errorText(error) });
    }
  }

  async #poll(): Promise<void> {
    if (this.#stopped) return;
    if (!this.#position || (this.#lastRead !== null && Date.now() - this.#lastRead > CHANGE_RETENTION_MS / 2)) {
      // Never loaded, or away longer than the feed keeps changes: start over from a new snapshot.
      await this.#loadAll();
      return;
    }
    const read = await readChanges(this.options.db, this.#position, { verify: this.#positionUnverified });
    if (!read) {
      // Changes after the position may be gone: read from it, the index would keep those rows'
      // old values until they changed again. The index as loaded answers while it loads again,
      // as during any reload (a load that always took longer than the retention must not leave
      // the process unready for good).
      if (this.#catchingUp) throw new SnapshotRejected('the change feed was pruned past its position (written longer than the retention ago)');
      this.options.log.warn('search index: the change feed was pruned past the position of its load (a load longer than the retention); loading again from the database', {
        lastId: this.#position.lastId,
        retentionMs: CHANGE_RETENTION_MS,
      });
      await this.#loadAll();
      return;
    }
    await this.#apply(read.changes);
    this.#position = read.next;
    this.#positionUnverified = false;
    this.#lastRead = Date.now();
    // Read past the load's position: nothing it had yet to read can be lost now.
    await this.#releaseFeed();
  }

  /** Registers this index at the feed's position now, renewed until #releaseFeed (store/changes.ts holdFeed). */
  async #holdFeed(): Promise<void> {
    const { db } = this.options;
    const position = await feedPosition(db);
    await holdFeed(db, this.#reader, position);
    if (this.#holding) clearInterval(this.#holding);
    // A renewal that fails (the database away) is retried at the next; a lapsed one only lets pruning go on.
    this.#holding = setInterval(() => {
      this.#renewing ??= holdFeed(db, this.#reader, position)
        .catch(() => {})
        .finally(() => (this.#renewing = null));
    }, this.options.feedRenewMs ?? READER_RENEW_MS);
    this.#holding.unref();
  }

  /** Ends the registration, if held; one left behind (the database away) lapses within its lease. */
  async #releaseFeed(): Promise<void> {
    if (!this.#holding) return;
    clearInterval(this.#holding);
    this.#holding = null;
    await this.#renewing;
    await releaseFeed(this.options.db, this.#reader).catch(() => {});
  }

  async #apply(changes: CatalogChange[]): Promise<void> {
    if (changes.length === 0) return;
    const reload = new Set<CatalogEntity>();
    // Each changed key once: a row written ten times since the last read is read once.
    const keys: Record<CatalogEntity, Map<string, { platform: string; key: string }>> = {
      creators: new Map(),
      channels: new Map(),
      videos: new Map(),
      live_streams: new Map(),
    };
    const partition = this.#partition;
    for (const change of changes) {
      if (change.key === null) reload.add(change.entity);
      // Another partition's creator or video is none of this index's business (channels are in every one).
      else if ((change.entity === 'creators' || change.entity === 'videos') && !partition.holds(change.key)) continue;
      else keys[change.entity].set(`${change.platform ?? ''}\u0000${change.key}`, { platform: change.platform ?? '', key: change.key });
    }
    // Cached rows are forgotten before anything is read: a read that started earlier stores nothing.
    this.options.onRowsChanged?.({
      creators: reload.has('creators') ? 'all' : [...keys.creators.values()].map(({ platform, key }): [string, string] => [platform, key]),
      videos: reload.has('videos') ? 'all' : [...keys.videos.values()].map(({ key }) => key),
      channels: reload.has('channels') ? 'all' : [...keys.channels.values()].map(({ key }) => key),
      liveStreams: reload.has('live_streams') || keys.live_streams.size > 0,
    });
    const db = this.options.db;
    if (reload.has('creators')) {
      this.#creators = null;
      this.#creators = await loadCreators(db, partition, this.#stoppedYet);
    } else if (this.#creators && keys.creators.size > 0) {
      const creators = this.#creators;
      for (const batch of batches([...keys.creators.values()].map(({ platform, key }): CreatorKey => ({ platform, userId: key })))) {
        const rows = await creatorIndexRowsByKey(db, batch);
        const present = new Set(rows.map((row) => `${row.platform}\u0000${row.userId}`));
        for (const row of rows) creators.upsert(row);
        for (const key of batch) if (!present.has(`${key.platform}\u0000${key.userId}`)) creators.remove(key);
      }
    }
    if (reload.has('videos') || reload.has('channels')) {
      this.#videos = null;
      this.#videos = await loadVideoIndex(db, partition, this.#stoppedYet);
    } else if (this.#videos && (keys.channels.size > 0 || keys.videos.size > 0)) {
      const videos = this.#videos;
      // Channels first: a new video may belong to a new channel.
      await applyChannels(videos, [...keys.channels.values()].map(({ key }) => key), db);
      for (const batch of batches([...keys.videos.values()].map(({ key }) => key))) {
        const rows = await videoIndexRowsById(db, batch);
        await applyChannels(videos, [...new Set(rows.map((row) => row.channelId))].filter((id) => !videos.hasChannel(id)), db);
        const present = new Set(rows.map((row) => row.videoId));
        for (const row of rows) videos.upsert(row);
        for (const id of batch) if (!present.has(id)) videos.remove(id);
      }
    }
    if (reload.has('live_streams') || keys.live_streams.size > 0) {
      this.#live = await this.#loadLiveStreams(db);
    }
  }

  async #loadLiveStreams(db: Kysely<Database>): Promise<LiveStreamIndex> {
    return new LiveStreamIndex((await loadLiveStreamIndexRows(db)).filter((row) => this.#partition.holds(row.id)));
  }
}

/** The index in the pipeline's own thread (the embedded store; SEARCH_THREAD=off). */
export class LocalSearch implements Search {
  readonly rows: ServerRows;
  readonly #index: SearchIndex;

  constructor(options: Omit<SearchIndexOptions, 'onRowsChanged'>, rows: ServerRows = new SearchRows()) {
    this.rows = rows;
    this.#index = new SearchIndex({ ...options, onRowsChanged: (changes) => this.rows.forget(changes) });
  }

  get ready(): boolean {
    return this.#index.ready;
  }

  async creators(search: CreatorSearch, page: PageArgs, facets?: readonly FacetRequest<CreatorFacet>[]): Promise<IndexPage | null> {
    return this.#index.creators(search, page, facets);
  }

  async videos(search: VideoSearch, page: PageArgs, facets?: readonly FacetRequest<VideoFacet>[], needsTotal?: boolean): Promise<IndexPage | null> {
    return this.#index.videos(search, page, facets, needsTotal);
  }

  async channelVideos(search: VideoSearch, channelIds: readonly string[], page: PageArgs, facets?: readonly FacetRequest<VideoFacet>[]): Promise<IndexPage[] | null> {
    return this.#index.channelVideos(search, channelIds, page, facets);
  }

  async liveStreams(filter: LiveStreamFilter, page: PageArgs, facets?: readonly FacetRequest<LiveStreamFacet>[]): Promise<IndexPage | null> {
    return this.#index.liveStreams(filter, page, facets);
  }

  stats(): SearchIndexStats {
    return this.#index.stats();
  }

  start(): Promise<void> {
    return this.#index.start();
  }

  refresh(): Promise<void> {
    return this.#index.refresh();
  }

  stop(): Promise<void> {
    return this.#index.stop();
  }
}

function withFacets(page: IndexPage, requests: readonly FacetRequest[], count: () => IndexPage['facets']): IndexPage {
  return requests.length === 0 ? page : { ...page, facets: count() };
}

/** A load abandoned because the index was stopped (SIGTERM during a start's load): not a failure. */
class LoadStopped extends Error {
  constructor() {
    super('stopped while loading');
  }
}

/** Throws LoadStopped once `stopped()` says so: called between a load's batches. */
function checkStopped(stopped: () => boolean): void {
  if (stopped()) throw new LoadStopped();
}

async function loadCreators(db: Kysely<Database>, partition: Partition, stopped: () => boolean = () => false): Promise<CreatorIndex> {
  const index = new CreatorIndex();
  for (let batch = await creatorIndexRows(db, null, LOAD_BATCH); batch.length > 0; ) {
    checkStopped(stopped);
    for (const row of batch) if (partition.holds(row.userId)) index.upsert(row);
    const last = batch[batch.length - 1];
    batch = batch.length < LOAD_BATCH ? [] : await creatorIndexRows(db, { platform: last.platform, userId: last.userId }, LOAD_BATCH);
  }
  index.finishLoad();
  return index;
}

/** The video index as a server builds it (slots in date order), from one snapshot the caller holds. */
export async function loadVideoIndex(db: Kysely<Database>, partition: Partition = WHOLE, stopped: () => boolean = () => false): Promise<VideoIndex> {
  const index = new VideoIndex();
  for (let batch = await channelIndexRows(db, null, LOAD_BATCH); batch.length > 0; ) {
    checkStopped(stopped);
    for (const row of batch) index.upsertChannel(row);
    batch = batch.length < LOAD_BATCH ? [] : await channelIndexRows(db, batch[batch.length - 1].channelId, LOAD_BATCH);
  }
  // Slots in date order first (ids only, from the date index), then the rows in id order (a
  // sequential read of the table) into them.
  for (let ids = await videoIdsByDate(db, null, ID_BATCH); ids.length > 0; ) {
    checkStopped(stopped);
    index.reserve(partition.count === 1 ? ids : ids.filter((id) => partition.holds(id)));
    ids = ids.length < ID_BATCH ? [] : await videoIdsByDate(db, ids[ids.length - 1], ID_BATCH);
  }
  for (let batch = await videoIndexRows(db, null, LOAD_BATCH); batch.length > 0; ) {
    checkStopped(stopped);
    for (const row of batch) if (partition.holds(row.videoId)) index.upsert(row);
    batch = batch.length < LOAD_BATCH ? [] : await videoIndexRows(db, batch[batch.length - 1].videoId, LOAD_BATCH);
  }
  index.finishLoad();
  return index;
}

async function applyChannels(videos: VideoIndex, ids: string[], db: Kysely<Database>): Promise<void> {
  for (const batch of batches(ids)) {
    const rows = await channelIndexRowsById(db, batch);
    const present = new Set(rows.map((row) => row.channelId));
    for (const row of rows) videos.upsertChannel(row);
    for (const id of batch) if (!present.has(id)) videos.removeChannel(id);
  }
}

function* batches<T>(items: readonly T[]): Generator<T[]> {
  for (let start = 0; start < items.length; start += APPLY_BATCH) yield items.slice(start, start + APPLY_BATCH);
}

const FEED_WARNING_INTERVAL_MS = 30_000;
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

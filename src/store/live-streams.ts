import { type Expression, type ExpressionBuilder, type Kysely, sql, type SqlBool } from 'kysely';
import type { Page, PageArgs } from '../domain/cursors.js';
import type { FacetAnswer, FacetRequest, LiveStreamFacet } from '../domain/facets.js';
import type { LiveStreamIndexRow } from '../domain/index-rows.js';
import { liveStreamOrder } from '../domain/orders.js';
import type { CollectedStream, LiveStream } from '../domain/records.js';
import { liveStreamFacetFilter } from '../inputs/facets.js';
import type { LiveStreamFilter } from '../inputs/live-streams.js';
import { inBulk } from './changes.js';
import { type Database, liveStreamColumns, type LiveStreamRow, type NewLiveStream } from './database.js';
import { asText, valueFacet } from './facets.js';
import { countMatches, fetchPage, sortKey } from './paging.js';
import type { KeyLookup } from './key-batches.js';
import { anyOf, executePrepared } from './prepared.js';
import { toCount } from './values.js';

// The live-stream snapshot: what the collector saw in its last full pass (or what was imported).

type LiveStreamsEb = ExpressionBuilder<Database, 'live_streams'>;

function whereLiveStreams(filter: LiveStreamFilter) {
  return (eb: LiveStreamsEb): Expression<SqlBool> => {
    const conditions: Expression<SqlBool>[] = [];
    if (filter.userId) conditions.push(eb('live_streams.user_id', '=', filter.userId));
    // Served by live_streams_login_idx on lower(user_login).
    if (filter.userLogin) conditions.push(eb(sql`lower(live_streams.user_login)`, '=', filter.userLogin.toLowerCase()));
    if (filter.gameId) conditions.push(eb('live_streams.game_id', '=', filter.gameId));
    if (filter.type === 'LIVE') conditions.push(eb('live_streams.type', '=', 'live'));
    // Stored lower-case by the collector and the import.
    if (filter.language) conditions.push(eb('live_streams.language', '=', filter.language.toLowerCase()));
    return eb.and(conditions);
  };
}

// ORDER BY viewer_count DESC, id DESC; `id` is text COLLATE "C", so the tie-break is bytewise.
const liveStreamSortKey = sortKey(liveStreamOrder, sql`live_streams.viewer_count`, sql`live_streams.id`);

/**
 *   SELECT live_streams.*, viewer_count AS __k0, id AS __k1 FROM live_streams WHERE <filter>
 *     [AND (viewer_count, id) < (:after)] ORDER BY viewer_count DESC, id DESC LIMIT first + 1
 */
export async function searchLiveStreams(db: Kysely<Database>, filter: LiveStreamFilter, page: PageArgs): Promise<Page<LiveStream>> {
  const query = db.selectFrom('live_streams').selectAll('live_streams').where(whereLiveStreams(filter));
  const result = await fetchPage(query, liveStreamSortKey, page);
  return { ...result, rows: result.rows.map(toLiveStream) };
}

export async function countLiveStreams(db: Kysely<Database>, filter: LiveStreamFilter): Promise<number> {
  return countMatches(db.selectFrom('live_streams').where(whereLiveStreams(filter)));
}

/** The facets of a search on the SQL path: one GROUP BY statement per facet, run together. */
export function liveStreamFacets(db: Kysely<Database>, filter: LiveStreamFilter, requests: readonly FacetRequest<LiveStreamFacet>[]): Promise<FacetAnswer[]> {
  return Promise.all(
    requests.map((request): Promise<FacetAnswer> => {
      const matches = db.selectFrom('live_streams').where(whereLiveStreams(liveStreamFacetFilter(filter, request)));
      // A game's name: the smallest bytewise if its streams disagree, as the index picks it.
      if (request.facet === 'game') return valueFacet(matches, sql`live_streams.game_id`, asText, sql<string>`min(live_streams.game_name COLLATE "C")`);
      return valueFacet(matches, sql`live_streams.language`, asText);
    }),
  );
}

export function toLiveStream(row: LiveStreamRow): LiveStream {
  return {
    id: row.id,
    userId: row.user_id,
    userLogin: row.user_login,
    userName: row.user_name,
    gameId: row.game_id,
    gameName: row.game_name,
    type: row.type,
    title: row.title,
    viewerCount: toCount(row.viewer_count),
    startedAt: row.started_at,
    language: row.language,
    thumbnailUrl: row.thumbnail_url,
    tags: row.tags,
    isMature: row.is_mature,
    lastUpdateAt: row.last_update_at,
  };
}

function collectedRow(stream: CollectedStream): NewLiveStream {
  return {
    id: stream.id,
    user_id: stream.userId,
    user_login: stream.userLogin,
    user_name: stream.userName,
    game_id: stream.gameId,
    game_name: stream.gameName,
    type: stream.type,
    title: stream.title,
    viewer_count: stream.viewerCount,
    started_at: stream.startedAt,
    language: stream.language.toLowerCase(),
    thumbnail_url: stream.thumbnailUrl,
    tags: stream.tags,
    is_mature: stream.isMature,
  };
}

/** Rows per INSERT: 14 columns each, far below PostgreSQL's 65,535 bind parameters. */
const INSERT_BATCH_SIZE = 500;

/**
 * Replaces the whole snapshot with `streams`, in one transaction:
 *   BEGIN; DELETE FROM live_streams; INSERT INTO live_streams VALUES …(batches); COMMIT
 * A reader sees the old snapshot or the new one, never a mix or an empty table in between
 * (PostgreSQL: MVCC; PGlite: the dialect serialises its single connection, so nobody reads
 * mid-transaction). A stream listed twice keeps its last copy. Every row gets last_update_at = now().
 */
export async function replaceSnapshot(db: Kysely<Database>, streams: readonly CollectedStream[]): Promise<number> {
  const unique = [...new Map(streams.map((stream) => [stream.id, stream])).values()];
  await db.transaction().execute(async (trx) => {
    // One "reload" change for the search index instead of one per stream.
    await inBulk(trx, ['live_streams'], async () => {
      await trx.deleteFrom('live_streams').execute();
      for (let offset = 0; offset < unique.length; offset += INSERT_BATCH_SIZE) {
        await trx
          .insertInto('live_streams')
          .values(unique.slice(offset, offset + INSERT_BATCH_SIZE).map(collectedRow))
          .execute();
      }
    });
  });
  return unique.length;
}

/** Every stream of the snapshot, as the index keeps them (the snapshot is small: a full read). */
export async function loadLiveStreamIndexRows(db: Kysely<Database>): Promise<LiveStreamIndexRow[]> {
  const rows = await db
    .selectFrom('live_streams')
    .select(['id', 'user_id', sql<string>`lower(user_login)`.as('login'), 'game_id', 'game_name', 'type', 'language', 'viewer_count'])
    .execute();
  return rows.map((row) => ({
    id: row.id,
    userId: row.user_id,
    userLoginLower: row.login,
    gameId: row.game_id,
    gameName: row.game_name,
    type: row.type,
    language: row.language,
    viewerCount: toCount(row.viewer_count),
  }));
}

/** Streams by id, in no particular order (ids no longer stored are left out). */
export async function liveStreamsById(db: Kysely<Database>, ids: readonly string[]): Promise<LiveStream[]> {
  if (ids.length === 0) return [];
  return (await executePrepared(db, db.selectFrom('live_streams').select(liveStreamColumns).where('id', '=', anyOf(ids)))).map(toLiveStream);
}

/** Live streams by id, one statement for an account's concurrent requests. */
export const liveStreamsByKey: KeyLookup<LiveStream> = { name: 'live streams', read: liveStreamsById, keyOf: (stream) => stream.id };

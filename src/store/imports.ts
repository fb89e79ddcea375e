import type { Insertable, Kysely } from 'kysely';
import { parseDuration } from '../domain/durations.js';
import { canonicalInstant } from '../inputs/common.js';
import type { CategoryRecord, ChannelRecord, CreatorRecord, LastPostRecord, LiveStreamRecord, VideoRecord } from '../inputs/records.js';
import { type BulkTable, categoriesTable, channelsTable, creatorsTable, liveStreamsTable, type Row, videosTable } from './bulk-tables.js';
import type { CategoriesTable, Database, LastPost, NewChannel, NewCreator, NewLiveStream, NewVideo } from './database.js';

// Validated import records (src/inputs/records.ts) as table rows, written (upserts.ts, the import)
// with the `update-changed` conflict rule of bulk.ts: a record equal to the stored row writes
// nothing, so importing a file twice leaves every row, `last_update_at` included, as the first
// import left it.
//
// Records that only the database can refuse (a category whose parent is unknown, a video whose
// channel does not exist) are checked per batch up front and come back as rejections; the rest of
// the batch is loaded. The mapping is free of database code: worker threads load this module.
export const DEFAULT_CREATOR_PLATFORM = 'twitter';
export const MAX_CATEGORY_LEVEL = 3;

/** A record the database refused; `index` is its position in the array given to the upsert. */
export interface Rejection {
  index: number;
  field: string;
  reason: string;
}

const genderCodes = { unknown: 0, male: 1, female: 2 } as const;

const upperCode = (code: string | undefined) => (code ?? '').toUpperCase();
// Search compares countries upper-case and languages lower-case (src/store/creators.ts).
const lowerCode = (code: string | undefined) => (code ?? '').toLowerCase();
const stamp = (updatedAt: string | undefined) => (updatedAt === undefined ? {} : { last_update_at: canonicalInstant(updatedAt) });

function lastPost(post: LastPostRecord): LastPost {
  return {
    post_id: post.post_id,
    description: post.description ?? '',
    create_at: canonicalInstant(post.create_at),
    cover_url: post.cover_url ?? '',
    like_count: post.like_count ?? 0,
    comment_count: post.comment_count ?? 0,
    retweet_count: post.retweet_count ?? 0,
    view_count: post.view_count ?? 0,
  };
}

export function creatorRow(record: CreatorRecord): NewCreator {
  return {
    platform: record.platform ?? DEFAULT_CREATOR_PLATFORM,
    user_id: record.user_id,
    username: record.username,
    full_name: record.full_name ?? '',
    avatar: record.avatar ?? '',
    country: upperCode(record.country),
    language: lowerCode(record.language),
    gender: genderCodes[record.gender ?? 'unknown'],
    follower_count: record.follower_count ?? 0,
    is_verified: record.is_verified ?? false,
    has_email: record.has_email ?? false,
    avg_engagement_rate: record.avg_engagement_rate ?? 0,
    avg_video_engagement_rate: record.avg_video_engagement_rate ?? 0,
    avg_comment_count: record.avg_comment_count ?? 0,
    avg_like_count: record.avg_like_count ?? 0,
    avg_retweet_count: record.avg_retweet_count ?? 0,
    avg_view_count: record.avg_view_count ?? 0,
    retweet_ratio: record.retweet_ratio ?? 0,
    reply_ratio: record.reply_ratio ?? 0,
    post_count: record.post_count ?? 0,
    video_count: record.video_count ?? 0,
    last_publish_at: record.last_publish_at ?? null,
    recent_month_publish_count: record.recent_month_publish_count ?? 0,
    recent_week_publish_count: record.recent_week_publish_count ?? 0,
    last_post: record.last_post ? JSON.stringify(lastPost(record.last_post)) : null,
    evaluation_min: record.evaluation_min ?? 0,
    evaluation_max: record.evaluation_max ?? 0,
    // A set: order and repeats in the file carry no meaning, and must not make a re-import differ.
    category_ids: [...new Set(record.category_ids ?? [])].sort((a, b) => a - b),
    ...stamp(record.last_update_at),
  };
}

export function channelRow(record: ChannelRecord): NewChannel {
  return {
    channel_id: record.channel_id,
    title: record.title ?? '',
    avatar: record.avatar ?? '',
    country: upperCode(record.country),
    language: lowerCode(record.language),
    gender: genderCodes[record.gender ?? 'unknown'],
    follower_count: record.follower_count ?? 0,
    avg_engagement_rate: record.avg_engagement_rate ?? 0,
    avg_play_count: record.avg_play_count ?? 0,
    avg_like_count: record.avg_like_count ?? 0,
    avg_comment_count: record.avg_comment_count ?? 0,
    video_count: record.video_count ?? 0,
    recent_month_publish_count: record.recent_month_publish_count ?? 0,
    evaluation_min: record.evaluation_min ?? 0,
    evaluation_max: record.evaluation_max ?? 0,
    ...stamp(record.last_update_at),
  };
}

export function videoRow(record: VideoRecord): NewVideo {
  return {
    video_id: record.video_id,
    channel_id: record.channel_id,
    title: record.title ?? '',
    description: record.description ?? '',
    cover_url: record.cover_url ?? '',
    create_at: record.create_at,
    // The schema has already checked the duration parses.
    duration_seconds: record.duration === undefined ? 0 : (parseDuration(record.duration) ?? 0),
    video_url: record.video_url ?? '',
    video_type: record.video_type === 'short' ? 2 : 1,
    category_id: record.category_id ?? 0,
    like_count: record.like_count ?? 0,
    comment_count: record.comment_count ?? 0,
    play_count: record.play_count ?? 0,
    engagement_rate: record.engagement_rate ?? 0,
    ...stamp(record.last_update_at),
  };
}

export function liveStreamRow(record: LiveStreamRecord): NewLiveStream {
  return {
    id: record.id,
    user_id: record.user_id,
    user_login: record.user_login,
    user_name: record.user_name ?? '',
    game_id: record.game_id ?? '',
    game_name: record.game_name ?? '',
    type: record.type ?? 'live',
    title: record.title ?? '',
    viewer_count: record.viewer_count ?? 0,
    started_at: record.started_at,
    // ISO 639-1 or the platform's "other", lower-case as search compares them.
    language: lowerCode(record.language),
    thumbnail_url: record.thumbnail_url ?? '',
    tags: record.tags ?? [],
    is_mature: record.is_mature ?? false,
    ...stamp(record.last_update_at),
  };
}

/** What a row refers to that must already be stored (a video's channel): checked per batch before writing. */
export interface RowReference {
  field: string;
  of(row: Row): string;
  /** The references among `ids` that name something not stored, each with the reason it is refused. */
  missing(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, string>>;
}

/**
 * One import kind: its table, how a validated record becomes a row (pure, so it may run in a worker
 * thread), and what only the database can refuse: a reference to another table, or (categories)
 * levels that depend on the batch as a whole and on the stored taxonomy.
 */
export interface RecordKind<T> {
  table: BulkTable;
  toRow(record: T): Row;
  reference?: RowReference;
  resolveBatch?(db: Kysely<Database>, rows: readonly Row[]): Promise<{ rows: Row[]; rejections: Rejection[] }>;
}

/**
 * Creators whose categories are not all stored are rejected, as a video without its channel is:
 * searches refuse an unknown category id, so a creator carrying one could be counted by the
 * category facet under a value no filter takes. Import categories first. A top-level id is
 * refused for the same reason (the contract's filters take level 2 and 3 only).
 */
export const creatorKind: RecordKind<CreatorRecord> = {
  table: creatorsTable,
  toRow: creatorRow,
  reference: {
    field: 'category_ids',
    // The row's category ids as one reference ('' for none).
    of: (row) => (row.category_ids as number[]).join(','),
    async missing(db, references) {
      // Distinct references first: a batch's 5,000 rows share few category sets, and a batch that
      // refuses nothing (nearly all) is not read row by row again. This runs in the importing
      // thread, beside the COPY: its cost is the import's.
      const distinct = new Set(references);
      const wanted = new Set<number>();
      for (const reference of distinct) if (reference !== '') for (const id of reference.split(',')) wanted.add(Number(id));
      if (wanted.size === 0) return new Map();
      const levels = new Map(
        (await db.selectFrom('categories').select(['id', 'level']).where('id', 'in', [...wanted]).execute()).map((row) => [row.id, row.level]),
      );
      const refused = new Map<string, string>();
      if ([...wanted].every((id) => (levels.get(id) ?? 1) > 1)) return refused;
      for (const reference of distinct) {
        const ids = reference === '' ? [] : reference.split(',').map(Number);
        const unknown = ids.filter((id) => !levels.has(id));
        const topLevel = ids.filter((id) => levels.get(id) === 1);
        if (unknown.length > 0) refused.set(reference, `category ${unknown.join(', ')} does not exist (import categories first)`);
        else if (topLevel.length > 0) {
          refused.set(reference, `category ${topLevel.join(', ')} is a top-level category: creators carry level-2 and level-3 ids`);
        }
      }
      return refused;
    },
  },
};
export const channelKind: RecordKind<ChannelRecord> = { table: channelsTable, toRow: channelRow };
export const liveStreamKind: RecordKind<LiveStreamRecord> = { table: liveStreamsTable, toRow: liveStreamRow };

/** Videos whose channel is not stored are rejected; import channels first. */
export const videoKind: RecordKind<VideoRecord> = {
  table: videosTable,
  toRow: videoRow,
  reference: {
    field: 'channel_id',
    of: (row) => row.channel_id as string,
    async missing(db, ids) {
      const wanted = [...new Set(ids)];
      if (wanted.length === 0) return new Map();
      const stored = await db.selectFrom('channels').select('channel_id').where('channel_id', 'in', wanted).execute();
      const known = new Set(stored.map((row) => row.channel_id));
      return new Map(wanted.filter((id) => !known.has(id)).map((id) => [id, `channel "${id}" does not exist (import channels first)`]));
    },
  },
};

/**
 * Categories are written in level order, parents first. Each batch resolves levels against the
 * categories stored by the batches before it, so they must be committed by then.
 */
export const categoryKind: RecordKind<CategoryRecord> = {
  table: categoriesTable,
  toRow: (record) => ({ id: record.id, parent_id: record.parent_id, name: record.name }),
  async resolveBatch(db, rows) {
    const { rows: resolved, rejected } = await resolveCategoryBatch(db, rows as unknown as CategoryRecord[]);
    const rejections = [...rejected].map(([index, reason]) => ({ index, field: 'parent_id', reason }));
    return { rows: resolved.sort((a, b) => a.level - b.level), rejections: rejections.sort((a, b) => a.index - b.index) };
  },
};

/** Rejections, by index into `references`, of the rows whose reference is not stored. */
export async function refusedReferences(db: Kysely<Database>, reference: RowReference, references: readonly string[]): Promise<Rejection[]> {
  const missing = await reference.missing(db, references);
  if (missing.size === 0) return [];
  return references.flatMap((id, index) => {
    const reason = missing.get(id);
    return reason === undefined ? [] : [{ index, field: reference.field, reason }];
  });
}

/**
 * The rows of a batch that load, after the database's checks, and the rejections (by index into
 * `rows`). `references` are the rows' references when they were taken elsewhere (a worker thread).
 */
export async function resolveRows(
  db: Kysely<Database>,
  kind: RecordKind<never>,
  rows: readonly Row[],
  references?: readonly string[],
): Promise<{ rows: Row[]; rejections: Rejection[] }> {
  if (kind.resolveBatch) return kind.resolveBatch(db, rows);
  if (!kind.reference) return { rows: [...rows], rejections: [] };
  const rejections = await refusedReferences(db, kind.reference, references ?? rows.map(kind.reference.of));
  const refused = new Set(rejections.map((rejection) => rejection.index));
  return { rows: rows.filter((_, index) => !refused.has(index)), rejections };
}

/**
 * A category's level comes from its parent chain: 1 without a parent, else its parent's level + 1,
 * the parent being in the same batch or already stored. A category whose parent is unknown, whose
 * chain loops or goes past level 3 is rejected. So is a stored category that would change level
 * while it has stored subcategories outside the batch, whose levels would then be wrong.
 */
async function resolveCategoryBatch(
  db: Kysely<Database>,
  batch: readonly CategoryRecord[],
): Promise<{ rows: Insertable<CategoriesTable>[]; rejected: Map<number, string> }> {
  // A batch whose every line was rejected before (not JSON, unknown fields): nothing to ask, and
  // an empty IN () is not SQL.
  if (batch.length === 0) return { rows: [], rejected: new Map() };
  // The last line for an id wins, as it would in separate statements.
  const latest = new Map<number, number>();
  batch.forEach((record, index) => latest.set(record.id, index));
  const batchIds = [...latest.keys()];
  const parentIds = batch.flatMap((record) => (record.parent_id === null ? [] : [record.parent_id]));
  const stored = await db
    .selectFrom('categories')
    .select(['id', 'parent_id', 'level'])
    .where((eb) => eb.or([eb('id', 'in', [...new Set([...batchIds, ...parentIds])]), eb('parent_id', 'in', batchIds)]))
    .orderBy('id')
    .execute();
  const storedLevel = new Map(stored.map((row) => [row.id, row.level]));
  const storedChildren = new Map<number, number[]>();
  for (const row of stored) {
    if (row.parent_id !== null) storedChildren.set(row.parent_id, [...(storedChildren.get(row.parent_id) ?? []), row.id]);
  }

  // The ids of a parent chain within the batch that leads back to `id`, else null.
  const loopFrom = (id: number): number[] | null => {
    const path = [id];
    for (let parent = batch[latest.get(id)!].parent_id; parent !== null && latest.has(parent); parent = batch[latest.get(parent)!].parent_id) {
      path.push(parent);
      if (parent === id) return path;
      if (path.length > latest.size) return null;
    }
    return null;
  };
  const loops = new Map(batchIds.flatMap((id) => {
    const path = loopFrom(id);
    return path ? [[id, `the parent chain loops: ${path.join(' → ')}`] as const] : [];
  }));

  const refused = new Map<number, string>(loops);
  for (;;) {
    const levels = new Map<number, number | string>();
    // Recursion ends: ids on a loop are refused up front, so every chain followed here is finite.
    const levelOf = (id: number): number | string => {
      const known = levels.get(id);
      if (known !== undefined) return known;
      const record = batch[latest.get(id)!];
      let level: number | string;
      if (refused.has(id)) level = refused.get(id)!;
      else if (record.parent_id === null) level = 1;
      else if (latest.has(record.parent_id)) {
        const parentLevel = levelOf(record.parent_id);
        // A refused parent keeps its stored row, if it has one.
        if (typeof parentLevel === 'number') level = parentLevel + 1;
        else if (storedLevel.has(record.parent_id)) level = storedLevel.get(record.parent_id)! + 1;
        else level = `parent category ${record.parent_id} is rejected`;
      } else if (storedLevel.has(record.parent_id)) level = storedLevel.get(record.parent_id)! + 1;
      else level = `unknown parent category ${record.parent_id}`;
      if (typeof level === 'number' && level > MAX_CATEGORY_LEVEL) {
        level = `parent category ${record.parent_id} is at level ${MAX_CATEGORY_LEVEL}, the deepest level of the taxonomy`;
      }
      levels.set(id, level);
      return level;
    };
    for (const id of batchIds) levelOf(id);

    // A stored subcategory keeps its level unless this batch rewrites it: not in the batch, or refused.
    let refusedMore = false;
    for (const id of batchIds) {
      const level = levels.get(id)!;
      const before = storedLevel.get(id);
      const child = storedChildren.get(id)?.find((childId) => typeof levels.get(childId) !== 'number');
      if (typeof level === 'number' && before !== undefined && before !== level && child !== undefined) {
        refused.set(id, `moving category ${id} from level ${before} to level ${level} would leave its subcategory ${child} at the wrong level`);
        refusedMore = true;
      }
    }
    if (refusedMore) continue;

    const rows: Insertable<CategoriesTable>[] = [];
    const rejected = new Map<number, string>();
    for (const id of batchIds) {
      const level = levels.get(id)!;
      const index = latest.get(id)!;
      const record = batch[index];
      if (typeof level === 'number') rows.push({ id, parent_id: record.parent_id, level, name: record.name });
      else rejected.set(index, level);
    }
    return { rows, rejected };
  }
}

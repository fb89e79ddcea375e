import { sql, type Insertable, type Kysely } from 'kysely';
import type {
  CategoryRecord,
  ChannelRecord,
  CreatorRecord,
  LastPostRecord,
  LiveStreamRecord,
  VideoRecord,
} from '../inputs/records.js';
import type { CategoriesTable, Database, LastPost, NewChannel, NewCreator, NewLiveStream, NewVideo } from './database.js';
import { parseDuration } from './durations.js';

// Batch upserts of validated import records (src/inputs/records.ts). Each statement is a multi-row
// INSERT … ON CONFLICT (key) DO UPDATE of every column, guarded by IS DISTINCT FROM so that a record
// equal to the stored row writes nothing: importing a file twice leaves every row, `last_update_at`
// included, as the first import left it.
//
// Records that only the database can refuse (a category whose parent is unknown, a video whose
// channel does not exist) are checked per batch up front and come back as rejections; the rest of
// the batch is loaded. None of these functions opens a transaction, so callers may pass one.

/** Rows per statement: every table stays far below PostgreSQL's 65,535 bind parameters. */
export const UPSERT_BATCH_SIZE = 500;
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
const stamp = (updatedAt: string | undefined) => (updatedAt === undefined ? {} : { last_update_at: new Date(updatedAt) });

function lastPost(post: LastPostRecord): LastPost {
  return {
    post_id: post.post_id,
    description: post.description ?? '',
    create_at: new Date(post.create_at).toISOString(),
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

type Row = Record<string, unknown>;
type UpsertTable = Exclude<keyof Database, 'medias'>;

function* batches<T>(items: readonly T[]): Generator<{ offset: number; batch: readonly T[] }> {
  for (let offset = 0; offset < items.length; offset += UPSERT_BATCH_SIZE) {
    yield { offset, batch: items.slice(offset, offset + UPSERT_BATCH_SIZE) };
  }
}

/**
 * Upserts rows that all carry the same columns, except `last_update_at` which may be absent. One
 * statement cannot touch a row twice, so the last row per key wins. Rows with and without
 * `last_update_at` go in separate statements: a given stamp is part of the comparison, while
 * without one an otherwise equal row keeps the stamp it has.
 */
async function upsertRows(db: Kysely<Database>, table: UpsertTable, key: readonly string[], rows: readonly Row[]): Promise<void> {
  const latest = new Map<string, Row>();
  for (const row of rows) latest.set(key.map((column) => String(row[column])).join('\u0000'), row);
  const unique = [...latest.values()];
  const stamped = table !== 'categories';
  for (const group of [unique.filter((row) => row.last_update_at === undefined), unique.filter((row) => row.last_update_at !== undefined)]) {
    if (group.length === 0) continue;
    const columns = Object.keys(group[0]).filter((column) => !key.includes(column));
    const compared = columns.map((column) => sql`${sql.ref(`${table}.${column}`)} IS DISTINCT FROM ${sql.ref(`excluded.${column}`)}`);
    // Without a given stamp, excluded.last_update_at is the column default: the time of this import.
    const updated = stamped && !columns.includes('last_update_at') ? [...columns, 'last_update_at'] : columns;
    await (db as unknown as Kysely<Record<string, Row>>)
      .insertInto(table)
      .values(group)
      .onConflict((conflict) =>
        conflict
          .columns(key)
          .doUpdateSet(Object.fromEntries(updated.map((column) => [column, sql.ref(`excluded.${column}`)])))
          .where(sql<boolean>`${sql.join(compared, sql` OR `)}`),
      )
      .execute();
  }
}

// Creators, channels and live streams have nothing only the database could refuse: the schema
// has checked every field. They return the same (empty) rejection list as the others.
export async function upsertCreators(db: Kysely<Database>, records: readonly CreatorRecord[]): Promise<Rejection[]> {
  for (const { batch } of batches(records)) await upsertRows(db, 'creators', ['platform', 'user_id'], batch.map(creatorRow));
  return [];
}

export async function upsertChannels(db: Kysely<Database>, records: readonly ChannelRecord[]): Promise<Rejection[]> {
  for (const { batch } of batches(records)) await upsertRows(db, 'channels', ['channel_id'], batch.map(channelRow));
  return [];
}

export async function upsertLiveStreams(db: Kysely<Database>, records: readonly LiveStreamRecord[]): Promise<Rejection[]> {
  for (const { batch } of batches(records)) await upsertRows(db, 'live_streams', ['id'], batch.map(liveStreamRow));
  return [];
}

/** Videos whose channel is not stored are rejected; import channels first. */
export async function upsertVideos(db: Kysely<Database>, records: readonly VideoRecord[]): Promise<Rejection[]> {
  const rejections: Rejection[] = [];
  for (const { offset, batch } of batches(records)) {
    const channelIds = [...new Set(batch.map((record) => record.channel_id))];
    const stored = await db.selectFrom('channels').select('channel_id').where('channel_id', 'in', channelIds).execute();
    const known = new Set(stored.map((row) => row.channel_id));
    const accepted: VideoRecord[] = [];
    batch.forEach((record, index) => {
      if (known.has(record.channel_id)) accepted.push(record);
      else {
        rejections.push({
          index: offset + index,
          field: 'channel_id',
          reason: `channel "${record.channel_id}" does not exist (import channels first)`,
        });
      }
    });
    if (accepted.length > 0) await upsertRows(db, 'videos', ['video_id'], accepted.map(videoRow));
  }
  return rejections;
}

/**
 * A category's level comes from its parent chain: 1 without a parent, else its parent's level + 1,
 * the parent being in the same batch or already stored. A category whose parent is unknown, whose
 * chain loops or goes past level 3 is rejected. So is a stored category that would change level
 * while it has stored subcategories outside the batch, whose levels would then be wrong.
 */
export async function upsertCategories(db: Kysely<Database>, records: readonly CategoryRecord[]): Promise<Rejection[]> {
  const rejections: Rejection[] = [];
  for (const { offset, batch } of batches(records)) {
    const { rows, rejected } = await resolveCategoryBatch(db, batch);
    for (const [index, reason] of rejected) rejections.push({ index: offset + index, field: 'parent_id', reason });
    if (rows.length > 0) await upsertRows(db, 'categories', ['id'], rows.sort((a, b) => a.level - b.level));
  }
  return rejections.sort((a, b) => a.index - b.index);
}

async function resolveCategoryBatch(
  db: Kysely<Database>,
  batch: readonly CategoryRecord[],
): Promise<{ rows: Insertable<CategoriesTable>[]; rejected: Map<number, string> }> {
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

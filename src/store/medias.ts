import { type Kysely, sql } from 'kysely';
import { type FetchedMedia, PHOTO_PLATFORM } from '../domain/records.js';
import type { Database, MediaRow, NewCreator, NewMedia } from './database.js';
import type { KeyLookup } from './key-batches.js';
import { anyOf, executePrepared } from './prepared.js';
import { toCount, toDate } from './values.js';

// Write-through of realtime fetches (docs/contract/decisions.md §1: the photo platform is read at request time
// and what it returns is kept): the posts in `medias`, their authors in `creators`.

function mediaRow(media: FetchedMedia): NewMedia {
  return {
    platform: PHOTO_PLATFORM,
    media_id: media.mediaId,
    author_user_id: media.authorUserId,
    author_username: media.authorUsername,
    author_nickname: media.authorNickname,
    media_code: media.mediaCode,
    create_at: media.createAt,
    cover_url: media.coverUrl,
    resources: [...media.resources],
    description: media.description,
    accessibility_caption: media.accessibilityCaption,
    media_url: media.mediaUrl,
    media_type: media.mediaType,
    duration: media.duration,
    like_count: media.likeCount,
    comment_count: media.commentCount,
    play_count: media.playCount,
  };
}

const mediaColumns = [
  'author_user_id', 'author_username', 'author_nickname', 'media_code', 'create_at', 'cover_url', 'resources',
  'description', 'accessibility_caption', 'media_url', 'media_type', 'duration', 'like_count', 'comment_count', 'play_count',
] as const;

/**
 * Upserts the posts and their authors, in one transaction so a page is kept whole or not at all:
 *   INSERT INTO medias … ON CONFLICT (platform, media_id) DO UPDATE SET <every column>, last_update_at = now()
 *   INSERT INTO creators (platform, user_id, username, full_name) … ON CONFLICT (platform, user_id)
 *     DO UPDATE SET username, full_name, last_update_at   -- metrics from other sources are left alone
 * Rows are written in key order, so concurrent write-throughs of overlapping pages cannot deadlock.
 */
export async function writeThroughMedias(db: Kysely<Database>, medias: readonly FetchedMedia[]): Promise<void> {
  if (medias.length === 0) return;
  const byId = [...new Map(medias.map((media) => [media.mediaId, media])).values()].sort((a, b) => compare(a.mediaId, b.mediaId));
  const authors = [...new Map(medias.map((media) => [media.authorUserId, media])).values()].sort((a, b) =>
    compare(a.authorUserId, b.authorUserId),
  );
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('medias')
      .values(byId.map(mediaRow))
      .onConflict((conflict) =>
        conflict.columns(['platform', 'media_id']).doUpdateSet({
          ...Object.fromEntries(mediaColumns.map((column) => [column, sql.ref(`excluded.${column}`)])),
          last_update_at: sql`now()`,
        }),
      )
      .execute();
    await trx
      .insertInto('creators')
      .values(authors.map(authorRow))
      .onConflict((conflict) =>
        conflict.columns(['platform', 'user_id']).doUpdateSet({
          username: sql.ref('excluded.username'),
          full_name: sql.ref('excluded.full_name'),
          last_update_at: sql`now()`,
        }),
      )
      .execute();
  });
}

// Columns without a database default in the Kysely types get the default's own value (0) here;
// they are only used when the creator is new.
function authorRow(media: FetchedMedia): NewCreator {
  return {
    platform: PHOTO_PLATFORM,
    user_id: media.authorUserId,
    username: media.authorUsername,
    full_name: media.authorNickname,
    follower_count: 0,
    avg_engagement_rate: 0,
    avg_video_engagement_rate: 0,
    avg_comment_count: 0,
    avg_like_count: 0,
    avg_retweet_count: 0,
    avg_view_count: 0,
    retweet_ratio: 0,
    reply_ratio: 0,
    post_count: 0,
    video_count: 0,
    evaluation_min: 0,
    evaluation_max: 0,
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The stored posts of one account, newest first (for tests and future database reads). */
export async function storedMedias(db: Kysely<Database>, authorUserId: string) {
  return db
    .selectFrom('medias')
    .selectAll()
    .where('platform', '=', PHOTO_PLATFORM)
    .where('author_user_id', '=', authorUserId)
    .orderBy('create_at', 'desc')
    .orderBy('media_id', 'desc')
    .execute();
}

/** Posts kept by the write-through, by id on one platform (`node`); ids not stored are left out. */
export async function mediasById(db: Kysely<Database>, mediaIds: readonly string[], platform: string): Promise<FetchedMedia[]> {
  if (mediaIds.length === 0) return [];
  const rows = await executePrepared(
    db,
    db.selectFrom('medias').select(['platform', 'media_id', ...mediaColumns, 'last_update_at']).where('platform', '=', platform).where('media_id', '=', anyOf(mediaIds)),
  );
  return rows.map(toMedia);
}

/** Posts by media id within a platform (the group), one statement for an account's concurrent requests. */
export const mediasByKey: KeyLookup<FetchedMedia> = { name: 'medias', read: mediasById, keyOf: (media) => media.mediaId };

function toMedia(row: MediaRow): FetchedMedia {
  return {
    authorUserId: row.author_user_id,
    authorUsername: row.author_username,
    authorNickname: row.author_nickname,
    mediaId: row.media_id,
    mediaCode: row.media_code,
    createAt: toDate(row.create_at)!,
    coverUrl: row.cover_url,
    resources: row.resources,
    description: row.description,
    accessibilityCaption: row.accessibility_caption,
    mediaUrl: row.media_url,
    mediaType: row.media_type as FetchedMedia['mediaType'],
    duration: row.duration,
    likeCount: toCount(row.like_count),
    commentCount: toCount(row.comment_count),
    playCount: toCount(row.play_count),
  };
}

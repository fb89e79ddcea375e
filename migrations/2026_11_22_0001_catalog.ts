import { sql, type Kysely } from 'kysely';

// The catalogue: category taxonomy, creators, channels, videos, live streams and realtime medias.
// Frozen in time: never import application code here.
//
// Choices that the queries rely on:
// - ids are `text COLLATE "C"` so the final tie-break of every sort compares bytewise;
// - counts are bigint, metrics numeric(20,2) (two decimals, the response format);
// - sort columns are NOT NULL so row-value keyset comparisons never meet a NULL.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);

  await db.schema
    .createTable('categories')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('parent_id', 'integer', (c) => c.references('categories.id'))
    .addColumn('level', 'smallint', (c) => c.notNull().check(sql`level BETWEEN 1 AND 3`))
    .addColumn('name', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('categories_parent_idx').on('categories').column('parent_id').execute();

  await db.schema
    .createTable('creators')
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('user_id', sql`text COLLATE "C"`, (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('full_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('avatar', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('country', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('language', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('gender', 'smallint', (c) => c.notNull().defaultTo(0))
    .addColumn('follower_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('is_verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('has_email', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('avg_engagement_rate', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('avg_video_engagement_rate', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('avg_comment_count', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('avg_like_count', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('avg_retweet_count', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('avg_view_count', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    // decisions.md §2: likes + comments + reposts per post; stored so it can be indexed and filtered.
    .addColumn('avg_engagement_count', sql`numeric(20,2)`, (c) =>
      c.generatedAlwaysAs(sql`avg_like_count + avg_comment_count + avg_retweet_count`).stored(),
    )
    .addColumn('retweet_ratio', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('reply_ratio', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('post_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('video_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_publish_at', 'timestamptz')
    .addColumn('recent_month_publish_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('recent_week_publish_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_post', 'jsonb')
    .addColumn('evaluation_min', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('evaluation_max', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('category_ids', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('last_update_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('creators_pk', ['platform', 'user_id'])
    .execute();
  // One index per documented sort, each ending in the id tie-break, so a keyset page is an index walk.
  await sql`CREATE INDEX creators_followers_idx ON creators (platform, follower_count DESC, user_id DESC)`.execute(db);
  await sql`CREATE INDEX creators_engagement_idx ON creators (platform, avg_engagement_rate DESC, user_id DESC)`.execute(db);
  await sql`CREATE INDEX creators_categories_idx ON creators USING gin (category_ids)`.execute(db);
  await sql`CREATE INDEX creators_username_trgm_idx ON creators USING gin (lower(username) gin_trgm_ops)`.execute(db);
  await sql`CREATE INDEX creators_full_name_trgm_idx ON creators USING gin (lower(full_name) gin_trgm_ops)`.execute(db);
  await sql`CREATE INDEX creators_country_idx ON creators (platform, country, follower_count DESC)`.execute(db);
  await sql`CREATE INDEX creators_last_publish_idx ON creators (platform, last_publish_at)`.execute(db);
  // Every other documented filter: range bounds get a btree each (the planner combines them with
  // bitmap scans); the yes/no filters get partial indexes in the default order.
  for (const column of [
    'language',
    'gender',
    'avg_comment_count',
    'avg_like_count',
    'avg_view_count',
    'avg_engagement_count',
    'avg_video_engagement_rate',
    'recent_month_publish_count',
    'retweet_ratio',
  ]) {
    await sql`CREATE INDEX ${sql.id(`creators_${column}_idx`)} ON creators (platform, ${sql.id(column)})`.execute(db);
  }
  await sql`CREATE INDEX creators_verified_idx ON creators (platform, follower_count DESC, user_id DESC) WHERE is_verified`.execute(db);
  await sql`CREATE INDEX creators_has_email_idx ON creators (platform, follower_count DESC, user_id DESC) WHERE has_email`.execute(db);

  await db.schema
    .createTable('channels')
    .addColumn('channel_id', sql`text COLLATE "C"`, (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('avatar', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('country', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('language', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('gender', 'smallint', (c) => c.notNull().defaultTo(0))
    .addColumn('follower_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('avg_engagement_rate', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('avg_play_count', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('avg_like_count', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('avg_comment_count', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('video_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('recent_month_publish_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('evaluation_min', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('evaluation_max', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('last_update_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // Video search filters on the channel: the planner picks the matching channels here, then their
  // videos through videos_channel_idx.
  for (const column of ['country', 'gender', 'follower_count', 'avg_engagement_rate', 'avg_play_count', 'avg_like_count', 'avg_comment_count', 'recent_month_publish_count']) {
    await sql`CREATE INDEX ${sql.id(`channels_${column}_idx`)} ON channels (${sql.id(column)})`.execute(db);
  }

  await db.schema
    .createTable('videos')
    .addColumn('video_id', sql`text COLLATE "C"`, (c) => c.primaryKey())
    .addColumn('channel_id', sql`text COLLATE "C"`, (c) => c.notNull().references('channels.channel_id'))
    .addColumn('title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('cover_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('create_at', 'timestamptz', (c) => c.notNull())
    .addColumn('duration_seconds', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('video_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('video_type', 'smallint', (c) => c.notNull().defaultTo(1))
    .addColumn('category_id', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('like_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('comment_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('play_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('engagement_rate', sql`numeric(20,2)`, (c) => c.notNull().defaultTo(0))
    .addColumn('last_update_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX videos_newest_idx ON videos (create_at DESC, video_id DESC)`.execute(db);
  await sql`CREATE INDEX videos_channel_idx ON videos (channel_id, create_at DESC)`.execute(db);
  await sql`CREATE INDEX videos_category_idx ON videos (category_id, create_at DESC)`.execute(db);
  await sql`CREATE INDEX videos_type_idx ON videos (video_type, create_at DESC, video_id DESC)`.execute(db);
  await sql`CREATE INDEX videos_relevance_idx ON videos (play_count DESC, video_id DESC)`.execute(db);
  await sql`CREATE INDEX videos_title_trgm_idx ON videos USING gin (lower(title) gin_trgm_ops)`.execute(db);
  await sql`CREATE INDEX videos_description_trgm_idx ON videos USING gin (lower(description) gin_trgm_ops)`.execute(db);

  await db.schema
    .createTable('live_streams')
    .addColumn('id', sql`text COLLATE "C"`, (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('user_login', 'text', (c) => c.notNull())
    .addColumn('user_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('game_id', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('game_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('type', 'text', (c) => c.notNull().defaultTo('live'))
    .addColumn('title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('viewer_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('thumbnail_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('tags', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('is_mature', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('last_update_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX live_streams_viewers_idx ON live_streams (viewer_count DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX live_streams_login_idx ON live_streams (lower(user_login))`.execute(db);
  await sql`CREATE INDEX live_streams_game_idx ON live_streams (game_id, viewer_count DESC)`.execute(db);

  await db.schema
    .createTable('medias')
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('media_id', sql`text COLLATE "C"`, (c) => c.notNull())
    .addColumn('author_user_id', 'text', (c) => c.notNull())
    .addColumn('author_username', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('author_nickname', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('media_code', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('create_at', 'timestamptz', (c) => c.notNull())
    .addColumn('cover_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('resources', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('accessibility_caption', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('media_url', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('media_type', 'smallint', (c) => c.notNull())
    .addColumn('duration', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('like_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('comment_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('play_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_update_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('medias_pk', ['platform', 'media_id'])
    .execute();
  await sql`CREATE INDEX medias_author_idx ON medias (platform, author_user_id, create_at DESC)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['medias', 'live_streams', 'videos', 'channels', 'creators', 'categories']) {
    await db.schema.dropTable(table).execute();
  }
}

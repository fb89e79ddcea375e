import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

// Drivers disagree on int8/numeric (pg: strings, PGlite: numbers or BigInt); rows are typed as
// the union and read through `values.ts`, never used raw in responses.
export type Int8 = ColumnType<string | number | bigint, number | string | bigint, number | string | bigint>;
export type Numeric = ColumnType<string | number, number | string, number | string>;
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamp the database sets when a write leaves it out. */
export type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Defaulted<T> = ColumnType<T, T | undefined, T>;

export interface CategoriesTable {
  id: number;
  parent_id: number | null;
  level: number;
  name: string;
}

export interface LastPost {
  post_id: string;
  description: string;
  create_at: string;
  cover_url: string;
  like_count: number;
  comment_count: number;
  retweet_count: number;
  view_count: number;
}

export interface CreatorsTable {
  platform: string;
  user_id: string;
  username: Defaulted<string>;
  full_name: Defaulted<string>;
  avatar: Defaulted<string>;
  country: Defaulted<string>;
  language: Defaulted<string>;
  gender: Defaulted<number>;
  follower_count: Int8;
  is_verified: Defaulted<boolean>;
  has_email: Defaulted<boolean>;
  avg_engagement_rate: Numeric;
  avg_video_engagement_rate: Numeric;
  avg_comment_count: Numeric;
  avg_like_count: Numeric;
  avg_retweet_count: Numeric;
  avg_view_count: Numeric;
  avg_engagement_count: ColumnType<string | number, never, never>;
  retweet_ratio: Numeric;
  reply_ratio: Numeric;
  post_count: Int8;
  video_count: Int8;
  last_publish_at: Timestamp | null;
  recent_month_publish_count: Defaulted<number>;
  recent_week_publish_count: Defaulted<number>;
  last_post: ColumnType<LastPost | null, string | null, string | null>;
  evaluation_min: Numeric;
  evaluation_max: Numeric;
  category_ids: Defaulted<number[]>;
  last_update_at: GeneratedTimestamp;
}

export interface ChannelsTable {
  channel_id: string;
  title: Defaulted<string>;
  avatar: Defaulted<string>;
  country: Defaulted<string>;
  language: Defaulted<string>;
  gender: Defaulted<number>;
  follower_count: Int8;
  avg_engagement_rate: Numeric;
  avg_play_count: Numeric;
  avg_like_count: Numeric;
  avg_comment_count: Numeric;
  video_count: Int8;
  recent_month_publish_count: Defaulted<number>;
  evaluation_min: Numeric;
  evaluation_max: Numeric;
  last_update_at: GeneratedTimestamp;
}

export interface VideosTable {
  video_id: string;
  channel_id: string;
  title: Defaulted<string>;
  description: Defaulted<string>;
  cover_url: Defaulted<string>;
  create_at: Timestamp;
  duration_seconds: Defaulted<number>;
  video_url: Defaulted<string>;
  video_type: Defaulted<number>;
  category_id: Defaulted<number>;
  like_count: Int8;
  comment_count: Int8;
  play_count: Int8;
  engagement_rate: Numeric;
  last_update_at: GeneratedTimestamp;
}

export interface LiveStreamsTable {
  id: string;
  user_id: string;
  user_login: string;
  user_name: Defaulted<string>;
  game_id: Defaulted<string>;
  game_name: Defaulted<string>;
  type: Defaulted<string>;
  title: Defaulted<string>;
  viewer_count: Int8;
  started_at: Timestamp;
  language: Defaulted<string>;
  thumbnail_url: Defaulted<string>;
  tags: Defaulted<string[]>;
  is_mature: Defaulted<boolean>;
  last_update_at: GeneratedTimestamp;
}

export interface MediasTable {
  platform: string;
  media_id: string;
  author_user_id: string;
  author_username: Defaulted<string>;
  author_nickname: Defaulted<string>;
  media_code: Defaulted<string>;
  create_at: Timestamp;
  cover_url: Defaulted<string>;
  resources: Defaulted<string[]>;
  description: Defaulted<string>;
  accessibility_caption: Defaulted<string>;
  media_url: Defaulted<string>;
  media_type: number;
  duration: Defaulted<number>;
  like_count: Int8;
  comment_count: Int8;
  play_count: Int8;
  last_update_at: GeneratedTimestamp;
}

export interface PlansTable {
  id: string;
  endpoints: string[];
  quota_units: Int8;
  rate_per_second: number;
  burst: number;
  max_in_flight: number;
}

export interface AccountsTable {
  id: string;
  plan_id: string;
  quota_allowance: Int8;
  quota_used: ColumnType<string | number | bigint, number | undefined, number>;
  rate_per_second: number | null;
  subscription_ends_at: Timestamp | null;
  created_at: Generated<Date>;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  prefix: string;
  key_hash: Buffer;
  status: Defaulted<'active' | 'disabled' | 'deleted'>;
  created_at: Generated<Date>;
  rotated_at: Timestamp | null;
}

export interface ServiceSecretsTable {
  name: string;
  secret: Buffer;
}

export interface CatalogChangesTable {
  id: Generated<string | number | bigint>;
  entity: string;
  platform: string | null;
  key: string | null;
  txid: Generated<string>;
  changed_at: Generated<Date>;
}

/** One row: the highest change id and transaction id (xid8 as a number) the feed's pruning deleted. */
export interface ChangePrunedTable {
  id: Generated<boolean>;
  max_id: string | number | bigint;
  max_txid: string | number | bigint;
}

/** Readers the change feed's pruning keeps their unread changes for: a search index loading (holdFeed). */
export interface ChangeReadersTable {
  reader: string;
  last_id: string | number | bigint;
  /** xid8 values, as text. */
  running: string[];
  renewed_at: Generated<Date>;
}

/** Samples of the transaction horizon, for pruning the change feed (ChangePruner). */
export interface ChangeHorizonsTable {
  id: Generated<string | number | bigint>;
  sampled_at: Generated<Date>;
  /** xid8, as text. */
  horizon: string;
}

export interface QuotaLeasesTable {
  id: string;
  account_id: string;
  granted: Int8;
  used: ColumnType<string | number | bigint, number | undefined, number>;
  renewed_at: Generated<Date>;
}

export interface QuotaRefundsTable {
  id: string;
  account_id: string;
  units: Int8;
  written_at: Generated<Date>;
}

export interface Database {
  catalog_changes: CatalogChangesTable;
  change_horizons: ChangeHorizonsTable;
  change_pruned: ChangePrunedTable;
  change_readers: ChangeReadersTable;
  quota_leases: QuotaLeasesTable;
  quota_refunds: QuotaRefundsTable;
  plans: PlansTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  service_secrets: ServiceSecretsTable;
  categories: CategoriesTable;
  creators: CreatorsTable;
  channels: ChannelsTable;
  videos: VideosTable;
  live_streams: LiveStreamsTable;
  medias: MediasTable;
}

export type CategoryRow = Selectable<CategoriesTable>;
export type CreatorRow = Selectable<CreatorsTable>;
export type NewCreator = Insertable<CreatorsTable>;
export type ChannelRow = Selectable<ChannelsTable>;
export type NewChannel = Insertable<ChannelsTable>;
export type VideoRow = Selectable<VideosTable>;
export type NewVideo = Insertable<VideosTable>;
export type LiveStreamRow = Selectable<LiveStreamsTable>;
export type NewLiveStream = Insertable<LiveStreamsTable>;
export type MediaRow = Selectable<MediasTable>;
export type NewMedia = Insertable<MediasTable>;

/** `Columns` when it names every column of `Table`, else a type no list satisfies, naming the missing ones. */
type EveryColumn<Table, Columns extends readonly PropertyKey[]> =
  Exclude<keyof Table, Columns[number]> extends never ? Columns : { missing: Exclude<keyof Table, Columns[number]> };

/**
 * Every column of a table by name, for the statements that must not say `*`: a prepared one
 * (src/store/prepared.ts) would change its result when a migration adds a column, and PostgreSQL
 * refuses to run such a statement again. The compiler checks the list is complete.
 */
const columnsOf =
  <Table>() =>
  <const Columns extends readonly (keyof Table & string)[]>(columns: Columns & EveryColumn<Table, Columns>): Columns =>
    columns;

export const creatorColumns = columnsOf<CreatorsTable>()([
  'platform', 'user_id', 'username', 'full_name', 'avatar', 'country', 'language', 'gender', 'follower_count',
  'is_verified', 'has_email', 'avg_engagement_rate', 'avg_video_engagement_rate', 'avg_comment_count', 'avg_like_count',
  'avg_retweet_count', 'avg_view_count', 'avg_engagement_count', 'retweet_ratio', 'reply_ratio', 'post_count',
  'video_count', 'last_publish_at', 'recent_month_publish_count', 'recent_week_publish_count', 'last_post',
  'evaluation_min', 'evaluation_max', 'category_ids', 'last_update_at',
]);
export const channelColumns = columnsOf<ChannelsTable>()([
  'channel_id', 'title', 'avatar', 'country', 'language', 'gender', 'follower_count', 'avg_engagement_rate',
  'avg_play_count', 'avg_like_count', 'avg_comment_count', 'video_count', 'recent_month_publish_count',
  'evaluation_min', 'evaluation_max', 'last_update_at',
]);
export const videoColumns = columnsOf<VideosTable>()([
  'video_id', 'channel_id', 'title', 'description', 'cover_url', 'create_at', 'duration_seconds', 'video_url',
  'video_type', 'category_id', 'like_count', 'comment_count', 'play_count', 'engagement_rate', 'last_update_at',
]);
export const liveStreamColumns = columnsOf<LiveStreamsTable>()([
  'id', 'user_id', 'user_login', 'user_name', 'game_id', 'game_name', 'type', 'title', 'viewer_count', 'started_at',
  'language', 'thumbnail_url', 'tags', 'is_mature', 'last_update_at',
]);

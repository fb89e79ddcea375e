// The documented orders (docs/contract/decisions.md §2): every one descending, the id last as the tie-break
// (bytewise, as COLLATE "C"), so pages never overlap or skip. An order's name tags its cursors; its
// key types let a cursor's values be checked before they reach SQL or the index. The store adds
// the SQL expressions (src/store/*.ts), the search index its own sorted orders (src/search/).

export interface Order {
  /** A name that makes cursors of one order unusable with another. */
  name: string;
  /** The sort keys, most significant first; the last is the unique id. */
  keys: readonly { type: KeyType }[];
}

const order = (name: string, ...types: KeyType[]): Order => ({ name, keys: types.map((type) => ({ type })) });

export const creatorSorts = ['RELEVANCE', 'FOLLOWER_COUNT', 'ENGAGEMENT_RATE'] as const;
export type CreatorSort = (typeof creatorSorts)[number];

export const creatorOrders: Record<CreatorSort, Order> = {
  // An exact username first, then username prefixes, then full-name prefixes, then any match; then followers.
  RELEVANCE: order('c:relevance', 'integer', 'integer', 'text'),
  FOLLOWER_COUNT: order('c:followers', 'integer', 'text'),
  ENGAGEMENT_RATE: order('c:engagement', 'decimal', 'text'),
};

export const videoSorts = ['RELEVANCE', 'NEWEST'] as const;
export type VideoSort = (typeof videoSorts)[number];

export const videoOrders: Record<VideoSort, Order> = {
  // Exact title, title prefix, title substring, then description-only matches; then plays.
  RELEVANCE: order('v:relevance', 'integer', 'integer', 'text'),
  NEWEST: order('v:newest', 'timestamp', 'text'),
};

/** Live streams: viewer count, then id. */
export const liveStreamOrder: Order = order('ls:viewers', 'integer', 'text');

/** What a sort expression holds, so a cursor's values can be checked before they reach SQL. */
export type KeyType = 'integer' | 'decimal' | 'timestamp' | 'text';

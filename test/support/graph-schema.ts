import { buildSchema } from 'graphql';

/**
 * The graph of docs/contract/decisions.md §6.1 in SDL, trimmed to what prices read (names, lists,
 * arguments): the price walker is tested against it while the lookups, relations and facets are
 * built in parallel. Once they land the same documents are priced against the real schema.
 */
export const graphSchema = buildSchema(`
  interface Node { id: ID! }
  type PageInfo { hasNextPage: Boolean! endCursor: String }
  type FacetCount { value: String! label: String count: Int! }
  type RangeCount { min: Float max: Float count: Int! }

  type Category implements Node { id: ID! categoryId: Int! name: String! level: Int! parent: Category children: [Category!]! }
  type Creator implements Node { id: ID! userId: String! username: String! categories: [Category!]! }
  type Channel implements Node {
    id: ID! channelId: String! title: String!
    videos(filter: VideoFilter, sortBy: String, first: Int, after: String, last: Int, before: String, offset: Int): VideoConnection!
  }
  type Video implements Node { id: ID! videoId: String! title: String! channel: Channel! category: Category }
  type Media implements Node { id: ID! mediaId: String! }
  type LiveStream { id: String! title: String! }
  type RealtimeMediaPage { more: Boolean! offset: String! medias: [Media!]! }

  input VideoFilter { query: String }
  input CreatorFilter { query: String }

  type CreatorFacets {
    country(excludeOwn: Boolean = false): [FacetCount!]!
    language(excludeOwn: Boolean = false): [FacetCount!]!
    gender(excludeOwn: Boolean = false): [FacetCount!]!
    category(excludeOwn: Boolean = false): [FacetCount!]!
    verified(excludeOwn: Boolean = false): [FacetCount!]!
    hasEmail(excludeOwn: Boolean = false): [FacetCount!]!
    followerCount(edges: [Int!]!, excludeOwn: Boolean = false): [RangeCount!]!
    avgEngagementRate(edges: [Float!]!, excludeOwn: Boolean = false): [RangeCount!]!
  }
  type VideoFacets { category(excludeOwn: Boolean = false): [FacetCount!]! videoType(excludeOwn: Boolean = false): [FacetCount!]! channelCountry(excludeOwn: Boolean = false): [FacetCount!]! month(excludeOwn: Boolean = false): [FacetCount!]! }
  type LiveStreamFacets { game(excludeOwn: Boolean = false): [FacetCount!]! language(excludeOwn: Boolean = false): [FacetCount!]! }

  type CreatorEdge { cursor: String! node: Creator! }
  type VideoEdge { cursor: String! node: Video! }
  type LiveStreamEdge { cursor: String! node: LiveStream! }
  type CreatorConnection { totalCount: Int! pageInfo: PageInfo! edges: [CreatorEdge!]! nodes: [Creator!]! facets: CreatorFacets! }
  type VideoConnection { totalCount: Int! pageInfo: PageInfo! edges: [VideoEdge!]! nodes: [Video!]! facets: VideoFacets! }
  type LiveStreamConnection { totalCount: Int! pageInfo: PageInfo! edges: [LiveStreamEdge!]! nodes: [LiveStream!]! facets: LiveStreamFacets! }

  type Account { plan: String! quotaRemaining: Int! }

  type Query {
    creators(filter: CreatorFilter, first: Int, last: Int, after: String, before: String, offset: Int): CreatorConnection
    videos(filter: VideoFilter, first: Int, last: Int, after: String, before: String, offset: Int): VideoConnection
    liveStreams(first: Int, last: Int, after: String, before: String): LiveStreamConnection
    realtimeMedias(userId: String!, offset: String): RealtimeMediaPage
    viewer: Account
    creator(userId: String!): Creator
    channel(channelId: String!): Channel
    video(videoId: String!): Video
    category(categoryId: Int!): Category
    node(id: ID!): Node
    nodes(ids: [ID!]!): [Node]!
    categories(level: Int, parentId: Int): [Category!]!
  }
`);

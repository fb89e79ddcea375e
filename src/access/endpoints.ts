// The metered endpoints (docs/contract/decisions.md §1): the id a plan names, and the units a success costs.
export const endpoints = {
  'search.creators': { cost: 100 },
  'search.videos': { cost: 100 },
  'live.search': { cost: 1 },
  'realtime.medias': { cost: 100 },
  ping: { cost: 0 },
  // GraphQL only: lookups by key (creator, channel, video, category, node, nodes), 1 unit a key.
  'graph.lookup': { cost: 1 },
} as const;

export type EndpointId = keyof typeof endpoints;
export const endpointIds = Object.keys(endpoints) as EndpointId[];
/** The endpoints a REST route answers (lookups by key are GraphQL's alone). */
export type RestEndpointId = Exclude<EndpointId, 'graph.lookup'>;

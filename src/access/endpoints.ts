// The metered endpoints (docs/contract/decisions.md §1): the id a plan names, and the units a success costs.
export const endpoints = {
  'search.creators': { cost: 100 },
  'search.videos': { cost: 100 },
  'live.search': { cost: 1 },
  'realtime.medias': { cost: 100 },
  ping: { cost: 0 },
  'graph.lookup': { cost: 1 },
} as const;

export type EndpointId = keyof typeof endpoints;
/** The endpoints only GraphQL fields are charged to (lookups by key): no REST route names them. */
export type RestEndpointId = Exclude<EndpointId, 'graph.lookup'>;
export const endpointIds = Object.keys(endpoints) as EndpointId[];

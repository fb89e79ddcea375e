import type { GraphQLResolveInfo } from 'graphql';
import type { Page } from '../domain/cursors.js';
import type { FacetAnswer, FacetRequest } from '../domain/facets.js';
import type { Order } from '../domain/orders.js';
import type { RowCache } from '../search/row-cache.js';
import { cursorAt } from '../search/tables/paging.js';
import type { IndexPage } from '../search/types.js';
import { builder } from './builder.js';
import { facetSource, type FacetSource, type FacetsDefinition } from './facets.js';
import { selectsField } from './selections.js';

// Relay connections with `totalCount` and `nodes`. Hand-built rather than @pothos/plugin-relay's
// because ours also take `offset` (the REST page window) and count only when asked.

export interface ConnectionResult<Node> {
  page: Page<Node>;
  totalCount: () => number | Promise<number>;
  /** A search connection's facets, counted from the filter that gives totalCount. */
  facets?: FacetSource;
}

export const PageInfo = builder.objectRef<Page<unknown>>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    hasPreviousPage: t.exposeBoolean('hasPreviousPage'),
    startCursor: t.string({ nullable: true, resolve: (page) => page.cursors[0] ?? null }),
    endCursor: t.string({ nullable: true, resolve: (page) => page.cursors.at(-1) ?? null }),
  }),
});

type ArgFactory = { int: () => unknown; string: () => unknown };

/** Relay's cursor arguments, the same on every connection field. */
export function cursorArgs<A extends ArgFactory>(arg: A) {
  const int = () => arg.int() as ReturnType<A['int']>;
  const string = () => arg.string() as ReturnType<A['string']>;
  return { first: int(), last: int(), after: string(), before: string() };
}

/** The cursor arguments and `offset`, which mirrors the REST page window (searches with a total). */
export function pageArgs<A extends ArgFactory>(arg: A) {
  return { ...cursorArgs(arg), offset: arg.int() as ReturnType<A['int']> };
}

export function connectionType<Node>(name: string, nodeType: Parameters<typeof builder.objectRef<Node>>[0] | any, facets?: FacetsDefinition) {
  const edge = builder.objectRef<{ cursor: string; node: Node }>(`${name}Edge`).implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.field({ type: nodeType, resolve: (e) => e.node as never }),
    }),
  });
  return builder.objectRef<ConnectionResult<Node>>(`${name}Connection`).implement({
    fields: (t) => ({
      totalCount: t.field({
        type: 'SafeInt',
        description: 'Exact number of matches for the filter',
        resolve: (c) => c.totalCount(),
      }),
      pageInfo: t.field({ type: PageInfo, resolve: (c) => c.page as Page<unknown> }),
      edges: t.field({
        type: [edge],
        resolve: (c) => c.page.rows.map((node, i) => ({ node, cursor: c.page.cursors[i] })),
      }),
      nodes: t.field({ type: [nodeType], resolve: (c) => c.page.rows as never }),
      ...(facets
        ? {
            facets: t.field({
              type: facets.type,
              description: 'Exact counts of the matches by value or range, from the filter that gives totalCount',
              resolve: (c) => {
                if (!c.facets) throw new Error(`${name}Connection resolved without facets`);
                return c.facets;
              },
            }),
          }
        : {}),
    }),
  });
}

/**
 * Runs the page query, and the count at the same time when the operation selects totalCount
 * (otherwise the count never runs).
 */
export async function connection<Node>(
  info: GraphQLResolveInfo,
  fetchPage: () => Promise<Page<Node>>,
  count: () => Promise<number>,
): Promise<ConnectionResult<Node>> {
  let counting: Promise<number> | null = selectsTotalCount(info) ? count() : null;
  // Avoid an unhandled rejection if the page query fails first; totalCount re-raises it.
  counting?.catch(() => {});
  const page = await fetchPage();
  return { page, totalCount: () => (counting ??= count()) };
}

/**
 * A connection from the in-memory index when it has the table loaded (the page's ids and the exact
 * total, then the rows read by key), else from SQL. A row deleted since the index last read the
 * change feed is left out of the page. `found` is the index's answer to the search with the
 * facets the operation asks (requestedFacets, src/schema/facets.ts): the index counts them with
 * the page; SQL runs them beside the page.
 */
export async function searchConnection<Node, F extends string = string>(
  info: GraphQLResolveInfo,
  found: Promise<IndexPage | null> | null,
  source: {
    /** The search's order: the index answers each row's place in it, and cursors are made from that when asked. */
    order: Order;
    facets: {
      /** What the operation asks of this connection (also given to the index's search). */
      requested: readonly FacetRequest<F>[];
      /** The SQL path's counts, one GROUP BY statement per facet. */
      sql: (requests: readonly FacetRequest<F>[]) => Promise<FacetAnswer[]>;
    };
    rowsById: (ids: string[]) => Promise<Node[]>;
    idOf: (node: Node) => string;
    /** Rows already read for earlier pages (kept fresh by the index's change feed). */
    cache?: RowCache<Node>;
    sqlPage: () => Promise<Page<Node>>;
    sqlCount: () => Promise<number>;
  },
): Promise<ConnectionResult<Node>> {
  const { requested } = source.facets;
  const alone = facetAlone(source.facets.sql);
  const indexed = await found;
  if (!indexed) {
    const facets = sqlFacetSource(requested, alone);
    return { ...(await connection(info, source.sqlPage, source.sqlCount)), facets };
  }
  const rows = source.cache ? await source.cache.read(indexed.ids, source.rowsById, source.idOf) : await source.rowsById(indexed.ids);
  return indexedConnection(indexed, rows, source.order, source.idOf, requested, alone, source.sqlCount);
}

/**
 * A connection from the index's page and its rows (a row deleted since the index last read the
 * change feed left out): its facets as the index counted them, a facet it did not count by
 * `countAlone`, and its total as counted, or by `sqlCount` when the search was told none is asked
 * (selectsTotalCount) and it is after all.
 */
export function indexedConnection<Node>(
  indexed: IndexPage,
  rows: Node[],
  order: Order,
  idOf: (node: Node) => string,
  requested: readonly FacetRequest[],
  countAlone: (request: FacetRequest) => Promise<FacetAnswer>,
  sqlCount: () => Promise<number>,
): ConnectionResult<Node> {
  const counted = indexed.facets ?? [];
  return {
    page: new IndexedPage(indexed, rows, order, idOf),
    totalCount: () => indexed.total ?? sqlCount(),
    facets: facetSource(
      requested.slice(0, counted.length),
      counted.map((answer) => Promise.resolve(answer)),
      countAlone,
    ),
  };
}

/** A page of the index: its cursors are made on first read, from the rows' places (most pages never show one: REST, nested `nodes`). */
class IndexedPage<Node> implements Page<Node> {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  #cursors: string[] | null = null;

  constructor(
    private readonly indexed: IndexPage,
    readonly rows: Node[],
    private readonly order: Order,
    private readonly idOf: (node: Node) => string,
  ) {
    this.hasNextPage = indexed.hasNextPage;
    this.hasPreviousPage = indexed.hasPreviousPage;
  }

  get cursors(): string[] {
    if (this.#cursors) return this.#cursors;
    const rowOf = new Map(this.indexed.ids.map((id, row) => [id, row]));
    return (this.#cursors = this.rows.map((node) => cursorAt(this.order, this.indexed, rowOf.get(this.idOf(node))!)));
  }
}

/** One facet counted alone by `sql` (one GROUP BY statement per facet it is given). */
export function facetAlone<F extends string>(sql: (requests: readonly FacetRequest<F>[]) => Promise<FacetAnswer[]>): (request: FacetRequest) => Promise<FacetAnswer> {
  return (request) => sql([request as FacetRequest<F>]).then((answers) => answers[0]);
}

/**
 * The SQL path's facets: every one asked is started now, beside the page. As for the count, a
 * failed page re-raises first; a failed facet re-raises when it is asked for.
 */
export function sqlFacetSource(requested: readonly FacetRequest[], countAlone: (request: FacetRequest) => Promise<FacetAnswer>): FacetSource {
  const answers = requested.map(countAlone);
  for (const answer of answers) answer.catch(() => {});
  return facetSource(requested, answers, countAlone);
}

/** Whether the operation selects this connection field's totalCount (every merged node, fragments, @skip/@include). */
export function selectsTotalCount(info: GraphQLResolveInfo): boolean {
  return selectsField(info, 'totalCount');
}

import type { GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import type { Page } from '../domain/cursors.js';
import type { RowCache } from '../search/row-cache.js';
import type { IndexPage } from '../search/types.js';
import { builder } from './builder.js';

// Relay connections with `totalCount` and `nodes`. Hand-built rather than @pothos/plugin-relay's
// because ours also take `offset` (the REST page window) and count only when asked.

export interface ConnectionResult<Node> {
  page: Page<Node>;
  totalCount: () => Promise<number>;
}

export const PageInfo = builder.objectRef<Page<unknown>>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    hasPreviousPage: t.exposeBoolean('hasPreviousPage'),
    startCursor: t.string({ nullable: true, resolve: (page) => page.cursors[0] ?? null }),
    endCursor: t.string({ nullable: true, resolve: (page) => page.cursors.at(-1) ?? null }),
  }),
});

export function connectionType<Node>(name: string, nodeType: Parameters<typeof builder.objectRef<Node>>[0] | any) {
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
  let counting: Promise<number> | null = selects(info, info.fieldNodes[0].selectionSet, 'totalCount') ? count() : null;
  // Avoid an unhandled rejection if the page query fails first; totalCount re-raises it.
  counting?.catch(() => {});
  const page = await fetchPage();
  return { page, totalCount: () => (counting ??= count()) };
}

/**
 * A connection from the in-memory index when it has the table loaded (the page's ids and the exact
 * total, then the rows read by key), else from SQL. A row deleted since the index last read the
 * change feed is left out of the page.
 */
export async function searchConnection<Node>(
  info: GraphQLResolveInfo,
  found: Promise<IndexPage | null> | null,
  source: {
    rowsById: (ids: string[]) => Promise<Node[]>;
    idOf: (node: Node) => string;
    /** Rows already read for earlier pages (kept fresh by the index's change feed). */
    cache?: RowCache<Node>;
    sqlPage: () => Promise<Page<Node>>;
    sqlCount: () => Promise<number>;
  },
): Promise<ConnectionResult<Node>> {
  const indexed = await found;
  if (!indexed) return connection(info, source.sqlPage, source.sqlCount);
  const rows = source.cache ? await source.cache.read(indexed.ids, source.rowsById, source.idOf) : await source.rowsById(indexed.ids);
  const cursorOf = new Map(indexed.ids.map((id, i) => [id, indexed.cursors[i]]));
  const page: Page<Node> = {
    rows,
    cursors: rows.map((row) => cursorOf.get(source.idOf(row))!),
    hasNextPage: indexed.hasNextPage,
    hasPreviousPage: indexed.hasPreviousPage,
  };
  return { page, totalCount: async () => indexed.total };
}

function selects(info: GraphQLResolveInfo, set: SelectionSetNode | undefined, field: string): boolean {
  return (set?.selections ?? []).some((selection) => {
    if (selection.kind === 'Field') return selection.name.value === field;
    if (selection.kind === 'InlineFragment') return selects(info, selection.selectionSet, field);
    return selects(info, info.fragments[selection.name.value]?.selectionSet, field);
  });
}

import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getArgumentValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  getVariableValues,
  type GraphQLField,
  GraphQLError,
  type GraphQLObjectType,
  type GraphQLSchema,
  isAbstractType,
  isListType,
  isObjectType,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import { type EndpointId, endpoints } from '../access/endpoints.js';
import { ApiError } from '../domain/errors.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../inputs/common.js';
import { included } from './selections.js';

// The price of a GraphQL operation, known before any work (docs/contract/decisions.md §6.1): read
// from the document and its variables as an upper bound (every list assumed full), refused over the
// bounds, and charged per root field on success. The tables below are the one statement of the
// prices: the walker, docs/graphql.md and test/graphql-price.test.ts all read them.

/** How a field is priced, for each place it may be resolved. Fields not listed cost nothing. */
export interface FieldPrice {
  /** Units for each place the field may be resolved. */
  units?: number;
  /** Units for each element of this list argument (`nodes(ids)`: one per id). */
  perArgumentItem?: { argument: string; units: number };
  /** Units for each field selected below it (`facets`: one per facet asked, aliases apart). */
  perSubfield?: number;
  /** The endpoint id a root field is metered under: the plan must name it (checked by a dry run too). */
  endpoint?: EndpointId;
}

const lookup: FieldPrice = { units: endpoints['graph.lookup'].cost, endpoint: 'graph.lookup' };
const facets: FieldPrice = { perSubfield: 1 };
const free: FieldPrice = { units: 0 };

/** Prices keyed `Type.field`; the free fields of §6.1 are listed too, so the table reads as the decision does. */
export const prices: Readonly<Record<string, FieldPrice>> = {
  'Query.creators': { units: endpoints['search.creators'].cost, endpoint: 'search.creators' },
  'Query.videos': { units: endpoints['search.videos'].cost, endpoint: 'search.videos' },
  'Query.realtimeMedias': { units: endpoints['realtime.medias'].cost, endpoint: 'realtime.medias' },
  'Query.liveStreams': { units: endpoints['live.search'].cost, endpoint: 'live.search' },
  'Query.creator': lookup,
  'Query.channel': lookup,
  'Query.video': lookup,
  'Query.category': lookup,
  'Query.node': lookup,
  'Query.nodes': { perArgumentItem: { argument: 'ids', units: endpoints['graph.lookup'].cost }, endpoint: 'graph.lookup' },
  // A nested connection: one search for each parent it is resolved under.
  'Channel.videos': { units: 1 },
  'CreatorConnection.facets': facets,
  'VideoConnection.facets': facets,
  'LiveStreamConnection.facets': facets,
  'Query.viewer': free,
  'Query.categories': free,
  'Video.channel': free,
  'Video.category': free,
  'Creator.categories': free,
  'Category.parent': free,
  'Category.children': free,
};

/** How many elements a list field may hold; `counted: false` lists do not count towards MAX_NODES. */
export interface ListBound {
  /** At most this many, or the length of `argument` (capped at max). */
  max: number;
  argument?: string;
  counted?: boolean;
}

/** `nodes(ids)` takes at most this many ids. */
export const MAX_IDS_PER_LOOKUP = 100;
/** The most elements an aggregate or taxonomy list is assumed to hold (see elementBounds). */
export const SMALL_LIST_BOUND = 1_000;
/** The most posts one realtime page holds (the platform's pages are a dozen or so). */
export const MEDIA_PAGE_BOUND = 100;

/**
 * Lists that are not a connection's page (a connection's `edges` and `nodes` hold its `first` or
 * `last`, default DEFAULT_PAGE_SIZE), by field. A list found in neither table counts as MAX_PAGE_SIZE.
 */
export const listBounds: Readonly<Record<string, ListBound>> = {
  'Query.nodes': { max: MAX_IDS_PER_LOOKUP, argument: 'ids' },
  'RealtimeMediaPage.medias': { max: MEDIA_PAGE_BOUND },
};

/**
 * Lists by the type of their elements. Categories are a small taxonomy answered from memory and
 * tree-shaped (a few children each); facet buckets are counts the index already holds. Both
 * multiply whatever is priced below them, but are not counted as nodes: counting
 * `categories { children { children { name } } }` as a billion would refuse the query that shows the tree.
 */
export const elementBounds: Readonly<Record<string, ListBound>> = {
  Category: { max: SMALL_LIST_BOUND, counted: false },
  FacetCount: { max: SMALL_LIST_BOUND, counted: false },
  RangeCount: { max: SMALL_LIST_BOUND, counted: false },
};

export interface OperationPrice {
  /** Units the whole operation costs on success. */
  units: number;
  /** Each root field's share, by response key (its alias when it has one). */
  roots: Map<string, number>;
  /** The endpoint each priced root field is metered under, by response key. */
  endpoints: Map<string, EndpointId>;
  /** How many list elements the operation could return in all. */
  nodes: number;
  /** The operation with its metered root fields only (a dry run runs them up to their charge); made when asked. */
  metered(): DocumentNode;
}

interface Measure {
  units: number;
  nodes: number;
}

const ZERO: Measure = { units: 0, nodes: 0 };

/**
 * The price of the operation `operationName` of `document` with `variables`, or null when it
 * cannot be priced because its variables do not coerce (then it cannot run either: execution
 * reports them before any field). A directive argument that does not coerce throws a 400. Introspection
 * fields cost nothing. A field of an abstract type (`node`, `nodes`) is priced for the dearest of
 * the types it may resolve to.
 */
export function priceOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): OperationPrice | null {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return null;
  const rootType = schema.getRootType(operation.operation);
  if (!rootType) return null;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {});
  if (coerced.errors) return null;
  const fragments: Record<string, FragmentDefinitionNode> = Object.create(null);
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  const walker = new Walker(schema, fragments, coerced.coerced);
  const price: Omit<OperationPrice, 'metered'> = { units: 0, roots: new Map(), endpoints: new Map(), nodes: 0 };
  const metered: FieldNode[] = [];
  try {
    for (const [key, nodes] of walker.collect(rootType, [operation.selectionSet])) {
      const field = rootType.getFields()[nodes[0].name.value];
      if (!field) continue;
      const measure = walker.field(rootType, field, nodes, null);
      price.roots.set(key, measure.units);
      const endpoint = prices[`${rootType.name}.${field.name}`]?.endpoint;
      if (endpoint) {
        price.endpoints.set(key, endpoint);
        metered.push(...nodes);
      }
      price.units += measure.units;
      price.nodes += measure.nodes;
    }
  } catch (error) {
    // A directive given null where it takes none (`@skip(if: $v)` with `$v` null): graphql-js
    // would fail that field alone and run the others, graphql-jit takes the null as "skip", and
    // ran them unpriced. The operation is refused before anything runs.
    if (error instanceof GraphQLError) throw ApiError.badRequest([{ field: 'query', message: error.message }]);
    throw error;
  }
  // Only a dry run needs it: not built on every operation's way in.
  const meteredDocument = (): DocumentNode => {
    const selectionSet = { kind: Kind.SELECTION_SET, selections: metered } as const;
    return { ...document, definitions: document.definitions.map((definition) => (definition === operation ? { ...operation, selectionSet } : definition)) };
  };
  return { ...price, metered: meteredDocument };
}

class Walker {
  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Record<string, FragmentDefinitionNode>,
    private readonly variables: Record<string, unknown>,
  ) {}

  /**
   * The fields `sets` select on an object of type `type`, by response key, as execution groups
   * them: fragments expanded where their type condition matches, @skip/@include obeyed, a field
   * asked twice under one key executed (and priced) once.
   */
  collect(type: GraphQLObjectType, sets: readonly SelectionSetNode[]): Map<string, FieldNode[]> {
    const fields = new Map<string, FieldNode[]>();
    const visited = new Set<string>();
    const visit = (set: SelectionSetNode) => {
      for (const selection of set.selections) {
        if (!included(selection, this.variables)) continue;
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          fields.set(key, [...(fields.get(key) ?? []), selection]);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (this.matches(selection.typeCondition?.name.value, type)) visit(selection.selectionSet);
        } else {
          const name = selection.name.value;
          const fragment = this.fragments[name];
          if (visited.has(name) || !fragment || !this.matches(fragment.typeCondition.name.value, type)) continue;
          visited.add(name);
          visit(fragment.selectionSet);
        }
      }
    };
    for (const set of sets) visit(set);
    return fields;
  }

  private matches(condition: string | undefined, type: GraphQLObjectType): boolean {
    if (condition === undefined) return true;
    const conditionType = this.schema.getType(condition);
    if (!conditionType) return false;
    if (conditionType === type) return true;
    return isAbstractType(conditionType) && this.schema.isSubType(conditionType, type);
  }

  /**
   * What `field` (selected by `nodes` on `parent`) costs in one place, with everything below it.
   * `pageSize`: the page of the connection `parent` is, for its `edges` and `nodes`.
   */
  field(parent: GraphQLObjectType, field: GraphQLField<unknown, unknown>, nodes: readonly FieldNode[], pageSize: number | null): Measure {
    const key = `${parent.name}.${field.name}`;
    const price = prices[key];
    const type = getNullableType(field.type);
    const named = getNamedType(type);
    const leaf = !isObjectType(named) && !isAbstractType(named);
    // Most fields of a document are unpriced scalars: nothing below them, no argument read.
    if (leaf && !price) return ZERO;
    const args = argumentsOf(field, nodes[0], this.variables);
    let units = price?.units ?? 0;
    if (price?.perArgumentItem) units += price.perArgumentItem.units * lengthOf(args[price.perArgumentItem.argument], MAX_IDS_PER_LOOKUP);

    if (leaf) return { units, nodes: 0 };
    const possible = isAbstractType(named) ? this.schema.getPossibleTypes(named) : [named];
    // A connection's edges and nodes hold its page; other lists their bound.
    const page = isConnection(named) ? pageSizeOf(args) : null;
    let below = ZERO;
    for (const runtimeType of possible) {
      const subfields = this.collect(runtimeType, nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : [])));
      if (price?.perSubfield) {
        const asked = [...subfields.values()].filter((selected) => selected[0].name.value !== '__typename').length;
        units = Math.max(units, (price.units ?? 0) + price.perSubfield * asked);
      }
      let measure = { units: 0, nodes: 0 };
      for (const selected of subfields.values()) {
        const subfield = runtimeType.getFields()[selected[0].name.value];
        if (!subfield) continue;
        const sub = this.field(runtimeType, subfield, selected, page);
        measure = { units: measure.units + sub.units, nodes: measure.nodes + sub.nodes };
      }
      below = { units: Math.max(below.units, measure.units), nodes: Math.max(below.nodes, measure.nodes) };
    }
    if (!isListType(type)) {
      return { units: units + below.units, nodes: below.nodes };
    }
    const bound = listBounds[key] ?? elementBounds[named.name];
    const count = bound ? (bound.argument ? lengthOf(args[bound.argument], bound.max) : bound.max) : (pageSize ?? MAX_PAGE_SIZE);
    const counted = bound?.counted ?? true;
    return { units: units + count * below.units, nodes: (counted ? count : 0) + count * below.nodes };
  }
}

/**
 * The field's arguments; none when one is given null where it takes none (`edges: $e` with `$e`
 * null): that field fails when it runs, its resolver naming the argument, so nothing below it
 * runs, and the defaults price it from above.
 */
function argumentsOf(field: GraphQLField<unknown, unknown>, node: FieldNode, variables: Record<string, unknown>): Record<string, unknown> {
  try {
    return getArgumentValues(field, node, variables);
  } catch (error) {
    if (error instanceof GraphQLError) return {};
    throw error;
  }
}

/** A Relay connection: its `edges` and `nodes` hold one page. */
const isConnection = (type: unknown): type is GraphQLObjectType => isObjectType(type) && 'pageInfo' in type.getFields();

/** `first` or `last` (the larger when both are given), else the default page; never over MAX_PAGE_SIZE (validation refuses more). */
function pageSizeOf(args: Record<string, unknown>): number {
  const sizes = [args.first, args.last].filter((size): size is number => typeof size === 'number');
  if (sizes.length === 0) return DEFAULT_PAGE_SIZE;
  return Math.min(Math.max(0, ...sizes), MAX_PAGE_SIZE);
}

const lengthOf = (value: unknown, max: number) => Math.min(Array.isArray(value) ? value.length : value == null ? 0 : 1, max);

/** The bounds of one operation: 10,000 units and 50,000 nodes (GRAPHQL_MAX_UNITS, GRAPHQL_MAX_NODES in src/config.ts). */
export interface PriceBounds {
  maxOperationUnits: number;
  maxOperationNodes: number;
}

/** Why the operation is refused before anything is reserved (400), naming the bound and the figure; null when within both. */
export function boundExceeded(price: OperationPrice, bounds: PriceBounds): string | null {
  if (price.units > bounds.maxOperationUnits) {
    return `the operation is priced at ${price.units} units, over the bound of ${bounds.maxOperationUnits} units per operation`;
  }
  if (price.nodes > bounds.maxOperationNodes) {
    return `the operation's lists could return ${price.nodes} nodes, over the bound of ${bounds.maxOperationNodes} nodes per operation`;
  }
  return null;
}

/** A table entry as docs/graphql.md states it (a test holds the two equal). */
export function describePrice(price: FieldPrice): string {
  if (price.perArgumentItem) return `${price.perArgumentItem.units} per element of \`${price.perArgumentItem.argument}\``;
  if (price.perSubfield) return `${price.perSubfield} per facet asked`;
  return String(price.units ?? 0);
}

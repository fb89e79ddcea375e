import {
  getArgumentValues,
  getNullableType,
  type GraphQLField,
  type GraphQLInputType,
  GraphQLList,
  GraphQLObjectType,
  type GraphQLResolveInfo,
  isListType,
} from 'graphql';
import type { z } from 'zod';
import { ApiError, type FieldError, isApiError, onePerField } from '../domain/errors.js';
import { type FacetAnswer, type FacetCount, facetKey, type FacetRequest, type RangeCount } from '../domain/facets.js';
import { facetRequest } from '../inputs/facets.js';
import { builder } from './builder.js';
import { fieldsIn, fieldsNamed } from './selections.js';

type ObjectRef<T> = ReturnType<ReturnType<typeof builder.objectRef<T>>['implement']>;
import type { Context } from './context.js';

// A connection's `facets` (docs/contract/decisions.md §6.1). The connection's resolver collects
// every facet the operation asks of it (aliases, fragments, variables and @skip/@include honoured)
// and has them counted with its page in one call: on the index, with the same match as its
// totalCount; on SQL, one GROUP BY statement each, beside the page. The facet fields then only
// pick their answer.

/** One facet field of a connection's facets object. */
export interface FacetField<F extends string = string> {
  facet: F;
  description: string;
  /** Its arguments' zod schema (src/inputs/facets.ts). */
  args: z.ZodType<{ excludeOwn?: boolean | null; edges?: number[] }>;
  /** A histogram over client-given edges of this scalar; else counts by value. */
  edges?: 'SafeInt' | 'Float';
  /** The values are category ids: their label is the category's name. */
  categoryLabels?: boolean;
}

/** What a connection's `facets` field resolves to: each facet's answer by its request. */
export interface FacetSource {
  answer(request: FacetRequest): Promise<FacetAnswer>;
}

/** The facets of one connection type: its GraphQL object and how to read requests for it. */
export interface FacetsDefinition<F extends string = string> {
  name: string;
  fields: readonly FacetField<F>[];
  type: ObjectRef<FacetSource>;
}

type Bucket = FacetCount & { category?: true };

// Category names for labels come from the request's taxonomy (src/schema/loaders.ts): read at most
// once per request, shared with Category, Video.category and Creator.categories.
async function categoryName(ctx: Context, id: number): Promise<string | null> {
  return (await ctx.loaders.taxonomy()).byId.get(id)?.name ?? null;
}

const FacetCountType = builder.objectRef<Bucket>('FacetCount').implement({
  description: 'How many matches have one value of a field',
  fields: (t) => ({
    value: t.exposeString('value', { description: 'The value as the REST answers spell it ("US", "female", "short", "true", an id, "2026-03")' }),
    label: t.string({
      nullable: true,
      description: "The category's or game's name; null for other facets",
      resolve: (bucket, _args, ctx) => (bucket.category ? categoryName(ctx, Number(bucket.value)) : bucket.label || null),
    }),
    count: t.field({ type: 'SafeInt', resolve: (bucket) => bucket.count }),
  }),
});

const RangeCountType = builder.objectRef<RangeCount>('RangeCount').implement({
  description: 'How many matches have a value in [min, max)',
  fields: (t) => ({
    min: t.float({ nullable: true, description: 'Inclusive lower bound; null: unbounded', resolve: (range) => range.min }),
    max: t.float({ nullable: true, description: 'Exclusive upper bound; null: unbounded', resolve: (range) => range.max }),
    count: t.field({ type: 'SafeInt', resolve: (range) => range.count }),
  }),
});

const EXCLUDE_OWN = "true: count as if the filter's conditions on this field were absent (disjunctive faceting)";

/** A connection's facets object type, one field per facet. */
export function facetsType<F extends string>(name: string, description: string, fields: readonly FacetField<F>[]): FacetsDefinition<F> {
  const type = builder.objectRef<FacetSource>(name).implement({
    description,
    fields: (t) =>
      Object.fromEntries(
        fields.map((field) => {
          const answer = (source: FacetSource, args: unknown, ctx: Context) => source.answer(validatedRequest(field, args, ctx));
          const excludeOwn = t.arg.boolean({ defaultValue: false, description: EXCLUDE_OWN });
          if (field.edges) {
            return [
              field.facet,
              t.field({
                type: [RangeCountType],
                description: field.description,
                args: { edges: t.arg({ type: [field.edges], required: true, description: 'Strictly increasing bucket edges e0 < … < en (at most 50)' }), excludeOwn },
                resolve: async (source, args, ctx) => (await answer(source, args, ctx)) as RangeCount[],
              }),
            ];
          }
          return [
            field.facet,
            t.field({
              type: [FacetCountType],
              description: `${field.description}; by count descending, then value`,
              args: { excludeOwn },
              resolve: async (source, args, ctx) => {
                const counts = (await answer(source, args, ctx)) as FacetCount[];
                return field.categoryLabels ? counts.map((count): Bucket => ({ ...count, category: true })) : counts;
              },
            }),
          ];
        }),
      ),
  });
  return { name, fields, type };
}

/**
 * Every facet the operation asks of the connection being resolved, validated (a 400 naming the
 * argument before any work), each once.
 */
export function requestedFacets<F extends string>(info: GraphQLResolveInfo, ctx: Context, definition: FacetsDefinition<F>): FacetRequest<F>[] {
  const facetsType = info.schema.getType(definition.name);
  if (!(facetsType instanceof GraphQLObjectType)) return [];
  const fieldDefs = facetsType.getFields();
  const byName = new Map(definition.fields.map((field) => [field.facet as string, field]));
  const requests = new Map<string, FacetRequest<F>>();
  // Every bad facet named at once, as every 400 does.
  const bad: FieldError[] = [];
  for (const facets of fieldsNamed(info, info.fieldNodes, 'facets')) {
    for (const node of fieldsIn(info, facets.selectionSet)) {
      const field = byName.get(node.name.value);
      if (!field) continue;
      const args = getArgumentValues(nullsAllowed(fieldDefs[field.facet]), node, info.variableValues);
      try {
        const request = validatedRequest(field, args, ctx);
        requests.set(facetKey(request), request);
      } catch (error) {
        if (!isApiError(error) || error.code !== 'BAD_REQUEST') throw error;
        bad.push(...error.fields);
      }
    }
  }
  if (bad.length > 0) throw ApiError.badRequest(onePerField(bad));
  return [...requests.values()];
}

const withNullsAllowed = new WeakMap<GraphQLField<unknown, unknown>, GraphQLField<unknown, unknown>>();

/**
 * The facet field with its arguments' non-null wrappers removed, list items included. A nullable
 * variable with a default may be sent as an explicit null where the argument is non-null
 * (`$e: [SafeInt!] = [1]` given null): graphql's refusal names no field and read as a 500; let
 * through, the null meets the facet's zod schema, which names it (`facets.followerCount.edges`).
 */
function nullsAllowed(field: GraphQLField<unknown, unknown>): GraphQLField<unknown, unknown> {
  let lenient = withNullsAllowed.get(field);
  if (!lenient) {
    lenient = { ...field, args: field.args.map((arg) => ({ ...arg, type: nullableThrough(arg.type) })) };
    withNullsAllowed.set(field, lenient);
  }
  return lenient;
}

// Facet arguments are scalars and lists of them: no input object to unwrap.
function nullableThrough(type: GraphQLInputType): GraphQLInputType {
  const nullable = getNullableType(type);
  return isListType(nullable) ? new GraphQLList(nullableThrough(nullable.ofType as GraphQLInputType)) : nullable;
}

/**
 * A facet's arguments as a request; a bad one is named by its place under the connection
 * (`facets.followerCount.edges`): `edges` alone would not say which histogram.
 */
function validatedRequest<F extends string>(field: FacetField<F>, args: unknown, ctx: Context): FacetRequest<F> {
  try {
    return facetRequest(field.facet, ctx.validated(field.args, args));
  } catch (error) {
    if (!isApiError(error) || error.code !== 'BAD_REQUEST') throw error;
    throw ApiError.badRequest(error.fields.map(({ field: name, message }) => ({ field: `facets.${field.facet}.${name}`, message })));
  }
}

/** Answers from the counts made with the page; a request not among them (none expected) is counted on its own. */
export function facetSource(requests: readonly FacetRequest[], answers: readonly Promise<FacetAnswer>[], count: (request: FacetRequest) => Promise<FacetAnswer>): FacetSource {
  const known = new Map(requests.map((request, i) => [facetKey(request), answers[i]]));
  return { answer: (request) => known.get(facetKey(request)) ?? count(request) };
}

import { type DocumentNode, GraphQLError, Kind, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';

// One query must not do unbounded work: quota bounds what a caller pays for, these bound what a
// single operation can make the server do before quota is even checked.

/**
 * An operation over one of the service's bounds (these, and the price's in price.ts): 400 naming
 * `query`, under either media type. GraphQL over HTTP answers a document that does not parse or
 * validate 200 under `application/json`, and yoga marks such errors so (`http.spec`); a bound is
 * ours, and one bound answering 400 and another 200 misleads. The GraphQL door unmarks these.
 */
export class BoundRefusal extends GraphQLError {
  constructor(message: string) {
    super(`Bad Request: query ${message}`, { extensions: { code: 'BAD_REQUEST', fields: [{ field: 'query', message }], http: { status: 400 } } });
  }
}
export const MAX_DEPTH = 8;
export const MAX_ROOT_FIELDS = 10;
export const MAX_SELECTED_FIELDS = 500;

// Introspection is answered from the schema in memory, without a key, so it gets bounds of its
// own instead of the data limits: the standard query of GraphiQL, graphql-codegen and Apollo
// (`getIntrospectionQuery()`) nests `ofType` 9 levels deep inside `fields.args.type`, past
// MAX_DEPTH. graphql's own MaxIntrospectionDepthRule already caps `fields`/`interfaces`/
// `possibleTypes`/`inputFields` nesting; these cap the rest: how many times an operation may ask
// for the schema (aliases make one document ask a thousand times), how deep `ofType` may go, and
// how many introspection fields one operation may select once fragments are expanded.
export const MAX_INTROSPECTION_ROOTS = 2;
export const MAX_OF_TYPE_DEPTH = 12;
export const MAX_INTROSPECTION_FIELDS = 2_000;

/**
 * Brackets (`{`, `[`, `(`) a document may nest, counted on its text before it is parsed: graphql's
 * parser descends once a level, and ~1,500 levels (a 6 KB document) overflow its stack, which read
 * as a 500. The deepest a valid operation needs is far less: 8 levels of fields, filters of an
 * object and a list, the introspection query's ~30.
 */
export const MAX_DOCUMENT_NESTING = 64;

/**
 * Tokens a document may have. The largest operations within the other bounds (500 fields with
 * arguments, ten `nodes` of 100 ids: 1,200 tokens) stay far below; `getIntrospectionQuery()` has ~190.
 */
export const MAX_DOCUMENT_TOKENS = 10_000;

/** Parsed documents kept by their text: at most this many, this much text in all, none longer than this. */
export const DOCUMENT_CACHE_ENTRIES = 512;
export const DOCUMENT_CACHE_CHARS = 1 << 20;
export const MAX_CACHED_DOCUMENT_CHARS = 16 << 10;
/** Introspection answers kept (an answer can be megabytes: few). */
export const INTROSPECTION_ANSWERS = 16;

const BLOCK_QUOTE = '"""';

/** How deep `source`'s brackets nest, strings and comments skipped; stops counting past `limit`. */
export function documentNesting(source: string, limit = MAX_DOCUMENT_NESTING): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < source.length; i++) {
    const char = source.charCodeAt(i);
    if (char === 0x23 /* # */) {
      while (i < source.length && source.charCodeAt(i) !== 0x0a && source.charCodeAt(i) !== 0x0d) i++;
    } else if (char === 0x22 /* " */) {
      if (source.startsWith(BLOCK_QUOTE, i)) {
        // A block string ends at the first """ not escaped as \""".
        i += 3;
        while (i < source.length && !(source.startsWith(BLOCK_QUOTE, i) && source.charCodeAt(i - 1) !== 0x5c)) i++;
        i += 2;
      } else {
        i++;
        while (i < source.length && source.charCodeAt(i) !== 0x22 && source.charCodeAt(i) !== 0x0a) i += source.charCodeAt(i) === 0x5c ? 2 : 1;
      }
    } else if (char === 0x7b || char === 0x5b || char === 0x28) {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((char === 0x7d || char === 0x5d || char === 0x29) && depth > 0) {
      // Never below 0: closers up front must not hide the nesting that follows them.
      depth--;
    }
  }
  return deepest;
}

const isIntrospectionRoot = (name: string) => name === '__schema' || name === '__type';

interface Measure {
  /** Nesting of data fields below the operation. */
  depth: number;
  /** Data fields selected, fragments expanded. */
  fields: number;
  introspectionRoots: number;
  introspectionFields: number;
  /** Longest `ofType { ofType { … } }` chain. */
  ofTypeDepth: number;
}

/**
 * The bounds `document`'s operations exceed, as validation errors; none when within them. A walk
 * of the document alone, without the schema: run before graphql's own rules, it must cost less
 * than they do (as a validation rule, graphql's typed visitor made it 40–75 ms for 9,000 tokens).
 */
export function exceededLimits(document: DocumentNode): GraphQLError[] {
  const fragments = new Map<string, FragmentDefinitionNode>(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const errors: GraphQLError[] = [];
  const fail = (message: string) => errors.push(new BoundRefusal(message));

  /**
   * Depth and size with fragments expanded (a fragment cycle is reported by graphql's own rules).
   * Inside `__schema`/`__type`, fields count towards the introspection budget instead. Counting
   * stops early once a budget is blown, so a hostile document cannot make the measuring itself slow.
   */
  function measure(set: SelectionSetNode, at: { depth: number; inIntrospection: boolean; ofType: number }, seen: Set<string>, total: Measure): void {
    for (const selection of set.selections) {
      if (total.fields > MAX_SELECTED_FIELDS || total.introspectionFields > MAX_INTROSPECTION_FIELDS) return;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        let next = at;
        if (at.inIntrospection) {
          total.introspectionFields += 1;
          if (name === 'ofType') {
            next = { ...at, ofType: at.ofType + 1 };
            total.ofTypeDepth = Math.max(total.ofTypeDepth, next.ofType);
          }
        } else if (isIntrospectionRoot(name)) {
          total.introspectionRoots += 1;
          total.introspectionFields += 1;
          next = { ...at, inIntrospection: true };
        } else {
          total.fields += 1;
          next = { ...at, depth: at.depth + 1 };
          total.depth = Math.max(total.depth, at.depth);
        }
        if (selection.selectionSet) measure(selection.selectionSet, next, seen, total);
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        measure(selection.selectionSet, at, seen, total);
        continue;
      }
      const name = selection.name.value;
      const fragment = seen.has(name) ? undefined : fragments.get(name);
      if (fragment) measure(fragment.selectionSet, at, new Set([...seen, name]), total);
    }
  }

  for (const operation of document.definitions) {
    if (operation.kind !== Kind.OPERATION_DEFINITION) continue;
    const roots = operation.selectionSet.selections.filter((s) => s.kind === Kind.FIELD && !s.name.value.startsWith('__'));
    if (roots.length > MAX_ROOT_FIELDS) fail(`an operation may select at most ${MAX_ROOT_FIELDS} root fields`);
    const total: Measure = { depth: 0, fields: 0, introspectionRoots: 0, introspectionFields: 0, ofTypeDepth: 0 };
    measure(operation.selectionSet, { depth: 1, inIntrospection: false, ofType: 0 }, new Set(), total);
    if (total.depth > MAX_DEPTH) fail(`an operation may nest at most ${MAX_DEPTH} levels deep`);
    if (total.fields > MAX_SELECTED_FIELDS) fail(`an operation may select at most ${MAX_SELECTED_FIELDS} fields`);
    if (total.introspectionRoots > MAX_INTROSPECTION_ROOTS) {
      fail(`an operation may ask for __schema or __type at most ${MAX_INTROSPECTION_ROOTS} times`);
    }
    if (total.ofTypeDepth > MAX_OF_TYPE_DEPTH) fail(`an operation may nest ofType at most ${MAX_OF_TYPE_DEPTH} levels deep`);
    if (total.introspectionFields > MAX_INTROSPECTION_FIELDS) {
      fail(`an operation may select at most ${MAX_INTROSPECTION_FIELDS} introspection fields`);
    }
  }
  return errors;
}

import { BREAK, type DocumentNode, type ExecutionArgs, type ExecutionResult, GraphQLIncludeDirective, GraphQLSkipDirective, type GraphQLSchema, visit } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';

// Operations compiled once into functions that call the same resolvers (graphql-jit): a client's
// query runs without graphql's generic execution walk from its second request on. Documents come
// from yoga's parse cache, so the same query text is the same DocumentNode object, and a compiled
// plan lives exactly as long as its document.

const plans = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, Map<string, CompiledQuery | null>>>();

/**
 * graphql-jit (0.8.9, the latest) marks a fragment visited at its first spread even when @skip or
 * @include leaves that spread out, and then ignores the fragment's later spreads:
 * `{ ...F @skip(if: true) ...F }` answers without F's fields, which graphql runs (and the price
 * counts). No option changes it, so a document that spreads a fragment more than once and has
 * either directive anywhere runs through graphql's execute; few documents do both.
 */
function jitMisreadsSpreads(document: DocumentNode): boolean {
  const spread = new Set<string>();
  let repeated = false;
  let conditional = false;
  visit(document, {
    FragmentSpread(node) {
      repeated ||= spread.has(node.name.value);
      spread.add(node.name.value);
      return repeated && conditional ? BREAK : undefined;
    },
    Directive(node) {
      conditional ||= node.name.value === GraphQLSkipDirective.name || node.name.value === GraphQLIncludeDirective.name;
      return repeated && conditional ? BREAK : undefined;
    },
  });
  return repeated && conditional;
}

/** A compiled plan of the operation, or null when graphql-jit cannot compile it or would misread it (then: execute). */
export function compiledPlan(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): CompiledQuery | null {
  let bySchema = plans.get(schema);
  if (!bySchema) plans.set(schema, (bySchema = new WeakMap()));
  let byName = bySchema.get(document);
  if (!byName) bySchema.set(document, (byName = new Map()));
  const name = operationName ?? '';
  if (!byName.has(name)) {
    const compiled = jitMisreadsSpreads(document) ? null : compileQuery(schema, document, operationName ?? undefined);
    byName.set(name, compiled && isCompiledQuery(compiled) ? compiled : null);
  }
  return byName.get(name)!;
}

/** Runs `args` through its compiled plan, or through `execute` when there is none. */
export function runCompiled(args: ExecutionArgs, execute: (args: ExecutionArgs) => unknown): unknown {
  const plan = compiledPlan(args.schema, args.document, args.operationName);
  if (!plan) return execute(args);
  const result = plan.query(args.rootValue, args.contextValue, args.variableValues ?? {}) as ExecutionResult | Promise<ExecutionResult>;
  // Variables that do not coerce: graphql-jit returns at once, without `data` and before any
  // resolver, naming a bad input field as if it were the variable ("$followerCountMin" for
  // `$f.followerCountMin`). graphql's own coercion names the variable and the path in it.
  if (typeof (result as { then?: unknown }).then !== 'function' && !('data' in result)) return execute(args);
  return result;
}

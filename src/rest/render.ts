import {
  type DocumentNode,
  getNullableType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  isEnumType,
  isListType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  visit,
} from 'graphql';
import { toSnake } from './codecs.js';

// A route's GraphQL result in the contract's REST shape: snake_case names, enum values in
// lowercase ("male", "short"). The names come from the route's document itself (restDocument
// aliases every field to its snake_case name), so the result is the answer without a copy; enum
// values are lowercased in place by a walk derived once per route that visits only the fields
// leading to one. Copying every page into new objects was a ninth of what a REST search allocated.

/** The document with every field aliased to its REST name (a field already aliased keeps its alias). */
export function restDocument(document: DocumentNode): DocumentNode {
  return visit(document, {
    Field(node) {
      const name = toSnake(node.name.value);
      if (node.alias || name === node.name.value) return undefined;
      return { ...node, alias: { kind: Kind.NAME, value: name } };
    },
  });
}

/**
 * How a result of `document` (one root field, fields only) is rendered: its enum values lowercased
 * in place, then its root field's value returned.
 */
export function restRenderer(schema: GraphQLSchema, document: DocumentNode): (data: Record<string, unknown>) => Record<string, unknown> {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const [root] = operation?.selectionSet.selections ?? [];
  if (!operation || root?.kind !== Kind.FIELD) throw new Error('a REST document selects one root field');
  const key = (root.alias ?? root.name).value;
  const fix = objectFixer(schema.getQueryType()!, operation.selectionSet);
  return (data) => {
    fix?.(data);
    return data[key] as Record<string, unknown>;
  };
}

type Fix = (value: unknown) => unknown;

/** Lowercases the enums of an object of `type` selected by `set`, in place; null when none is selected. */
function objectFixer(type: GraphQLObjectType, set: SelectionSetNode): ((object: Record<string, unknown>) => void) | null {
  const steps: ((object: Record<string, unknown>) => void)[] = [];
  for (const selection of set.selections) {
    if (selection.kind !== Kind.FIELD) throw new Error('REST documents name their fields (no fragments)');
    const field = type.getFields()[selection.name.value];
    if (!field) continue;
    const key = (selection.alias ?? selection.name).value;
    const fix = valueFixer(field.type, selection.selectionSet);
    if (fix) steps.push((object) => void (object[key] = fix(object[key])));
  }
  if (steps.length === 0) return null;
  return (object) => {
    for (const step of steps) step(object);
  };
}

/** The value with its enums lowercased (objects and lists fixed in place); null when nothing below is an enum. */
function valueFixer(type: GraphQLOutputType, set: SelectionSetNode | undefined): Fix | null {
  const nullable = getNullableType(type);
  if (isEnumType(nullable)) return (value) => (value == null ? null : String(value).toLowerCase());
  if (isListType(nullable)) {
    const item = valueFixer(nullable.ofType, set);
    if (!item) return null;
    return (value) => {
      const list = value as unknown[] | null;
      if (list != null) for (let i = 0; i < list.length; i++) list[i] = item(list[i]);
      return list;
    };
  }
  if (isObjectType(nullable) && set) {
    const fix = objectFixer(nullable, set);
    if (!fix) return null;
    return (value) => {
      if (value != null) fix(value as Record<string, unknown>);
      return value;
    };
  }
  return null;
}

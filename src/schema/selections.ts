import {
  type FieldNode,
  getDirectiveValues,
  type GraphQLResolveInfo,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  type SelectionSetNode,
} from 'graphql';

// What an operation selects below the field being resolved, as execution will see it: through
// fragments, honouring @skip and @include, and over every node of a field asked more than once
// under one response name (GraphQL merges them, and `info.fieldNodes` holds them all).

/** Whether the field being resolved selects `name` directly (a connection's totalCount). */
export function selectsField(info: GraphQLResolveInfo, name: string): boolean {
  return fieldsNamed(info, info.fieldNodes, name).length > 0;
}

/** The fields called `name` in the selection sets of `nodes`. */
export function fieldsNamed(info: GraphQLResolveInfo, nodes: readonly FieldNode[], name: string): FieldNode[] {
  return nodes.flatMap((node) => fieldsIn(info, node.selectionSet).filter((field) => field.name.value === name));
}

/** The fields of a selection set, through fragments, without those @skip or @include leave out. */
export function fieldsIn(info: GraphQLResolveInfo, set: SelectionSetNode | undefined): FieldNode[] {
  return (set?.selections ?? []).flatMap((selection): FieldNode[] => {
    if (!included(selection, info.variableValues)) return [];
    if (selection.kind === 'Field') return [selection];
    if (selection.kind === 'InlineFragment') return fieldsIn(info, selection.selectionSet);
    return fieldsIn(info, info.fragments[selection.name.value]?.selectionSet);
  });
}

/** Whether @skip and @include, with these variables, keep a selection. */
export function included(node: SelectionSetNode['selections'][number], variables: Record<string, unknown>): boolean {
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
}

import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

// One query must not do unbounded work: quota bounds what a caller pays for, these bound what a
// single operation can make the server do before quota is even checked.
export const MAX_DEPTH = 8;
export const MAX_ROOT_FIELDS = 10;
export const MAX_SELECTED_FIELDS = 500;

export function operationLimits(context: ValidationContext): ASTVisitor {
  const fragments = new Map<string, FragmentDefinitionNode>(
    context.getDocument().definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const fail = (message: string) => context.reportError(new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } }));

  // Depth and size with fragments expanded; a fragment cycle is reported by graphql's own rules.
  function measure(set: SelectionSetNode, depth: number, seen: Set<string>): { depth: number; fields: number } {
    let deepest = depth;
    let fields = 0;
    for (const selection of set.selections) {
      let inner: SelectionSetNode | undefined;
      if (selection.kind === Kind.FIELD) {
        fields += 1;
        inner = selection.selectionSet;
        if (!inner) continue;
        const child = measure(inner, depth + 1, seen);
        deepest = Math.max(deepest, child.depth);
        fields += child.fields;
        continue;
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) inner = selection.selectionSet;
      else if (!seen.has(selection.name.value)) inner = fragments.get(selection.name.value)?.selectionSet;
      if (!inner) continue;
      const child = measure(inner, depth, selection.kind === Kind.FRAGMENT_SPREAD ? new Set([...seen, selection.name.value]) : seen);
      deepest = Math.max(deepest, child.depth);
      fields += child.fields;
    }
    return { depth: deepest, fields };
  }

  return {
    OperationDefinition(operation) {
      const roots = operation.selectionSet.selections.filter((s) => s.kind === Kind.FIELD && !s.name.value.startsWith('__'));
      if (roots.length > MAX_ROOT_FIELDS) fail(`an operation may select at most ${MAX_ROOT_FIELDS} root fields`);
      const { depth, fields } = measure(operation.selectionSet, 1, new Set());
      if (depth > MAX_DEPTH) fail(`an operation may nest at most ${MAX_DEPTH} levels deep`);
      if (fields > MAX_SELECTED_FIELDS) fail(`an operation may select at most ${MAX_SELECTED_FIELDS} fields`);
    },
  };
}

import { Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * The field nodes of a selection set, with inline fragments and fragment spreads expanded.
 * `@skip`/`@include` are not evaluated: callers use the result to decide what to fetch, and
 * fetching a field that is then skipped is harmless.
 */
export function collectFields(
  selectionSet: SelectionSetNode | undefined,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
  into: FieldNode[] = [],
  seen: Set<string> = new Set(),
): FieldNode[] {
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) into.push(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT) collectFields(selection.selectionSet, fragments, into, seen);
    else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      collectFields(fragments[selection.name.value]?.selectionSet, fragments, into, seen);
    }
  }
  return into;
}

/** The fields named `name` in the selections of these fields (through fragments and aliases). */
export function fieldsNamed(parents: readonly FieldNode[], name: string, info: Pick<GraphQLResolveInfo, 'fragments'>): FieldNode[] {
  return parents.flatMap((p) => collectFields(p.selectionSet, info.fragments)).filter((f) => f.name.value === name);
}

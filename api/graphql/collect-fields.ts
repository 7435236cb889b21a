import {
  Kind, type FieldNode, type FragmentDefinitionNode, type FragmentSpreadNode, type GraphQLResolveInfo, type InlineFragmentNode, type SelectionSetNode,
} from 'graphql';

/** What a walk may refuse: a field, an inline fragment, a fragment spread, or the fragment it spreads. */
export type Walked = FieldNode | InlineFragmentNode | FragmentSpreadNode | FragmentDefinitionNode;

/**
 * The one walk over selections: the field nodes of these selection sets in document order, with
 * inline fragments and fragment spreads expanded, each named fragment once (as graphql-js
 * merges a selection set; it also ends fragment cycles). Returns null as soon as `admit` refuses
 * a node (a caller that reproduces only some of GraphQL's semantics gives up there).
 */
export function walkFields(
  sets: readonly (SelectionSetNode | undefined)[],
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
  admit: (node: Walked) => boolean = () => true,
): FieldNode[] | null {
  const into: FieldNode[] = [];
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode | undefined): boolean => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        if (!admit(selection)) return false;
        into.push(selection);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!admit(selection) || !visit(selection.selectionSet)) return false;
      } else {
        if (!admit(selection)) return false;
        if (seen.has(selection.name.value)) continue;
        seen.add(selection.name.value);
        const fragment = fragments[selection.name.value];
        // A spread of an unknown fragment is refused by validation; here it selects nothing.
        if (fragment && (!admit(fragment) || !visit(fragment.selectionSet))) return false;
      }
    }
    return true;
  };
  for (const set of sets) if (!visit(set)) return null;
  return into;
}

/**
 * The field nodes of a selection set, with inline fragments and fragment spreads expanded.
 * `@skip`/`@include` are not evaluated: callers use the result to decide what to fetch, and
 * fetching a field that is then skipped is harmless.
 */
export function collectFields(selectionSet: SelectionSetNode | undefined, fragments: Readonly<Record<string, FragmentDefinitionNode>>): FieldNode[] {
  return walkFields([selectionSet], fragments)!;
}

/** The fields named `name` in the selections of these fields (through fragments and aliases). */
export function fieldsNamed(parents: readonly FieldNode[], name: string, info: Pick<GraphQLResolveInfo, 'fragments'>): FieldNode[] {
  return parents.flatMap((p) => collectFields(p.selectionSet, info.fragments)).filter((f) => f.name.value === name);
}

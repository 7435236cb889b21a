import {
  GraphQLError, Kind, getNullableType, isListType, parse,
  type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext, type ASTVisitor,
} from 'graphql';
import { ErrorCodes } from '../../shared/errors.ts';
import { collectFields } from './collect-fields.ts';
import { withCode } from './with-code.ts';

export interface QueryLimits {
  readonly maxTokens: number;
  readonly maxDepth: number;
  readonly maxAliases: number;
  readonly maxRootFields: number;
}

function tooComplex(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCodes.QUERY_TOO_COMPLEX } });
}

/** graphql-js's own refusal of a document past `maxTokens` (its wording, "more that", is its own). */
const TOO_MANY_TOKENS = /^Syntax Error: Document contains more th(?:at|an) \d+ tokens\. Parsing aborted\.$/;

/**
 * Parses a document with graphql-js's own token limit, so a huge document is refused while the
 * parser reads it: that refusal gets QUERY_TOO_COMPLEX, any other syntax error
 * GRAPHQL_PARSE_FAILED.
 */
export function parseWithLimits(query: string, limits: Pick<QueryLimits, 'maxTokens'>): DocumentNode {
  try {
    return parse(query, { maxTokens: limits.maxTokens });
  } catch (err) {
    if (err instanceof GraphQLError && TOO_MANY_TOKENS.test(err.message)) throw tooComplex(`the document has more than ${limits.maxTokens} tokens`);
    if (err instanceof GraphQLError && err.extensions['code'] === undefined) throw withCode(err, ErrorCodes.GRAPHQL_PARSE_FAILED);
    throw err;
  }
}

interface Measure {
  depth: number;
  /** Set when a selection lies deeper than the walk goes (the limit and one more level). */
  deeper: boolean;
  aliases: number;
  /** Response keys of the root fields: fields GraphQL merges (same key) run once, so they count once. */
  rootFields: Set<string>;
  /** Fields visited: fragments spread inside fragments can expand exponentially, so the walk is bounded. */
  visits: number;
}

const MAX_VISITS = 100_000;

/**
 * The fixed levels of a search's v2 shape (`search { places { results { edges { node { ... } } } } }`,
 * and `weekly_patterns` for `places`), by how far below `search` they sit: they cannot nest
 * further, so they are not counted and a search's node nests as a batch_lookup entry. /v1's
 * search returns entries directly: it has none.
 */
const SEARCH_WRAPPERS: readonly ReadonlySet<string>[] = [new Set(), new Set(['places', 'weekly_patterns']), new Set(['results']), new Set(['edges']), new Set(['node'])];

/**
 * Depth, aliases and root fields of a selection set, its fields collected as GraphQL merges them
 * (collectFields: fragments expanded, each once per selection set), introspection not counted.
 * The walk stops one level below `maxDepth` (what lies deeper is refused anyway, and a fragment
 * that spreads itself below its own fields ends there). `stage`: how far below a /v2 search
 * this set is (0: not in one, or past its node).
 */
function measure(set: SelectionSetNode | undefined, fragments: Record<string, FragmentDefinitionNode>, level: number, maxDepth: number, acc: Measure, wrappedSearch: boolean, stage = 0): void {
  if (set === undefined) return;
  if (level > maxDepth + 1) {
    acc.deeper = true;
    return;
  }
  for (const sel of collectFields(set, fragments)) {
    if (++acc.visits > MAX_VISITS) return;
    if (sel.name.value.startsWith('__')) continue;
    if (sel.alias) acc.aliases++;
    if (level === 1) acc.rootFields.add(sel.alias?.value ?? sel.name.value);
    acc.depth = Math.max(acc.depth, level);
    const wrapper = stage > 0 && SEARCH_WRAPPERS[stage]!.has(sel.name.value);
    const next = level === 1 && wrappedSearch && sel.name.value === 'search' ? 1 : wrapper && stage < SEARCH_WRAPPERS.length - 1 ? stage + 1 : 0;
    measure(sel.selectionSet, fragments, wrapper ? level : level + 1, maxDepth, acc, wrappedSearch, next);
  }
}

/** Validation rule: refuses operations nested deeper, or with more aliases or root fields, than allowed. */
export function complexityRule(limits: QueryLimits) {
  return (context: ValidationContext): ASTVisitor => {
    const doc = context.getDocument();
    const fragments: Record<string, FragmentDefinitionNode> = Object.create(null);
    for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
    // /v2's search wraps its results in fixed levels; /v1's (a list of entries) does not.
    const search = context.getSchema().getQueryType()?.getFields()['search'];
    const wrappedSearch = search !== undefined && !isListType(getNullableType(search.type));
    return {
      OperationDefinition(node) {
        const acc: Measure = { depth: 0, deeper: false, aliases: 0, rootFields: new Set(), visits: 0 };
        measure(node.selectionSet, fragments, 1, limits.maxDepth, acc, wrappedSearch);
        if (acc.visits > MAX_VISITS) context.reportError(tooComplex(`the operation expands to more than ${MAX_VISITS} selections`));
        if (acc.deeper) context.reportError(tooComplex(`the operation is nested more than ${acc.depth} levels deep; the limit is ${limits.maxDepth}`));
        else if (acc.depth > limits.maxDepth) context.reportError(tooComplex(`the operation is nested ${acc.depth} levels deep; the limit is ${limits.maxDepth}`));
        if (acc.aliases > limits.maxAliases) context.reportError(tooComplex(`the operation uses ${acc.aliases} aliases; the limit is ${limits.maxAliases}`));
        if (acc.rootFields.size > limits.maxRootFields) context.reportError(tooComplex(`the operation has ${acc.rootFields.size} root fields; the limit is ${limits.maxRootFields}`));
      },
    };
  };
}

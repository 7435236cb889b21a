import {
  Kind,
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, type OperationDefinitionNode, type ValueNode,
} from 'graphql';
import { periodsCharged } from '../search/summary-args.ts';
import { collectFields } from './collect-fields.ts';
import { documentsFor } from './document-cache.ts';
import type { RequestParams } from 'graphql-http';
import { servedRootFacts } from './served-root-facts.ts';

/** What the rate limiter and the transport checks need to know of a request, before GraphQL runs. */
export interface OperationShape {
  /** `query`, `mutation` or `subscription`; null when the document does not parse or does not name one operation. */
  readonly type: string | null;
  /** Placekeys asked for across the operation's `batch_lookup`, `lookup`, `batch_match` and `search` fields (see `inspectOperation`). */
  readonly placekeys: number;
}

/** Everything the request's middleware reads of its operation, derived in one look-up (inspectRequest). */
export interface OperationFacts extends OperationShape {
  /**
   * Names (not aliases) of the selected operation's root fields, through fragments, without
   * `__typename`, sorted, each once; null as for `type`. For naming the operation in metrics and logs.
   */
  readonly rootFields: readonly string[] | null;
  /** The parsed document (the process's document cache's: the one GraphQL executes); null when it does not parse. */
  readonly document: DocumentNode | null;
}

/**
 * How one field counts: a fixed number, or a variable's value: the length of a list
 * (`batch_lookup`'s `placekeys`, `batch_match`'s `queries`) or an integer (`results`' `first` in a `search`).
 */
type Term = { readonly fixed: number } | { readonly variable: string; readonly fallback: number; readonly int?: boolean } | PeriodsTerm;

/** A date of a summary's range as written: a literal, a variable, or absent. */
type DateRef = { readonly text: string | null } | { readonly variable: string; readonly field?: string };
/** A summary's cost: `per` points per week (month) from `from` to `to` (one when they are absent or not dates). */
interface PeriodsTerm { readonly per: number; readonly unit: 'week' | 'month'; readonly from: DateRef; readonly to: DateRef }

function dateRef(value: ValueNode | undefined, field?: string): DateRef {
  if (value?.kind === Kind.VARIABLE) return { variable: value.name.value, ...(field ? { field } : {}) };
  if (value?.kind === Kind.OBJECT && field) return dateRef(value.fields.find((f) => f.name.value === field)?.value);
  return { text: value?.kind === Kind.STRING ? value.value : null };
}

/**
 * The range of a summary field as written: /v1's `weeks: { from, to }` or `months: { from, to }`
 * (literal, or a variable holding it), /v2's `start_date`/`end_date`.
 */
function periodsTerm(sel: FieldNode, per: number, unit: 'week' | 'month'): PeriodsTerm {
  const arg = (name: string) => sel.arguments?.find((a) => a.name.value === name)?.value;
  const range = arg(unit === 'week' ? 'weeks' : 'months');
  if (range) return { per, unit, from: dateRef(range, 'from'), to: dateRef(range, 'to') };
  return { per, unit, from: dateRef(arg('start_date')), to: dateRef(arg('end_date')) };
}

function textOf(ref: DateRef, variables: Record<string, unknown>): unknown {
  const text: unknown = 'text' in ref ? ref.text : variables[ref.variable];
  if (!('text' in ref) && ref.field !== undefined) return typeof text === 'object' && text !== null ? (text as Record<string, unknown>)[ref.field] : null;
  return text;
}

function countPeriods(term: PeriodsTerm, variables: Record<string, unknown>): number {
  return periodsCharged(term.unit, textOf(term.from, variables), textOf(term.to, variables)) * term.per;
}

/** What a search page costs: `first` as asked (the API refuses more than SEARCH_MAX_PAGE), 20 when not given. */
const SEARCH_DEFAULT_PAGE = 20;
const SEARCH_MAX_PAGE = 1000;

function pageSize(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) ? Math.min(Math.max(value, 0), SEARCH_MAX_PAGE) : SEARCH_DEFAULT_PAGE;
}

function firstTerm(operation: OperationDefinitionNode, value: ValueNode | undefined): Term {
  if (value?.kind === Kind.VARIABLE) {
    const name = value.name.value;
    const definition = operation.variableDefinitions?.find((d) => d.variable.name.value === name);
    const fallback = definition?.defaultValue?.kind === Kind.INT ? pageSize(Number(definition.defaultValue.value)) : SEARCH_DEFAULT_PAGE;
    return { variable: name, fallback, int: true };
  }
  return { fixed: pageSize(value?.kind === Kind.INT ? Number(value.value) : undefined) };
}

interface Plan {
  readonly type: string;
  readonly terms: readonly Term[];
  readonly rootFields: readonly string[];
}

/** Literal value -> Placekeys (or queries) it stands for (a single value is coerced to a one-item list). */
function countLiteral(value: ValueNode | undefined): number {
  if (value === undefined || value.kind === Kind.NULL) return 0;
  return value.kind === Kind.LIST ? value.values.length : 1;
}

function termOf(operation: OperationDefinitionNode, value: ValueNode | undefined): Term {
  if (value?.kind !== Kind.VARIABLE) return { fixed: countLiteral(value) };
  const name = value.name.value;
  const definition = operation.variableDefinitions?.find((d) => d.variable.name.value === name);
  return { variable: name, fallback: countLiteral(definition?.defaultValue) };
}

/** The children of a /v2 search that hold pages (`places { results }`, `weekly_patterns { results }`). */
const PAGED = new Set(['places', 'weekly_patterns']);

/**
 * What a root `search` costs, by response key. /v2's form costs the `first` of each page
 * (`places { results(first:) }`, `weekly_patterns { results(first:) }`); /v1's form
 * (`search(first:, after:, filter:) { placekey ... }`, entries directly) costs its own `first`.
 * The forms are told apart by the document alone: /v1's has `first` or `after` on `search`, or
 * selects entry fields (a `weekly_patterns` there is an entry's range, with no `results`).
 */
function searchTerms(search: FieldNode, key: string, operation: OperationDefinitionNode, fragments: Readonly<Record<string, FragmentDefinitionNode>>): Map<string, Term> {
  const terms = new Map<string, Term>();
  const children = collectFields(search.selectionSet, fragments).filter((f) => f.name.value !== '__typename');
  const entryLike = (f: FieldNode) => !PAGED.has(f.name.value)
    || (f.name.value === 'weekly_patterns' && collectFields(f.selectionSet, fragments).some((g) => g.name.value !== 'results' && g.name.value !== '__typename'));
  const argument = (node: FieldNode, name: string) => node.arguments?.find((a) => a.name.value === name);
  if (argument(search, 'first') || argument(search, 'after') || children.some(entryLike)) {
    terms.set(key, firstTerm(operation, argument(search, 'first')?.value));
    return terms;
  }
  for (const child of children) {
    for (const results of collectFields(child.selectionSet, fragments).filter((f) => f.name.value === 'results')) {
      terms.set(`${key}.${child.alias?.value ?? child.name.value}.${results.alias?.value ?? 'results'}`, firstTerm(operation, argument(results, 'first')?.value));
    }
  }
  return terms;
}

/**
 * The root `batch_lookup` (and `batch_match`) fields of an operation, one per response key: fields with the same
 * response key are merged by GraphQL (validation makes their arguments equal), so they run once.
 */
function collectLookups(operation: OperationDefinitionNode, fragments: Readonly<Record<string, FragmentDefinitionNode>>): { terms: Term[]; rootFields: string[] } {
  const byResponseKey = new Map<string, Term>();
  const rootFields = new Set<string>();
  // collectFields expands each fragment once: spreading it again adds the same response keys (and stops cycles).
  for (const sel of collectFields(operation.selectionSet, fragments)) {
    const name = sel.name.value;
    if (name !== '__typename') rootFields.add(name);
    const key = sel.alias?.value ?? name;
    // What the field costs is what it declares where it is defined (root-field.ts); a name no
    // schema has costs nothing here, and validation refuses it.
    const cost = servedRootFacts().get(name)?.cost;
    if (cost === undefined) continue;
    if ('fixed' in cost) byResponseKey.set(key, { fixed: cost.fixed });
    else if ('list' in cost) byResponseKey.set(key, termOf(operation, sel.arguments?.find((a) => a.name.value === cost.list)?.value));
    else if ('perWeek' in cost) byResponseKey.set(key, periodsTerm(sel, cost.perWeek, 'week'));
    else if ('perMonth' in cost) byResponseKey.set(key, periodsTerm(sel, cost.perMonth, 'month'));
    else for (const [k, term] of searchTerms(sel, key, operation, fragments)) byResponseKey.set(k, term);
  }
  return { terms: [...byResponseKey.values()], rootFields: [...rootFields].sort() };
}

function planOf(document: DocumentNode): Map<string, Plan> {
  const fragments: Record<string, FragmentDefinitionNode> = Object.create(null);
  const operations: OperationDefinitionNode[] = [];
  for (const d of document.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
    else if (d.kind === Kind.OPERATION_DEFINITION) operations.push(d);
  }
  const plans = new Map<string, Plan>();
  for (const op of operations) {
    const plan = { type: op.operation as string, ...collectLookups(op, fragments) };
    // '' stands for "the only operation", which a request may select without a name.
    if (operations.length === 1) plans.set('', plan);
    if (op.name) plans.set(op.name.value, plan);
  }
  return plans;
}

/** The facts of each document's operations, derived once per document (the document cache keeps documents by text). */
const facts = new WeakMap<DocumentNode, Map<string, Plan>>();

/** The request's parameters as graphql-http reads them (unchecked here: a unit test passes anything). */
type GraphqlParams = Partial<Record<keyof RequestParams, unknown>>;

/** The request's document and the plan of the operation it selects (undefined: none selected, or no document). */
function planFor(params: GraphqlParams, maxTokens: number): { document: DocumentNode | null; plan: Plan | undefined } {
  if (typeof params.query !== 'string') return { document: null, plan: undefined };
  // Parsed as GraphQL execution parses it, through the same cache: one parse per document.
  const document = documentsFor(maxTokens).tryParse(params.query);
  if (!document) return { document: null, plan: undefined }; // GraphQL refuses it with its own code later; here it only needs a shape.
  let plans = facts.get(document);
  if (!plans) facts.set(document, (plans = planOf(document)));
  return { document, plan: plans.get(typeof params.operationName === 'string' ? params.operationName : '') };
}

function countVariable(variables: unknown, term: { variable: string; fallback: number; int?: boolean }): number {
  const vars = typeof variables === 'object' && variables !== null && !Array.isArray(variables) ? variables as Record<string, unknown> : {};
  if (!Object.hasOwn(vars, term.variable)) return term.fallback;
  const value = vars[term.variable];
  if (term.int) return value === null ? SEARCH_DEFAULT_PAGE : pageSize(value);
  if (value === null) return 0;
  return Array.isArray(value) ? value.length : 1;
}

/**
 * The operation a request selects and the Placekeys it asks for (one per root `lookup`, plus): the sum, over the operation's
 * root `batch_lookup` and `batch_match` fields (through fragments; one per response key), of the length of each
 * `placekeys` (`queries`) list, literal or variable, as written (`@skip`/`@include` are not applied), plus
 * the `first` of each page of each root `search` (20 when not given, at most 1000).
 * A document that does not parse, or a request that does not select one operation, asks for 0.
 */
export function inspectOperation(params: GraphqlParams, maxTokens: number): OperationShape {
  const { type, placekeys } = inspectRequest(params, maxTokens);
  return { type, placekeys };
}

/** inspectOperation's facts with the operation's root fields and the parsed document, from one look-up of the document. */
export function inspectRequest(params: GraphqlParams, maxTokens: number): OperationFacts {
  const { document, plan } = planFor(params, maxTokens);
  if (!plan) return { type: null, placekeys: 0, rootFields: null, document };
  let placekeys = 0;
  const variables = typeof params.variables === 'object' && params.variables !== null && !Array.isArray(params.variables) ? params.variables as Record<string, unknown> : {};
  for (const term of plan.terms) placekeys += 'fixed' in term ? term.fixed : 'per' in term ? countPeriods(term, variables) : countVariable(params.variables, term);
  return { type: plan.type, placekeys, rootFields: plan.rootFields, document };
}

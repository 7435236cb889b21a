import {
  GraphQLBoolean, GraphQLFloat, GraphQLInt, GraphQLObjectType, GraphQLSchema, GraphQLString, Kind, defaultFieldResolver, execute, getArgumentValues, getOperationAST, getVariableValues, isLeafType, isListType, isNonNullType, isObjectType,
  isScalarType, typeFromAST, type GraphQLInputType, type GraphQLScalarType, type VariableDefinitionNode,
  type DocumentNode, type ExecutionArgs, type ExecutionResult, type FieldNode, type FragmentDefinitionNode, type GraphQLField,
  type GraphQLFieldConfigMap, type GraphQLOutputType, type GraphQLResolveInfo, type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { RequestContext } from './request-context.ts';
import { RAW_DOCUMENT } from '../lookup/stored-document.ts';
import { walkFields } from './collect-fields.ts';
import { storedAnswer, type StoredAnswer } from './stored-answer.ts';
import { markStep } from '../../shared/step-marks.ts';

/**
 * Thrown inside the compiled path for anything it does not reproduce exactly (a field error, a
 * null in a non-null position, a resolver below the root that is not synchronous): graphql-js
 * then completes the request, from the root fields' values already resolved (never reading their
 * data again), and produces the error response the spec describes.
 */
const FALLBACK = Symbol('fallback');
const NO_ARGS = Object.freeze({}) as Record<string, unknown>;

type Complete = (value: unknown, ctx: unknown, args: readonly Record<string, unknown>[]) => unknown;

/**
 * For the built-in scalars, the values their `serialize` returns as they are (graphql-js 16:
 * integers in 32 bits, finite numbers, strings, booleans); anything else goes through it.
 */
const SERIALIZED_AS_IS: ReadonlyMap<GraphQLScalarType, (v: unknown) => boolean> = new Map<GraphQLScalarType, (v: unknown) => boolean>([
  [GraphQLInt, (v) => typeof v === 'number' && Number.isInteger(v) && v <= 2147483647 && v >= -2147483648],
  [GraphQLFloat, (v) => typeof v === 'number' && Number.isFinite(v)],
  [GraphQLString, (v) => typeof v === 'string'],
  [GraphQLBoolean, (v) => typeof v === 'boolean'],
]);

/** Whether every element of a list is answered as it is (a null too, where the elements may be null). */
function allUnchanged(list: readonly unknown[], unchanged: (v: unknown) => boolean, nullable: boolean): boolean {
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (!(unchanged(x) || (nullable && x === null))) return false;
  }
  return true;
}

interface CompiledField {
  readonly key: string;
  /** Set for `__typename`: the parent type's name, the whole answer. */
  readonly typename: string | null;
  readonly name: string;
  readonly def: GraphQLField<unknown, unknown> | null;
  readonly nodes: readonly FieldNode[];
  /** Index of this field's coerced arguments in the per-request array, or -1 when it has none. */
  readonly argsAt: number;
  readonly complete: Complete | null;
}

interface Plan {
  readonly operation: OperationDefinitionNode;
  readonly root: GraphQLObjectType;
  readonly fields: readonly CompiledField[];
  /** Every field with arguments, in the order of their slots in the per-request array. */
  readonly withArgs: readonly CompiledField[];
  /** The operation's variables coerced without graphql-js (see variableCoercer), or null: graphql-js coerces them. */
  readonly coerce: VariableCoercer | null;
}

/** Coerced variables, or null when graphql-js must coerce them (it then also says what is wrong). */
type VariableCoercer = (inputs: Readonly<Record<string, unknown>>) => Record<string, unknown> | null;

/**
 * A coercer of an operation's variables when each is a scalar or a list of scalars without a
 * default (a look-up's `[Placekey!]`): what graphql-js's getVariableValues gives for inputs it
 * accepts as they are, each value through its scalar's own parseValue; anything else (a value a
 * scalar refuses, a null or missing value where none may be, a single value for a list) is left
 * to graphql-js, which coerces it or reports it as it does. graphql-js's walk (a path and a
 * closure per list item) cost about 14 us of 23 for 100 Placekeys; the scalar's checks, 9.
 */
function variableCoercer(schema: GraphQLSchema, definitions: readonly VariableDefinitionNode[]): VariableCoercer | null {
  const plain: { name: string; required: boolean; list: { required: boolean } | null; scalar: GraphQLScalarType }[] = [];
  for (const def of definitions) {
    if (def.defaultValue !== undefined || def.directives?.length) return null;
    let type = typeFromAST(schema, def.type) as GraphQLInputType | undefined;
    const required = type !== undefined && isNonNullType(type);
    if (required) type = (type as { ofType: GraphQLInputType }).ofType;
    let list: { required: boolean } | null = null;
    if (type !== undefined && isListType(type)) {
      const item = type.ofType as GraphQLInputType;
      list = { required: isNonNullType(item) };
      type = list.required ? (item as { ofType: GraphQLInputType }).ofType : item;
    }
    if (type === undefined || !isScalarType(type)) return null;
    plain.push({ name: def.variable.name.value, required, list, scalar: type });
  }
  // A scalar's value, or undefined where graphql-js would refuse it (parseValue threw or gave none).
  const parse = (scalar: GraphQLScalarType, value: unknown): unknown => {
    try {
      return scalar.parseValue(value);
    } catch {
      return undefined;
    }
  };
  return (inputs) => {
    const coerced: Record<string, unknown> = {};
    for (const v of plain) {
      if (!Object.hasOwn(inputs, v.name)) {
        if (v.required) return null;
        continue;
      }
      const value = inputs[v.name];
      if (value === null || value === undefined) {
        if (v.required || value === undefined) return null;
        coerced[v.name] = null;
        continue;
      }
      if (v.list === null) {
        const one = parse(v.scalar, value);
        if (one === undefined) return null;
        coerced[v.name] = one;
        continue;
      }
      if (!Array.isArray(value)) return null;
      const items = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (item === null || item === undefined) {
          if (v.list.required || item === undefined) return null;
          items[i] = null;
          continue;
        }
        const one = parse(v.scalar, item);
        if (one === undefined) return null;
        items[i] = one;
      }
      coerced[v.name] = items;
    }
    return coerced;
  };
}

function fallback(): never {
  throw FALLBACK;
}

/**
 * The selections of a set grouped by response key, in first-seen order, as graphql-js merges
 * them (walkFields: each fragment once); null when one uses a directive or a type condition
 * other than `type` (graphql-js completes those).
 */
function groupFields(type: GraphQLObjectType, sets: readonly SelectionSetNode[], fragments: Record<string, FragmentDefinitionNode>): Map<string, FieldNode[]> | null {
  const fields = walkFields(sets, fragments, (node) => {
    if (node.directives?.length) return false;
    if (node.kind === Kind.INLINE_FRAGMENT) return !node.typeCondition || node.typeCondition.name.value === type.name;
    if (node.kind === Kind.FRAGMENT_DEFINITION) return node.typeCondition.name.value === type.name;
    return true;
  });
  if (!fields) return null;
  const groups = new Map<string, FieldNode[]>();
  for (const field of fields) {
    const key = field.alias?.value ?? field.name.value;
    const group = groups.get(key);
    if (group) group.push(field);
    else groups.set(key, [field]);
  }
  return groups;
}

class Compiler {
  readonly withArgs: CompiledField[] = [];
  readonly #fragments: Record<string, FragmentDefinitionNode>;

  constructor(fragments: Record<string, FragmentDefinitionNode>) {
    this.#fragments = fragments;
  }

  selection(type: GraphQLObjectType, sets: readonly SelectionSetNode[], isRoot: boolean): CompiledField[] | null {
    const groups = groupFields(type, sets, this.#fragments);
    if (!groups) return null;
    const fields: CompiledField[] = [];
    for (const [key, nodes] of groups) {
      const name = nodes[0]!.name.value;
      if (name === '__typename') {
        fields.push({ key, typename: type.name, name, def: null, nodes, argsAt: -1, complete: null });
        continue;
      }
      const def = type.getFields()[name] as GraphQLField<unknown, unknown> | undefined;
      if (!def || name.startsWith('__')) return null;
      // Below the root only synchronous resolvers are compiled (checked per call).
      if (!isRoot && def.subscribe) return null;
      const subSets = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
      const complete = this.#completer(def.type, subSets);
      if (!complete) return null;
      const argsAt = def.args.length > 0 ? this.withArgs.length : -1;
      const field: CompiledField = { key, typename: null, name, def, nodes, argsAt, complete };
      if (argsAt >= 0) this.withArgs.push(field);
      fields.push(field);
    }
    return fields;
  }

  #completer(type: GraphQLOutputType, sets: readonly SelectionSetNode[]): Complete | null {
    if (isNonNullType(type)) {
      const inner = this.#completer(type.ofType, sets);
      if (!inner) return null;
      return (v, ctx, args) => (v === null || v === undefined ? fallback() : inner(v, ctx, args));
    }
    if (isListType(type)) {
      const item = this.#completer(type.ofType, sets);
      if (!item) return null;
      const element = isNonNullType(type.ofType) ? type.ofType.ofType : type.ofType;
      const unchanged = isScalarType(element) ? SERIALIZED_AS_IS.get(element) : undefined;
      const nullable = !isNonNullType(type.ofType);
      return (v, ctx, args) => {
        if (v === null || v === undefined) return null;
        if (!Array.isArray(v)) fallback();
        // A list of built-in scalars each of which its serialize returns unchanged is its own
        // answer: 100 lists of 168 integers (visits_by_each_hour) checked in 0.01 ms, mapped in 0.35-0.47.
        if (unchanged !== undefined && allUnchanged(v, unchanged, nullable)) return v;
        // Not map: it skips a sparse list's holes, which graphql-js completes as undefined.
        const out = new Array<unknown>(v.length);
        for (let i = 0; i < v.length; i++) out[i] = item(v[i], ctx, args);
        return out;
      };
    }
    if (isLeafType(type)) {
      return (v) => {
        if (v === null || v === undefined) return null;
        const out = type.serialize(v);
        return out === null || out === undefined ? fallback() : out;
      };
    }
    if (isObjectType(type)) {
      const fields = this.selection(type, sets, false);
      if (!fields) return null;
      if (selectsStoredDocument(type, fields)) return completeStored(fields);
      const plain = plainKeys(fields);
      const answer = storedAnswer(fields);
      if (answer !== null) return completeFromTexts(fields, plain, answer);
      return (v, ctx, args) => (v === null || v === undefined ? null : completeObject(fields, plain, v, ctx, args));
    }
    return null; // interfaces and unions: not in this schema; graphql-js handles them
  }
}

/**
 * Whether a selection is exactly the document a look-up store holds for this type (its
 * `storedDocument` extension: the same fields, in the same order, no alias, no argument, no
 * resolver): such an object's answer is the stored text itself.
 */
function selectsStoredDocument(type: GraphQLObjectType, fields: readonly CompiledField[]): boolean {
  const stored = type.extensions['storedDocument'] as readonly string[] | undefined;
  return stored !== undefined && fields.length === stored.length
    && fields.every((f, i) => f.typename === null && f.key === stored[i] && f.name === stored[i] && f.argsAt < 0 && !f.def!.resolve);
}

/**
 * Completes a stored-document selection: a row read from a look-up store (RAW_DOCUMENT) becomes a
 * placeholder for its stored bytes, spliced into the body after serialisation
 * (api/http/raw-documents.ts): the text is neither parsed nor written again, nor decoded. Rows from DuckDB,
 * and requests without the splice (tests running the schema alone), complete field by field.
 */
function completeStored(fields: readonly CompiledField[]): Complete {
  const plain = plainKeys(fields);
  return (v, ctx, args) => {
    if (v === null || v === undefined) return null;
    const raw = (v as Record<symbol, unknown>)[RAW_DOCUMENT];
    const documents = (ctx as RequestContext).rawDocuments;
    return raw instanceof Buffer && documents ? documents.add(raw) : completeObject(fields, plain, v, ctx, args);
  };
}

/**
 * Completes a selection that `storedAnswer` writes: a row read from a look-up store and not yet
 * parsed becomes a placeholder for its answer, written from the stored texts (values copied, not
 * parsed and written again) and spliced into the body like a stored document. Any other row, and
 * requests without the splice, complete field by field.
 */
function completeFromTexts(fields: readonly CompiledField[], plain: boolean, answer: StoredAnswer): Complete {
  return (v, ctx, args) => {
    if (v === null || v === undefined) return null;
    const documents = (ctx as RequestContext).rawDocuments;
    const text = documents ? answer(v, ctx, args) : null;
    return text !== null ? documents!.add(text) : completeObject(fields, plain, v, ctx, args);
  };
}

/**
 * Whether a selection's answers can be ordinary objects: keys are the client's aliases, and an
 * alias `__proto__` must be an answer's key, not its prototype, so such a selection's answers have
 * none. V8 keeps an object without a prototype as a dictionary: 200 answers of 40 fields took
 * 0.48-0.65 ms to make and 0.76-1.05 ms to stringify, against 0.29-0.30 and 0.48-0.55 ms as
 * ordinary objects, which share a shape (bench/RESULTS.md, issue 43).
 */
function plainKeys(fields: readonly CompiledField[]): boolean {
  return fields.every((f) => f.key !== '__proto__');
}

function completeObject(fields: readonly CompiledField[], plain: boolean, source: unknown, ctx: unknown, args: readonly Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = plain ? {} : Object.create(null) as Record<string, unknown>;
  for (const f of fields) {
    if (f.typename !== null) {
      out[f.key] = f.typename;
      continue;
    }
    let value: unknown;
    if (f.def!.resolve) {
      // Resolvers below the root read only their source, arguments and context (see schema.ts).
      value = f.def!.resolve(source, f.argsAt >= 0 ? args[f.argsAt]! : NO_ARGS, ctx, undefined as unknown as GraphQLResolveInfo);
      if (value instanceof Promise) fallback();
    } else {
      value = (source as Record<string, unknown>)[f.name];
      if (typeof value === 'function') fallback();
    }
    out[f.key] = f.complete!(value, ctx, args);
  }
  return out;
}

function compile(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): Plan | null {
  const operation = getOperationAST(document, operationName);
  const root = schema.getQueryType();
  if (!operation || operation.operation !== 'query' || !root || operation.directives?.length) return null;
  const fragments: Record<string, FragmentDefinitionNode> = Object.create(null) as Record<string, FragmentDefinitionNode>;
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  const compiler = new Compiler(fragments);
  const fields = compiler.selection(root, [operation.selectionSet], true);
  return fields ? { operation, root, fields, withArgs: compiler.withArgs, coerce: variableCoercer(schema, operation.variableDefinitions ?? []) } : null;
}

/**
 * An `execute` for graphql-http that runs validated look-up documents through a plan compiled once
 * per document: the root fields' resolvers run as in graphql-js, and everything below them is
 * completed by precomputed steps (merged selections, coerced arguments once per request, the
 * schema's own `serialize` for every leaf) instead of graphql-js's per-field machinery, which
 * measured about half of a 100-key look-up's time. Anything the plan does not cover (introspection,
 * directives, mutations) and any error goes to graphql-js itself, so responses are the same
 * either way: test/integration/compiled-execute.test.ts compares the two on the same requests.
 */
export function makeCompiledExecute(schema: GraphQLSchema, onGraphqlJs: (reason: 'not_compiled' | 'error') => void = () => {}): (args: ExecutionArgs) => Promise<ExecutionResult> {
  const plans = new WeakMap<DocumentNode, Map<string, Plan | null>>();
  const planFor = (document: DocumentNode, operationName: string | null | undefined): Plan | null => {
    let byName = plans.get(document);
    if (!byName) plans.set(document, (byName = new Map()));
    const name = operationName ?? '';
    if (!byName.has(name)) byName.set(name, compile(schema, document, operationName));
    return byName.get(name)!;
  };
  let replaySchema: GraphQLSchema | null = null;

  return async (args: ExecutionArgs): Promise<ExecutionResult> => {
    const plan = args.schema === schema ? planFor(args.document, args.operationName) : null;
    if (!plan) {
      onGraphqlJs('not_compiled');
      return execute(args);
    }
    const resolved = new Map<string, PromiseSettledResult<unknown>>();
    try {
      return { data: await run(plan, args, resolved) };
    } catch {
      // FALLBACK, a resolver's error or a bad argument: graphql-js reports it as the spec says.
      onGraphqlJs('error');
      // Nothing resolved (variables or arguments refused): graphql-js runs it from the start.
      if (resolved.size === 0) return execute(args);
      // The root fields ran: graphql-js completes their settled values (a rejection is that
      // field's error), so no root field's data is read twice.
      replaySchema ??= replayOf(schema);
      return execute({ ...args, schema: replaySchema, rootValue: resolved, fieldResolver: replayResolver(replaySchema) });
    }
  };
}

/**
 * The schema with its root fields' resolvers removed, for completing a request whose root fields
 * have already been resolved: every other type is the schema's own object.
 */
function replayOf(schema: GraphQLSchema): GraphQLSchema {
  const root = schema.getQueryType()!;
  const config = root.toConfig();
  const fields: GraphQLFieldConfigMap<unknown, unknown> = {};
  for (const [name, field] of Object.entries(config.fields)) fields[name] = { ...field, resolve: undefined };
  const replayRoot = new GraphQLObjectType({ ...config, fields });
  const schemaConfig = schema.toConfig();
  return new GraphQLSchema({ ...schemaConfig, query: replayRoot, types: schemaConfig.types.filter((t) => t !== root) });
}

/** Root fields answer their settled value by response key; every other field as graphql-js would. */
function replayResolver(replay: GraphQLSchema) {
  const root = replay.getQueryType()!;
  return (source: unknown, fieldArgs: Record<string, unknown>, ctx: unknown, info: GraphQLResolveInfo): unknown => {
    if (info.parentType === root && source instanceof Map) {
      const settled = (source as Map<string, PromiseSettledResult<unknown>>).get(info.path.key as string);
      if (settled) return settled.status === 'fulfilled' ? settled.value : Promise.reject(settled.reason);
    }
    return defaultFieldResolver(source, fieldArgs, ctx, info);
  };
}

async function run(plan: Plan, args: ExecutionArgs, resolved: Map<string, PromiseSettledResult<unknown>>): Promise<Record<string, unknown>> {
  markStep('variables');
  const inputs = args.variableValues ?? {};
  let variables = plan.coerce?.(inputs) ?? null;
  if (variables === null) {
    const coerced = getVariableValues(args.schema, plan.operation.variableDefinitions ?? [], inputs);
    if (coerced.errors) fallback();
    variables = coerced.coerced;
  }
  // Throws on a bad argument value: graphql-js then reports it as it does.
  const fieldArgs = plan.withArgs.map((f) => getArgumentValues(f.def!, f.nodes[0]!, variables));
  const fragments: Record<string, FragmentDefinitionNode> = Object.create(null) as Record<string, FragmentDefinitionNode>;
  for (const d of args.document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  const ctx = args.contextValue;
  markStep('resolve');
  // Root resolvers all start before any is awaited, as graphql-js runs a query's root fields.
  const pending = plan.fields.map((f) => {
    if (f.typename !== null || !f.def!.resolve) return f.typename ?? (args.rootValue as Record<string, unknown> | undefined)?.[f.name];
    const info: GraphQLResolveInfo = {
      fieldName: f.name, fieldNodes: f.nodes, returnType: f.def!.type, parentType: plan.root, path: { prev: undefined, key: f.key, typename: plan.root.name },
      schema: args.schema, fragments, rootValue: args.rootValue, operation: plan.operation, variableValues: variables,
    };
    try {
      return f.def!.resolve(args.rootValue, f.argsAt >= 0 ? fieldArgs[f.argsAt]! : NO_ARGS, ctx, info);
    } catch (err) {
      return Promise.reject(err);
    }
  });
  const settled = await Promise.allSettled(pending);
  markStep('complete');
  plan.fields.forEach((f, i) => {
    if (f.typename === null) resolved.set(f.key, settled[i]!);
  });
  const data: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  plan.fields.forEach((f, i) => {
    const outcome = settled[i]!;
    if (outcome.status === 'rejected') throw outcome.reason;
    data[f.key] = f.typename ?? f.complete!(outcome.value, ctx, fieldArgs);
  });
  return data;
}

import {
  GraphQLBoolean, GraphQLFloat, GraphQLInt, GraphQLString, isListType, isNonNullType, type GraphQLField, type GraphQLOutputType, type GraphQLResolveInfo,
} from 'graphql';
import { storedFields, type StoredFields } from '../lookup/stored-document.ts';
import { CANONICAL, KIND, type Shape } from '../lookup/stored-fields.ts';
import { JSONScalar } from './json-scalar.ts';

/** A field of a compiled selection, as api/graphql/compiled-execute.ts compiles it. */
export interface SelectedField {
  readonly key: string;
  readonly typename: string | null;
  readonly name: string;
  readonly def: GraphQLField<unknown, unknown> | null;
  readonly argsAt: number;
  readonly complete: ((value: unknown, ctx: unknown, args: readonly Record<string, unknown>[]) => unknown) | null;
}

/**
 * What a field's resolver reads of its row, for a resolver that reads only some named fields
 * (`brands` reads `brands` and `safegraph_brand_ids`): its field config's `extensions.reads`.
 * `extensions.otherThan` marks `other_columns` (a `JSON` field): every field but these names, in the row's order.
 */
export interface StoredAnswerExtensions {
  readonly reads?: readonly string[];
  readonly otherThan?: ReadonlySet<string>;
}

/**
 * The kinds of stored value (api/lookup/stored-fields.ts KIND, with CANONICAL) a field answers as
 * they are: 1 for each. A value of any other kind is parsed and completed by the field's own steps
 * (a non-canonical number, a string where an Int is, a null in a non-null field).
 */
type AsIs = Uint8Array;

function accepting(...kinds: number[]): AsIs {
  const table = new Uint8Array(256);
  for (const k of kinds) table[k | CANONICAL] = 1;
  return table;
}

const SCALARS: ReadonlyMap<unknown, AsIs> = new Map<unknown, AsIs>([
  [GraphQLString, accepting(KIND.string)],
  [GraphQLInt, accepting(KIND.int)],
  [GraphQLFloat, accepting(KIND.int, KIND.number)],
  [GraphQLBoolean, accepting(KIND.boolean)],
  [JSONScalar, accepting(...Object.values(KIND))],
]);

/** The kinds a leaf field answers as they are (a null too where the field may be null), or null: its values are parsed and completed. */
function asIsOf(type: GraphQLOutputType): AsIs | null {
  const check = valueAsIs(isNonNullType(type) ? type.ofType : type);
  if (check === null || isNonNullType(type)) return check;
  const nullable = check.slice();
  nullable[KIND.null | CANONICAL] = 1;
  return nullable;
}

function valueAsIs(t: GraphQLOutputType): AsIs | null {
  if (!isListType(t)) return SCALARS.get(t) ?? null;
  // Lists whose items may be null are completed (a rare shape here: every list of the schema has non-null items).
  if (!isNonNullType(t.ofType)) return null;
  const item = t.ofType.ofType;
  if (item === GraphQLInt) return accepting(KIND.emptyList, KIND.intList);
  if (item === GraphQLString) return accepting(KIND.emptyList, KIND.stringList);
  return null;
}

type Part =
  | { readonly kind: 'typename'; readonly literal: string; readonly text: string }
  | { readonly kind: 'placekey'; readonly literal: string; readonly field: SelectedField }
  | { readonly kind: 'value'; readonly literal: string; readonly field: SelectedField; readonly asIs: AsIs | null }
  | { readonly kind: 'reads'; readonly literal: string; readonly field: SelectedField; readonly reads: readonly string[] }
  | { readonly kind: 'others'; readonly literal: string; readonly otherThan: ReadonlySet<string> };

/** Text of ASCII alone: the same characters as latin1 of its UTF-8 and as itself. */
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/** A JavaScript string's UTF-8 bytes as latin1 (one character per byte): how answers are built here. */
function latin1(text: string): string {
  return ASCII.test(text) ? text : Buffer.from(text, 'utf8').toString('latin1');
}

/** A JSON value of the text (latin1 of UTF-8), parsed. */
function parsed(text: string, a: number, b: number): unknown {
  const slice = text.slice(a, b);
  return JSON.parse(ASCII.test(slice) ? slice : Buffer.from(slice, 'latin1').toString('utf8'));
}

/** A completed value as JSON text (latin1 of UTF-8). */
function written(value: unknown): string {
  return latin1(JSON.stringify(value));
}

/** Writes one answer (latin1 of its UTF-8 JSON) of a stored row, or null: the row is completed as an object. */
export type StoredAnswer = (row: unknown, ctx: unknown, args: readonly Record<string, unknown>[]) => string | null;

/**
 * The writer of a selection's answers from stored rows' texts (api/lookup/stored-document.ts
 * storedFields), or null when a field needs the row itself (a resolver that does not say what it
 * reads). Each answer is the JSON the selection's object would serialise to, its fields in the
 * selection's order, with each stored value that its field answers as it is (a string, a number
 * in the field's range, a list of them, any JSON for `JSON`) copied from the text instead of
 * parsed and written again; any other value is parsed and completed by its field's own steps.
 * Every field of 100 weekly and core rows with their other columns: parsing the texts alone took
 * longer than writing the answers this way (bench/RESULTS.md, issue 43).
 */
export function storedAnswer(fields: readonly SelectedField[]): StoredAnswer | null {
  const parts: Part[] = [];
  for (const f of fields) {
    const literal = `${latin1(JSON.stringify(f.key))}:`;
    if (f.typename !== null) {
      parts.push({ kind: 'typename', literal, text: written(f.typename) });
      continue;
    }
    const def = f.def!;
    const ext = def.extensions as StoredAnswerExtensions;
    if (def.resolve) {
      // Other columns are a JSON object of the row's own values (JSONScalar answers them as they are).
      if (ext.otherThan && def.type === JSONScalar) parts.push({ kind: 'others', literal, otherThan: ext.otherThan });
      else if (ext.reads) parts.push({ kind: 'reads', literal, field: f, reads: ext.reads });
      else return null;
    } else if (f.name === 'placekey') parts.push({ kind: 'placekey', literal, field: f });
    else parts.push({ kind: 'value', literal, field: f, asIs: asIsOf(def.type) });
  }
  let shape: Shape | null = null;
  let ops: readonly Op[] | null = null;
  return (row, ctx, args) => {
    const stored = storedFields(row as Record<string, unknown>, shape);
    if (stored === null) return null;
    const { text, fields: at } = stored.fields;
    if (stored.fields.shape !== shape) {
      shape = stored.fields.shape;
      // The row's placekey is the look-up's, never a field of its texts: texts holding one are read as a row.
      ops = shape.positions.has('placekey') ? null : opsOf(parts, shape);
    }
    if (ops === null) return null;
    let out = '{';
    let first = true;
    for (let o = 0; o < ops.length; o++) {
      const op = ops[o]!;
      // A run's fields answered as they are go as slices of the text (their names, values and
      // commas); any other of its fields, and parts not in a run, one by one.
      let from = -1;
      for (let k = 0; k < op.parts.length; k++) {
        if (op.first >= 0) {
          const slot = op.first + k;
          if (op.checks[k]![at[3 * slot + 2]!] === 1) {
            if (from < 0) from = slot === 0 ? 1 : at[3 * slot - 2]! + 1;
            continue;
          }
          if (from >= 0) {
            out += `${first ? '' : ','}${text.slice(from, at[3 * slot - 2])}`;
            first = false;
            from = -1;
          }
        }
        const written = part(parts[op.parts[k]!]!, shape, stored, ctx, args);
        if (written === null) return null;
        out += first ? written : `,${written}`;
        first = false;
      }
      if (from >= 0) {
        out += `${first ? '' : ','}${text.slice(from, at[3 * (op.first + op.parts.length) - 2])}`;
        first = false;
      }
    }
    return `${out}}`;
  };
}

/**
 * Parts of a selection in the order to write them for documents of one shape: a run of fields
 * that are the shape's fields in its order, named as stored and answered as they are, is
 * written as one slice of the text (the every-field selection is a few such runs).
 */
interface Op {
  /** The run's first field in the shape, or -1: the parts are written one by one. */
  readonly first: number;
  /** Each field's check, in the run's order. */
  readonly checks: AsIs[];
  /** The parts (indexes into the selection), written one by one when a check fails. */
  readonly parts: number[];
}

function opsOf(parts: readonly Part[], shape: Shape): Op[] {
  const ops: Op[] = [];
  parts.forEach((p, i) => {
    const slot = p.kind === 'value' ? shape.positions.get(p.field.name) ?? -1 : -1;
    const runs = p.kind === 'value' && p.asIs !== null && slot >= 0 && shape.literals[slot] === p.literal;
    const last = ops[ops.length - 1];
    if (runs && last !== undefined && last.first >= 0 && last.first + last.checks.length === slot) {
      last.checks.push((p as { asIs: AsIs }).asIs);
      last.parts.push(i);
    } else ops.push({ first: runs ? slot : -1, checks: runs ? [(p as { asIs: AsIs }).asIs] : [], parts: [i] });
  });
  return ops;
}

/** One part of an answer (`"key":value`), or null: the row is completed as an object. */
function part(p: Part, shape: Shape, stored: StoredFields, ctx: unknown, args: readonly Record<string, unknown>[]): string | null {
  const { text, fields: at } = stored.fields;
  switch (p.kind) {
    case 'typename':
      return p.literal + p.text;
    case 'placekey':
      return p.literal + written(p.field.complete!(stored.placekey, ctx, args));
    case 'value': {
      const slot = shape.positions.get(p.field.name);
      if (slot === undefined) return p.literal + written(p.field.complete!(null, ctx, args));
      const a = at[3 * slot]!;
      const b = at[3 * slot + 1]!;
      if (p.asIs !== null && p.asIs[at[3 * slot + 2]!] === 1) return p.literal + text.slice(a, b);
      return p.literal + written(p.field.complete!(parsed(text, a, b), ctx, args));
    }
    case 'reads': {
      const source: Record<string, unknown> = {};
      for (const name of p.reads) {
        const slot = shape.positions.get(name);
        if (slot !== undefined) source[name] = parsed(text, at[3 * slot]!, at[3 * slot + 1]!);
      }
      const f = p.field;
      const value = f.def!.resolve!(source, f.argsAt >= 0 ? args[f.argsAt]! : {}, ctx, undefined as unknown as GraphQLResolveInfo);
      if (value instanceof Promise) return null;
      return p.literal + written(f.complete!(value, ctx, args));
    }
    case 'others': {
      // The parsed row's order is the texts' only when no name is an array index.
      if (!shape.inOrder) return null;
      let others = '';
      for (let s = 0; s < shape.names.length; s++) {
        if (p.otherThan.has(shape.names[s]!)) continue;
        const a = at[3 * s]!;
        const b = at[3 * s + 1]!;
        const name = shape.canonicalNames[s] ? shape.literals[s]! : `${written(shape.names[s])}:`;
        others += `${others === '' ? '' : ','}${name}${(at[3 * s + 2]! & CANONICAL) !== 0 ? text.slice(a, b) : written(parsed(text, a, b))}`;
      }
      return `${p.literal}{${others}}`;
    }
  }
}

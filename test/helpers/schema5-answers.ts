import { readFile } from 'node:fs/promises';
import { brotliDecompressSync } from 'node:zlib';
import { startServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { postGraphql } from './graphql-client.ts';
import { testConfig } from './test-config.ts';

/**
 * The answers of test/fixtures/schema5 (made by its make-fixture.ts, replayed by
 * test/integration/schema5-upgrade.test.ts): whole response bodies of look-ups of every key of
 * the fixture's versions, on both GraphQL paths, as the service gave them when the fixture was made.
 */
export const SCHEMA5_PATHS = ['/v1/graphql', '/v2/graphql'] as const;
export type ApiPath = (typeof SCHEMA5_PATHS)[number];

/** The entry fields each path's look-up asks: /v1 the hosted products (maps as `{ key value }`), /v2 ours (maps as JSON). */
const ENTRY_FIELDS: Record<ApiPath, { core: string; week: string; month: string; geometry: string; weekRange: string; monthRange: string }> = {
  '/v1/graphql': { core: 'placedata_core', week: 'safegraph_weekly_patterns', month: 'safegraph_monthly_patterns', geometry: 'safegraph_geometry',
    weekRange: 'placedata_weekly_patterns_range', monthRange: 'placedata_monthly_patterns_range' },
  '/v2/graphql': { core: 'placedata_core', week: 'placedata_weekly_patterns', month: 'placedata_monthly_patterns', geometry: 'placedata_geometry',
    weekRange: 'weekly_patterns', monthRange: 'monthly_patterns' },
};

/** Every field of each product's type on one path (objects with every subfield), as introspection listed them when the fixture was made. */
export interface Selections { readonly core: string; readonly week: string; readonly month: string; readonly geometry: string }

/**
 * The spec's fields of core and weeks only: the look-ups the look-up stores answer (any other
 * field, month or geometry sends a look-up to DuckDB), so that stores on and off both read something.
 */
export const SPEC_SELECTIONS: Selections = {
  core: 'location_name street_address city region postal_code iso_country_code naics_code top_category sub_category',
  week: 'location_name street_address city region date_range_start date_range_end raw_visit_counts raw_visitor_counts visits_by_day',
  month: '', geometry: '',
};

/** What a look-up case selects: every field of every product, or the spec's fields of core and weeks. */
export const KINDS = ['every field', 'spec fields'] as const;

export interface Answer { readonly status: number; readonly body: unknown }

export interface AnswerCase {
  /** `<release> <path> <what>`, for messages. */
  readonly name: string;
  readonly path: ApiPath;
  /** The release of the version that answered (2022-02, 2022-03; 2022-04 for the test's own load). */
  readonly release: string;
  readonly query: string;
  readonly variables: Record<string, unknown>;
  readonly answer: Answer;
}

export interface Schema5Answers {
  /** The commit whose code made the fixture, and the command. */
  readonly made: { readonly commit: string; readonly command: string };
  /** The label of each release's version in data.tar.gz. */
  readonly labels: Readonly<Record<string, string>>;
  /** The Mondays and months (1st) each version holds, its own and inherited. */
  readonly weeks: Readonly<Record<string, readonly string[]>>;
  readonly months: Readonly<Record<string, readonly string[]>>;
  readonly selections: Readonly<Record<ApiPath, Selections>>;
  /** Every look-up of the two versions in data.tar.gz. */
  readonly cases: readonly AnswerCase[];
  /**
   * The 2022-04 drop (test/helpers/schema5-drops.ts) loaded on top, as the code that made the
   * fixture served it: its own weeks, and its ranges (every week it holds). `version_date` is
   * written `NEXT_LABEL`: the test's load gets its own label.
   */
  readonly next: { readonly weeks: readonly string[]; readonly cases: readonly AnswerCase[] };
}

export const NEXT_LABEL = '<the 2022-04 version>';

const alias = (prefix: string, date: string) => prefix + date.replaceAll('-', '_');

/** A look-up of keys `$k` selecting, on `path`, core, each week, each month and geometry, every field of each. */
export function lookupQuery(path: ApiPath, sel: Selections, parts: { core: boolean; weeks: readonly string[]; months: readonly string[]; geometry: boolean }): string {
  const f = ENTRY_FIELDS[path];
  const fields = [
    'placekey',
    ...(parts.core ? [`${f.core} { ${sel.core} }`] : []),
    ...parts.weeks.map((w) => `${alias('w', w)}: ${f.week}(date: "${w}") { ${sel.week} }`),
    ...parts.months.map((m) => `${alias('m', m)}: ${f.month}(date: "${m}") { ${sel.month} }`),
    ...(parts.geometry ? [`${f.geometry} { ${sel.geometry} }`] : []),
  ];
  return `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { ${fields.join(' ')} } }`;
}

/** The date ranges over every week and month of the fixture (a version's whole history per POI). */
export function rangesQuery(path: ApiPath): string {
  const f = ENTRY_FIELDS[path];
  return `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey
    ${f.weekRange}(start_date: "2021-12-27", end_date: "2022-04-10") { placekey date_range_start date_range_end raw_visit_counts visits_by_day visitor_home_cbgs }
    ${f.monthRange}(start_date: "2021-12-01", end_date: "2022-04-30") { placekey date_range_start raw_visit_counts popularity_by_day other_columns } } }`;
}

/**
 * The date ranges from the first to the last of `weeks` and of `months` (either may be empty: no
 * range of it), selecting every field of each range's entries (`rangeSelectionsOf`).
 */
export function everyRangeQuery(path: ApiPath, sel: RangeSelections, weeks: readonly string[], months: readonly string[]): string {
  const f = ENTRY_FIELDS[path];
  const ranges = [
    ...(weeks.length ? [`${f.weekRange}(start_date: "${weeks[0]}", end_date: "${weeks.at(-1)}") { ${sel.week} }`] : []),
    ...(months.length ? [`${f.monthRange}(start_date: "${months[0]}", end_date: "${months.at(-1)}") { ${sel.month} }`] : []),
  ];
  return `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey ${ranges.join(' ')} } }`;
}

interface TypeRef { name: string | null; kind: string; ofType: TypeRef | null }
interface IntrospectedField { name: string; args: { type: TypeRef }[]; type: TypeRef }

const named = (t: TypeRef): TypeRef => (t.ofType ? named(t.ofType) : t);

/** Every field of `typeName` on `path` with no required argument; an object's fields likewise, one level down. */
async function selectionOf(url: string, path: ApiPath, typeName: string, depth = 0): Promise<string> {
  const ref = '{ name kind ofType { name kind ofType { name kind ofType { name kind } } } }';
  const res = await postGraphql(url, { query: `{ __type(name: "${typeName}") { fields { name args { type ${ref} } type ${ref} } } }` }, {}, path);
  const fields = (res.body as { data: { __type: { fields: IntrospectedField[] } } }).data.__type.fields;
  const parts: string[] = [];
  for (const field of fields.filter((x) => x.args.every((a) => a.type.kind !== 'NON_NULL'))) {
    const type = named(field.type);
    if (type.kind !== 'OBJECT') parts.push(field.name);
    else if (depth === 0) parts.push(`${field.name} { ${await selectionOf(url, path, type.name!, 1)} }`);
  }
  return parts.join(' ');
}

/** The named type of each field of `path`'s entry type. */
async function entryTypes(url: string, path: ApiPath): Promise<(field: string) => string> {
  const res = await postGraphql(url, { query: '{ __type(name: "PlaceEntry") { fields { name type { name kind ofType { name kind ofType { name kind ofType { name kind } } } } } } }' }, {}, path);
  const entry = (res.body as { data: { __type: { fields: IntrospectedField[] } } }).data.__type.fields;
  return (field) => named(entry.find((x) => x.name === field)!.type).name!;
}

/** Every field of the entries of the weekly and monthly date ranges (on /v1 not the types of its weekly and monthly products: maps are JSON there). */
export interface RangeSelections { readonly week: string; readonly month: string }

/** The selections of every field of the range entries on `path`, from the running server's schema. */
export async function rangeSelectionsOf(url: string, path: ApiPath): Promise<RangeSelections> {
  const typeOf = await entryTypes(url, path);
  const f = ENTRY_FIELDS[path];
  return { week: await selectionOf(url, path, typeOf(f.weekRange)), month: await selectionOf(url, path, typeOf(f.monthRange)) };
}

/** The selections of every field of each product on `path`, from the running server's schema. */
export async function selectionsOf(url: string, path: ApiPath): Promise<Selections> {
  const typeOf = await entryTypes(url, path);
  const f = ENTRY_FIELDS[path];
  return {
    core: await selectionOf(url, path, typeOf(f.core)), week: await selectionOf(url, path, typeOf(f.week)),
    month: await selectionOf(url, path, typeOf(f.month)), geometry: await selectionOf(url, path, typeOf(f.geometry)),
  };
}

/** What serving `dataDir` answered: each case's answer, the current version's label, look-up path and look-ups by path. */
export interface Served {
  readonly current: string | undefined;
  readonly lookupPath: string | undefined;
  readonly lookupCounts: Readonly<Record<string, number>> | undefined;
  readonly answers: Answer[];
}

/**
 * Starts the web process on `dataDir` (with `env` beside the test config), asks every case (a
 * case whose version is not the current one pinned to it by `x-placedata-version`), and closes it.
 */
export async function serveCases(dataDir: string, env: Record<string, string>, cases: readonly AnswerCase[], labelOf: (release: string) => string): Promise<Served> {
  const server = await startServer(testConfig(dataDir, env), createLogger('error', 'api'));
  try {
    const current = server.store.current?.label;
    const answers: Answer[] = [];
    for (const c of cases) {
      const label = labelOf(c.release);
      const res = await postGraphql(server.url, { query: c.query, variables: c.variables }, label === current ? {} : { 'x-placedata-version': label }, c.path);
      answers.push({ status: res.status, body: res.body });
    }
    return { current, lookupPath: server.store.current?.lookupPath, lookupCounts: { ...server.store.current?.lookupCounts }, answers };
  } finally {
    await server.close();
  }
}

export async function readSchema5Answers(file: string): Promise<Schema5Answers> {
  return JSON.parse(brotliDecompressSync(await readFile(file)).toString('utf8')) as Schema5Answers;
}

type Body = { data: { batch_lookup: Record<string, unknown>[] }; extensions: Record<string, unknown> };

/**
 * The look-up (of `kind`) of every key and every week the 2022-04 version holds, on `path`, and
 * its whole expected answer: the 2022-03 version's captured entries for core, months, geometry and
 * each week it inherits from 2022-03 and 2022-02, its own weeks' entries from `next`, `version_date` its label.
 */
export function nextLookup(answers: Schema5Answers, path: ApiPath, kind: (typeof KINDS)[number], label: string): AnswerCase {
  const base = answers.cases.find((c) => c.name === `2022-03 ${path} ${kind}`)!;
  const own = answers.next.cases.find((c) => c.name === `2022-04 ${path} own weeks, ${kind}`)!;
  const baseBody = base.answer.body as Body;
  const ownEntries = (own.answer.body as Body).data.batch_lookup;
  const every = kind === 'every field';
  const sel = every ? answers.selections[path] : SPEC_SELECTIONS;
  const query = lookupQuery(path, sel, { core: true, weeks: answers.weeks['2022-04']!, months: every ? answers.months['2022-04']! : [], geometry: every });
  const entries = baseBody.data.batch_lookup.map((entry, i) => ({ ...entry, ...ownEntries[i] }));
  const body = { data: { batch_lookup: entries }, extensions: { ...baseBody.extensions, version_date: label } };
  return { name: `2022-04 ${path} ${kind}`, path, release: '2022-04', query, variables: base.variables, answer: { status: base.answer.status, body } };
}

/** `answer` with its `version_date` written `to` when it is `from` (a version built in a test gets a label of its own). */
export function relabelled(answer: Answer, from: string, to: string): Answer {
  const body = answer.body as { extensions?: { version_date?: string } };
  if (body?.extensions?.version_date !== from) return answer;
  return { ...answer, body: { ...body, extensions: { ...body.extensions, version_date: to } } };
}

import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';
import type { ServedVersion } from '../lookup/served-version.ts';
import type { FilterSql } from './search-filter.ts';
import type { SummaryPosition } from './summary-cursor.ts';
import { readSummary } from './summary-gate.ts';

/** What a summary sums: weekly patterns, a week at a time, or monthly patterns, a month at a time. */
export type SummaryPeriod = 'week' | 'month';

/**
 * What a summary may group by: its period (the week, for weekly patterns; the month, for monthly),
 * an attribute of the POI (its patterns row's or its core's), or the POI itself.
 */
export const GROUP_KEYS = ['week', 'month', 'region', 'city', 'postal_code', 'brand', 'naics_code', 'top_category', 'sub_category', 'placekey'] as const;
export type GroupKey = (typeof GROUP_KEYS)[number];

/** The values a group can be ordered by. */
export const ORDER_VALUES = ['pois', 'poi_weeks', 'raw_visit_counts', 'raw_visitor_counts'] as const;
export type OrderValue = (typeof ORDER_VALUES)[number];

const SHARED_MAPS = ['visitor_home_cbgs', 'visitor_home_aggregation', 'visitor_daytime_cbgs', 'visitor_country_of_origin', 'device_type',
  'bucketed_dwell_times', 'related_same_day_brand'] as const;

/**
 * Per period: the product and its period column; the list columns summed element by element,
 * with their lengths (weekly: days of the week, hours of the week; monthly: days of the month, up
 * to 31, and hours of the day); the map columns whose entries a summary merges over a group (their
 * top entries: where visitors come from, on what devices, ...).
 */
export const SUMMARY_PERIODS = {
  week: { product: 'weekly', column: 'week_start', lists: { visits_by_day: 7, visits_by_each_hour: 168 }, maps: [...SHARED_MAPS, 'related_same_week_brand'] },
  month: { product: 'monthly', column: 'month_start', lists: { visits_by_day: 31, popularity_by_hour: 24 }, maps: [...SHARED_MAPS, 'related_same_month_brand', 'popularity_by_day'] },
} as const;

/** Map columns of either period. */
export type MapColumn = (typeof SUMMARY_PERIODS)[SummaryPeriod]['maps'][number];
/** List columns of either period. */
export type ListColumn = keyof (typeof SUMMARY_PERIODS)['week']['lists'] | keyof (typeof SUMMARY_PERIODS)['month']['lists'];

function listLength(period: SummaryPeriod, column: ListColumn): number {
  const lists: Partial<Record<ListColumn, number>> = SUMMARY_PERIODS[period].lists;
  const length = lists[column];
  if (length === undefined) throw new Error(`${period}ly summaries sum no ${column}`);
  return length;
}
/** Medians and means of these numbers over a group's rows. */
export const STAT_COLUMNS = ['median_dwell', 'distance_from_home'] as const;
export type StatColumn = (typeof STAT_COLUMNS)[number];

/** A summary, checked: which POIs (filter, Placekeys), which weeks or months, how grouped, what is computed, which page. */
export interface SummaryRequest {
  readonly period: SummaryPeriod;
  readonly filter: FilterSql;
  /** Only these POIs (with the filter: both must match); null for every POI the filter matches. */
  readonly placekeys: readonly string[] | null;
  /** The periods the version holds, oldest first: Mondays (weeks) or 1sts (months), YYYY-MM-DD. */
  readonly periods: readonly string[];
  readonly groupBy: readonly GroupKey[];
  readonly lists: ReadonlySet<ListColumn>;
  readonly stats: ReadonlySet<StatColumn>;
  /** Top entries of map columns: column and how many, as the fields ask for them. */
  readonly tops: readonly { readonly column: MapColumn; readonly first: number }[];
  readonly order: { readonly value: OrderValue | null; readonly descending: boolean };
  readonly first: number;
  readonly after: SummaryPosition | null;
}

/** One group of a summary: its key values (null for keys not grouped by) and its values. */
export interface SummaryGroup {
  readonly key: Readonly<Record<GroupKey, string | number | null>>;
  readonly pois: number;
  /** Rows: one per POI and period it has patterns for (poi_weeks, poi_months). */
  readonly poi_weeks: number;
  readonly raw_visit_counts: number | null;
  readonly raw_visitor_counts: number | null;
  readonly lists: Readonly<Partial<Record<ListColumn, (number | null)[]>>>;
  readonly stats: Readonly<Partial<Record<StatColumn, { median: number | null; mean: number | null }>>>;
  /** By `${column}|${first}`: the entries with the largest sums, largest first (ties by key). */
  readonly tops: ReadonlyMap<string, { key: string; value: number }[]>;
  /** Where the group sits in the order (its cursor). */
  readonly position: SummaryPosition;
}

export interface SummaryPage {
  readonly groups: readonly SummaryGroup[];
  readonly more: boolean;
}

export const topKey = (column: MapColumn, first: number): string => `${column}|${first}`;

/** Binds each value as a parameter of its own (`$<prefix><i>`), for an IN list: the list's SQL. */
function bindEach(params: Record<string, unknown>, prefix: string, values: readonly string[]): string {
  return values.map((v, i) => {
    params[`${prefix}${i}`] = v;
    return `$${prefix}${i}`;
  }).join(', ') || 'NULL';
}

/** Keys read from the patterns row itself (the POI's attributes that week; `brand`: one group per brand of the row). */
const ROW_KEYS: ReadonlySet<GroupKey> = new Set(['region', 'city', 'postal_code', 'brand']);
/** Keys read from the version's core places: patterns rows do not carry them. */
const CORE_KEYS: ReadonlySet<GroupKey> = new Set(['naics_code', 'top_category', 'sub_category']);

/** Whether a request names POIs (a filter or Placekeys), so that core decides which rows count. */
function selectsPois(request: SummaryRequest): boolean {
  return request.placekeys !== null || request.filter.where !== 'true';
}

/**
 * The SQL shared by a summary's statements: `w`, the periods' rows of the files holding them (each
 * week or month read from the one file the version takes it from, with the row's own region, city, postal
 * code and brands), of the POIs the filter and Placekeys select in the version's core (`p`: a
 * semi-join; joined instead when a key is a core attribute), as `r`, with the group's key columns
 * (`rk_<key>`; the key text, `kt`, is made of them by ktSql). Without a
 * filter and core keys, core is not read at all (a week of every POI: one scan of its table).
 */
function baseSql(version: ServedVersion, request: SummaryRequest, params: Record<string, unknown>): string {
  const core = version.coreColumns;
  const coreKeys = request.groupBy.filter((k) => CORE_KEYS.has(k));
  const keys = request.placekeys === null ? '' : ` AND placekey IN (${bindEach(params, 'pk', request.placekeys)})`;
  Object.assign(params, request.filter.params);
  const p = `SELECT placekey${coreKeys.map((k) => `, ${core.has(k) ? k : `NULL AS ${k}`}`).join('')} FROM ${version.tableOf('core')} WHERE ${request.filter.where}${keys}`;

  // Each file's periods in one scan of its table; a column the file lacks reads as NULL.
  const { product, column: periodColumn } = SUMMARY_PERIODS[request.period];
  const byFile = new Map<string, string[]>();
  for (const period of request.periods) {
    const table = version.tableOf(product, period);
    byFile.set(table, [...(byFile.get(table) ?? []), period]);
  }
  const wanted = ['raw_visit_counts', 'raw_visitor_counts', ...request.lists, ...request.stats, ...new Set(request.tops.map((t) => t.column))];
  const rowKeys = request.groupBy.filter((k) => ROW_KEYS.has(k));
  const rowKey = (k: GroupKey, columns: readonly string[]) => k === 'brand'
    ? (columns.includes('brands') ? 'unnest(coalesce(nullif(brands, []), [NULL::VARCHAR])) AS rk_brand' : 'NULL::VARCHAR AS rk_brand')
    : `${columns.includes(k) ? quoteIdent(k) : 'NULL::VARCHAR'} AS rk_${k}`;
  const semi = selectsPois(request) && coreKeys.length === 0 ? ' AND placekey IN (SELECT placekey FROM p)' : '';
  // The periods are the version's own dates (SummaryRequest.periods), written as literals: a
  // bound parameter in a table's filter makes DuckDB plan the statement again when it starts,
  // on the request's thread (0.7 ms a one-week summary, bench/RESULTS.md); filters' values stay bound.
  const parts = [...byFile].map(([table, periods]) => {
    const columns = version.periodColumns(product, periods[0]!);
    const selected = [...wanted.map((c) => (columns.includes(c) ? quoteIdent(c) : `NULL AS ${quoteIdent(c)}`)), ...rowKeys.map((k) => rowKey(k, columns))];
    return `SELECT placekey, ${periodColumn} AS period_start${selected.map((c) => `, ${c}`).join('')}
      FROM ${table} WHERE ${periodColumn} IN (${periods.map((d) => `DATE ${quoteLiteral(d)}`).join(', ')})${semi}`;
  });
  const empty = `SELECT NULL::VARCHAR AS placekey, NULL::DATE AS period_start${[...wanted.map((c) => `NULL AS ${quoteIdent(c)}`), ...rowKeys.map((k) => `NULL::VARCHAR AS rk_${k}`)].map((c) => `, ${c}`).join('')} WHERE false`;
  const w = parts.length ? parts.join('\n      UNION ALL ') : empty;
  const keyCols = request.groupBy.filter((k) => !ROW_KEYS.has(k)).map((k) => `${isPeriod(k) ? 'w.period_start' : k === 'placekey' ? 'w.placekey' : `p.${k}`} AS rk_${k}`);
  const joined = coreKeys.length ? 'FROM w JOIN p USING (placekey)' : 'FROM w';
  // p computed once, not once per file's semi-join (inlined, a brand's 104 weeks over 26 files took
  // 624-641 ms on 2 threads; materialized 374-405 ms; bench/NOTES.md).
  return `WITH p AS MATERIALIZED (${p}),
    w AS (${w}),
    r AS (SELECT w.*${keyCols.map((c) => `, ${c}`).join('')} ${joined})`;
}

const isPeriod = (k: GroupKey) => k === 'week' || k === 'month';

/** A group key's value as text (`rk_<key>` of a row or a group): a week or month as YYYY-MM-DD (its Monday, its 1st). */
function keyText(k: GroupKey): string {
  return isPeriod(k) ? `strftime(rk_${k}, '%Y-%m-%d')` : `rk_${k}::VARCHAR`;
}

/**
 * The key text of a group (or of a row's group): its keys' values as text in a JSON array, the
 * order among groups of equal value and the cursor's position. Made per group, not per row: per
 * row it was most of a one-week summary's time.
 */
function ktSql(request: SummaryRequest): string {
  return request.groupBy.length ? `to_json([${request.groupBy.map(keyText).join(', ')}])::VARCHAR` : "''";
}

/**
 * POIs of a group as SQL: its rows when a group holds one week (grouped by week, or one week
 * asked for: a POI has one row a week), else its distinct Placekeys (the dearer count).
 */
function poisSql(request: SummaryRequest): string {
  return request.groupBy.some(isPeriod) || request.periods.length <= 1 ? 'count(*)' : 'count(DISTINCT placekey)';
}

/** The order value of a group as SQL: NULLs (a sum of nothing) last either way. */
function orderSql(request: SummaryRequest): string {
  const { value, descending } = request.order;
  if (value === null) return '0::DOUBLE';
  const expr = value === 'pois' ? poisSql(request) : value === 'poi_weeks' ? 'count(*)' : `sum(${value})`;
  return `coalesce(${expr}::DOUBLE, ${descending ? "'-infinity'" : "'infinity'"}::DOUBLE)`;
}

/** The columns of a summary's values, as the statements name them (a stat's median and mean as `<column>_median`, `<column>_mean`). */
export function valueColumns(request: SummaryRequest): string[] {
  return ['pois', 'poi_weeks', 'raw_visit_counts', 'raw_visitor_counts', ...request.lists, ...[...request.stats].flatMap((c) => [`${c}_median`, `${c}_mean`])];
}

/**
 * The groups of a summary as a statement's `g`: per group its keys (`rk_<key>`, and as `keys`
 * asks: `k_<key>`, a week as text, for a page; or each key under its own name, a week a DATE, for
 * an export), its key text `kt`, its order value `ov` and its values (valueColumns).
 */
function groupsSql(version: ServedVersion, request: SummaryRequest, params: Record<string, unknown>, keys: 'page' | 'export'): string {
  const base = baseSql(version, request, params);
  const values = [
    `${poisSql(request)}::BIGINT AS pois`, 'count(*)::BIGINT AS poi_weeks',
    'sum(raw_visit_counts)::BIGINT AS raw_visit_counts', 'sum(raw_visitor_counts)::BIGINT AS raw_visitor_counts',
    ...[...request.lists].map((c) => `[${Array.from({ length: listLength(request.period, c) }, (_, i) => `sum(${quoteIdent(c)}[${i + 1}])`).join(', ')}]::BIGINT[] AS ${quoteIdent(c)}`),
    ...[...request.stats].flatMap((c) => [`median(${quoteIdent(c)})::DOUBLE AS ${quoteIdent(`${c}_median`)}`, `avg(${quoteIdent(c)})::DOUBLE AS ${quoteIdent(`${c}_mean`)}`]),
  ];
  const keyCols = request.groupBy.map((k) => `rk_${k}`);
  const keyOut = request.groupBy.map((k) => (keys === 'export' ? `rk_${k} AS ${quoteIdent(k)}` : `${isPeriod(k) ? keyText(k) : `rk_${k}`} AS k_${k}`));
  // No key: one group of everything, even of no rows (count 0, sums null).
  const grouped = keyCols.length
    ? `SELECT ${[...keyOut, `${ktSql(request)} AS kt`, `${orderSql(request)} AS ov`, ...values].join(', ')} FROM r GROUP BY ${keyCols.join(', ')}`
    : `SELECT ${["'' AS kt", `${orderSql(request)} AS ov`, ...values].join(', ')} FROM r`;
  return `${base}, g AS (${grouped})`;
}

/**
 * Every group of a summary, in its order (the pages' order, without paging): its keys under their
 * own names (a week a DATE), then its values (valueColumns). For an export of the groups
 * (api/export/summary-export-route.ts), which writes this statement's rows to a file.
 */
export function summaryRowsSql(version: ServedVersion, request: SummaryRequest, params: Record<string, unknown>): string {
  const columns = [...request.groupBy, ...valueColumns(request)].map(quoteIdent);
  return `${groupsSql(version, request, params, 'export')} SELECT ${columns.join(', ')} FROM g ORDER BY ov ${request.order.descending ? 'DESC' : 'ASC'}, kt`;
}

/**
 * A page of a summary's groups, in order, `first` of them after `after`, and the top entries of
 * the map columns asked for, for those groups only. Runs on `conn` (the caller's, which it may
 * interrupt); values are exact: sums of integers as BIGINT, medians and means as DOUBLE.
 */
export async function summaryPage(conn: DuckDBConnection, version: ServedVersion, request: SummaryRequest): Promise<SummaryPage> {
  const params: Record<string, unknown> = {};
  const dir = request.order.descending ? 'DESC' : 'ASC';
  let after = '';
  if (request.after) {
    params['after_value'] = request.after.value;
    params['after_key'] = request.after.key;
    after = `WHERE ov ${request.order.descending ? '<' : '>'} $after_value OR (ov = $after_value AND kt > $after_key)`;
  }
  const sql = `${groupsSql(version, request, params, 'page')} SELECT * FROM g ${after} ORDER BY ov ${dir}, kt LIMIT ${request.first + 1}`;
  const rows = (await readSummary(conn, version, sql, params)).getRowObjectsJS();
  const page = rows.slice(0, request.first);
  const tops = await topEntries(conn, version, request, page.map((r) => String(r['kt'])));
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  const groups = page.map((r): SummaryGroup => {
    const kt = String(r['kt']);
    const key = Object.fromEntries(GROUP_KEYS.map((k) => [k, request.groupBy.includes(k) ? (k === 'naics_code' ? num(r[`k_${k}`]) : (r[`k_${k}`] as string | null)) : null])) as Record<GroupKey, string | number | null>;
    return {
      key, pois: Number(r['pois']), poi_weeks: Number(r['poi_weeks']),
      raw_visit_counts: num(r['raw_visit_counts']), raw_visitor_counts: num(r['raw_visitor_counts']),
      lists: Object.fromEntries([...request.lists].map((c) => [c, (r[c] as unknown[]).map(num)])),
      stats: Object.fromEntries([...request.stats].map((c) => [c, { median: num(r[`${c}_median`]), mean: num(r[`${c}_mean`]) }])),
      tops: tops.get(kt) ?? new Map(),
      position: { value: Number(r['ov']), key: kt },
    };
  });
  return { groups, more: rows.length > request.first };
}

/**
 * Each asked-for map column's top entries in each of these groups (by key text): sums by key,
 * largest first, ties by key. One statement for every column asked for (the rows are read once):
 * each column's entries are ranked within the group, as many kept as the largest `first` asked of
 * that column; a smaller `first` of the same column is the start of that list.
 */
async function topEntries(conn: DuckDBConnection, version: ServedVersion, request: SummaryRequest, groups: readonly string[]): Promise<Map<string, Map<string, { key: string; value: number }[]>>> {
  const out = new Map<string, Map<string, { key: string; value: number }[]>>(groups.map((g) => [g, new Map()]));
  if (groups.length === 0 || request.tops.length === 0) return out;
  const most = new Map<MapColumn, number>();
  for (const { column, first } of request.tops) most.set(column, Math.max(first, most.get(column) ?? 0));
  const columns = [...most.keys()];
  const params: Record<string, unknown> = {};
  const base = baseSql(version, request, params);
  const entries = columns.map((c, i) => `SELECT kt, ${i} AS c, unnest(map_keys(${quoteIdent(c)})) AS key, unnest(map_values(${quoteIdent(c)})) AS value FROM g`).join(' UNION ALL ');
  const limits = columns.map((c, i) => `WHEN ${i} THEN ${most.get(c)!}`).join(' ');
  const rows = (await readSummary(conn, version, `${base}, g AS (SELECT * FROM (SELECT *, ${ktSql(request)} AS kt FROM r) WHERE kt IN (${bindEach(params, 'g', groups)})),
      e AS (${entries})
    SELECT kt, c, key, sum(value)::BIGINT AS value FROM e GROUP BY kt, c, key
    QUALIFY row_number() OVER (PARTITION BY kt, c ORDER BY sum(value) DESC, key) <= CASE c ${limits} END ORDER BY kt, c, value DESC, key`, params)).getRowObjectsJS();
  const ranked = new Map<string, { key: string; value: number }[]>();
  for (const r of rows) {
    const at = `${String(r['kt'])}\u0000${Number(r['c'])}`;
    const list = ranked.get(at) ?? [];
    if (list.length === 0) ranked.set(at, list);
    list.push({ key: String(r['key']), value: Number(r['value']) });
  }
  for (const g of groups) {
    for (const { column, first } of request.tops) out.get(g)!.set(topKey(column, first), (ranked.get(`${g}\u0000${columns.indexOf(column)}`) ?? []).slice(0, first));
  }
  return out;
}

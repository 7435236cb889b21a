import type { DuckDBConnection } from '@duckdb/node-api';
import { withReadOnly } from '../shared/duckdb-open.ts';
import { TABLES } from './version-schema.ts';

/**
 * What a version file says of itself (what `dataset_versions` lists besides the label): its
 * `version_info`, and its monthly and geometry counts. A version store records it beside the file
 * at publish, so that every machine can list a version's facts without downloading it.
 */
export interface VersionInfo {
  readonly release_month: string;
  readonly built_at: string;
  readonly schema_version: number;
  readonly core_rows: number;
  readonly weekly_rows: number;
  readonly weeks_covered: number;
  readonly first_week: string | null;
  readonly last_week: string | null;
  /** Rows (POI x month) of its monthly patterns; 0 for a schema-3 file, which has none. */
  readonly monthly_rows: number;
  readonly months_covered: number;
  /** The 1st of its oldest and newest month (YYYY-MM-DD); null when it has no monthly patterns. */
  readonly first_month: string | null;
  readonly last_month: string | null;
  /** POIs with geometry; 0 for a schema-3 file. */
  readonly geometry_rows: number;
}

type MonthlyFacts = Pick<VersionInfo, 'monthly_rows' | 'months_covered' | 'first_month' | 'last_month' | 'geometry_rows'>;

/**
 * Monthly and geometry facts of a whole-copy file (schema 3 or 4), counted from its product
 * tables: its version_info does not hold them. A file without the tables (schema 3) has none.
 */
async function monthlyFacts(conn: DuckDBConnection): Promise<MonthlyFacts> {
  const tables = new Set((await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables()
    WHERE database_name = current_database() AND schema_name = 'main' AND table_name IN ($monthly, $geometry)`, { monthly: TABLES.monthly, geometry: TABLES.geometry }))
    .getRowObjectsJS().map((r) => String(r['table_name'])));
  let facts: MonthlyFacts = { monthly_rows: 0, months_covered: 0, first_month: null, last_month: null, geometry_rows: 0 };
  if (tables.has(TABLES.monthly)) {
    const row = (await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n, count(DISTINCT month_start)::INTEGER AS months,
      strftime(min(month_start), '%Y-%m-%d') AS first_month, strftime(max(month_start), '%Y-%m-%d') AS last_month FROM ${TABLES.monthly}`)).getRowObjectsJS()[0]!;
    facts = { ...facts, monthly_rows: Number(row['n']), months_covered: Number(row['months']),
      first_month: row['first_month'] === null ? null : String(row['first_month']), last_month: row['last_month'] === null ? null : String(row['last_month']) };
  }
  if (tables.has(TABLES.geometry)) {
    facts = { ...facts, geometry_rows: Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${TABLES.geometry}`)).getRowObjectsJS()[0]!['n']) };
  }
  return facts;
}

/**
 * What a version says of itself, from a connection whose current database is its file. Schema 5
 * records every count in `version_info` (inherited partitions included); older files are whole
 * copies, whose monthly and geometry figures are counted from their tables.
 */
export async function readVersionInfoFrom(conn: DuckDBConnection): Promise<VersionInfo> {
  const schema = Number((await conn.runAndReadAll(`SELECT schema_version FROM ${TABLES.info}`)).getRowObjectsJS()[0]!['schema_version']);
  const recorded = schema >= 5 ? `, monthly_rows, months_covered, strftime(first_month, '%Y-%m-%d') AS first_month,
    strftime(last_month, '%Y-%m-%d') AS last_month, geometry_rows` : '';
  const row = (await conn.runAndReadAll(`SELECT release_month, built_at, schema_version, core_rows, weekly_rows, weeks_covered,
    strftime(first_week, '%Y-%m-%d') AS first_week, strftime(last_week, '%Y-%m-%d') AS last_week${recorded} FROM ${TABLES.info}`)).getRowObjectsJS()[0]!;
  const day = (v: unknown) => (v === null || v === undefined ? null : String(v));
  const monthly: MonthlyFacts = schema >= 5
    ? { monthly_rows: Number(row['monthly_rows']), months_covered: Number(row['months_covered']), first_month: day(row['first_month']), last_month: day(row['last_month']), geometry_rows: Number(row['geometry_rows']) }
    : await monthlyFacts(conn);
  return {
    release_month: String(row['release_month']), built_at: String(row['built_at']), schema_version: Number(row['schema_version']),
    core_rows: Number(row['core_rows']), weekly_rows: Number(row['weekly_rows']), weeks_covered: Number(row['weeks_covered']),
    first_week: day(row['first_week']), last_week: day(row['last_week']), ...monthly,
  };
}

/** Reads a version file's `version_info` (opened read-only, briefly). @throws when it has none. */
export async function readVersionInfo(file: string, memoryLimit: string): Promise<VersionInfo> {
  return await withReadOnly(file, { memoryLimit, threads: 1 }, async (conn) => {
    return await readVersionInfoFrom(conn);
  });
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The facts recorded in a store (JSON written by another process, maybe of another release), or
 * null when they are absent or not of this shape: the caller then falls back to the file.
 */
export function parseVersionInfo(value: unknown): VersionInfo | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const count = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  const day = (x: unknown) => x === null || (typeof x === 'string' && DAY_RE.test(x));
  if (typeof v['release_month'] !== 'string' || typeof v['built_at'] !== 'string' || !count(v['schema_version']) || !count(v['core_rows'])
    || !count(v['weekly_rows']) || !count(v['weeks_covered']) || !day(v['first_week']) || !day(v['last_week'])
    || !count(v['monthly_rows']) || !count(v['months_covered']) || !day(v['first_month']) || !day(v['last_month']) || !count(v['geometry_rows'])) return null;
  return {
    release_month: v['release_month'], built_at: v['built_at'], schema_version: v['schema_version'] as number, core_rows: v['core_rows'] as number,
    weekly_rows: v['weekly_rows'] as number, weeks_covered: v['weeks_covered'] as number,
    first_week: v['first_week'] as string | null, last_week: v['last_week'] as string | null,
    monthly_rows: v['monthly_rows'] as number, months_covered: v['months_covered'] as number,
    first_month: v['first_month'] as string | null, last_month: v['last_month'] as string | null, geometry_rows: v['geometry_rows'] as number,
  };
}

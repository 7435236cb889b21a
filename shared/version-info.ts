import { openReadOnly } from './duckdb-open.ts';
import { TABLES } from './version-schema.ts';

/**
 * What a version file's `version_info` says of it (what `dataset_versions` lists besides the
 * label). A version store records it beside the file at publish, so that every machine can list
 * a version's facts without downloading it.
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
}

/** Reads a version file's `version_info` (opened read-only, briefly). @throws when it has none. */
export async function readVersionInfo(file: string, memoryLimit: string): Promise<VersionInfo> {
  const db = await openReadOnly(file, { memoryLimit, threads: 1 });
  try {
    const conn = await db.connect();
    try {
      const row = (await conn.runAndReadAll(`SELECT release_month, built_at, schema_version, core_rows, weekly_rows, weeks_covered,
        strftime(first_week, '%Y-%m-%d') AS first_week, strftime(last_week, '%Y-%m-%d') AS last_week FROM ${TABLES.info}`)).getRowObjectsJS()[0]!;
      return {
        release_month: String(row['release_month']), built_at: String(row['built_at']), schema_version: Number(row['schema_version']),
        core_rows: Number(row['core_rows']), weekly_rows: Number(row['weekly_rows']), weeks_covered: Number(row['weeks_covered']),
        first_week: row['first_week'] === null ? null : String(row['first_week']), last_week: row['last_week'] === null ? null : String(row['last_week']),
      };
    } finally {
      conn.closeSync();
    }
  } finally {
    db.closeSync();
  }
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
    || !count(v['weekly_rows']) || !count(v['weeks_covered']) || !day(v['first_week']) || !day(v['last_week'])) return null;
  return {
    release_month: v['release_month'], built_at: v['built_at'], schema_version: v['schema_version'] as number, core_rows: v['core_rows'] as number,
    weekly_rows: v['weekly_rows'] as number, weeks_covered: v['weeks_covered'] as number,
    first_week: v['first_week'] as string | null, last_week: v['last_week'] as string | null,
  };
}

/**
 * A version's quality profile: what its data looks like, computed at ingest from the rows the
 * load wrote (ingest/build/profile-version.ts) and recorded in the version file
 * (`version_quality`) and in its store record, so that listing, the status page, the publish
 * guards and version diffs read it without opening any file. Partition by partition, like the
 * manifest: core and geometry once, weekly and monthly patterns per period, so a partition a
 * version inherits keeps the profile the version that delivered it computed.
 */

/** How many rows have one value of a column (null: rows where it is null). */
export interface ValueCount {
  readonly value: string | null;
  readonly rows: number;
}

/** One column of one partition: rows where it is null, and its distinct non-null values (null: not computed). */
export interface ColumnProfile {
  readonly name: string;
  readonly nulls: number;
  readonly distinct: number | null;
}

/** Core places (one row per POI): rows per region and per top category, and every spec column. */
export interface CoreProfile {
  /** The label of the file the partition is in (the version's own, or the one it inherits it from). */
  readonly file: string;
  readonly rows: number;
  /** Most rows first, then by value. */
  readonly regions: readonly ValueCount[];
  readonly top_categories: readonly ValueCount[];
  readonly columns: readonly ColumnProfile[];
}

/** One week (its Monday) or month (its 1st) of patterns: POIs with a row, total visits, rows per region, spec columns. */
export interface PeriodProfile {
  readonly period: string;
  readonly file: string;
  readonly pois: number;
  /** Sum of raw_visit_counts (null rows count 0). */
  readonly visits: number;
  readonly regions: readonly ValueCount[];
  readonly columns: readonly ColumnProfile[];
}

export interface GeometryProfile {
  readonly file: string;
  readonly rows: number;
  readonly columns: readonly ColumnProfile[];
}

export interface QualityProfile {
  /** Layout of this object (bumped when a reader must know of a change). */
  readonly profile_version: 1;
  readonly core: CoreProfile | null;
  readonly geometry: GeometryProfile | null;
  /** Oldest first. */
  readonly weeks: readonly PeriodProfile[];
  readonly months: readonly PeriodProfile[];
}

export const PROFILE_VERSION = 1;

const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function valueCounts(x: unknown): boolean {
  return Array.isArray(x) && x.every((v) => isObject(v) && (v['value'] === null || typeof v['value'] === 'string') && isCount(v['rows']));
}

function columns(x: unknown): boolean {
  return Array.isArray(x) && x.every((c) => isObject(c) && typeof c['name'] === 'string' && isCount(c['nulls']) && (c['distinct'] === null || isCount(c['distinct'])));
}

function period(x: unknown): boolean {
  return isObject(x) && typeof x['period'] === 'string' && typeof x['file'] === 'string' && isCount(x['pois']) && isCount(x['visits'])
    && valueCounts(x['regions']) && columns(x['columns']);
}

/**
 * A profile as recorded (JSON written by another process, maybe of another release), or null
 * when it is absent or not of this shape: such a version has no profile (guards that need one
 * say so instead of comparing).
 */
export function parseQualityProfile(value: unknown): QualityProfile | null {
  if (!isObject(value) || value['profile_version'] !== PROFILE_VERSION) return null;
  const core = value['core'];
  if (core !== null && !(isObject(core) && typeof core['file'] === 'string' && isCount(core['rows']) && valueCounts(core['regions'])
    && valueCounts(core['top_categories']) && columns(core['columns']))) return null;
  const geometry = value['geometry'];
  if (geometry !== null && !(isObject(geometry) && typeof geometry['file'] === 'string' && isCount(geometry['rows']) && columns(geometry['columns']))) return null;
  if (!Array.isArray(value['weeks']) || !value['weeks'].every(period) || !Array.isArray(value['months']) || !value['months'].every(period)) return null;
  return value as unknown as QualityProfile;
}

/** Null share of a column in a partition of `rows` rows (0 for an empty partition or an unknown column). */
export function nullShare(part: { readonly rows?: number; readonly pois?: number; readonly columns: readonly ColumnProfile[] }, name: string): number {
  const rows = part.rows ?? part.pois ?? 0;
  const column = part.columns.find((c) => c.name === name);
  return rows === 0 || !column ? 0 : column.nulls / rows;
}

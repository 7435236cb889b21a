import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent } from '../../shared/sql.ts';
import { PROFILE_VERSION, type ColumnProfile, type CoreProfile, type GeometryProfile, type PeriodProfile, type QualityProfile, type ValueCount } from '../../versions/quality-profile.ts';
import type { VersionManifest } from '../../versions/version-manifest.ts';
import { CORE_COLUMNS, TABLES, WEEKLY_COLUMNS } from '../../versions/version-schema.ts';

/** Patterns columns profiled per period: the spec's, but placekey (never null) and the derived period. */
const PERIOD_COLUMNS = WEEKLY_COLUMNS.map((c) => c.name).filter((n) => n !== 'placekey');

async function rows(conn: DuckDBConnection, sql: string, params?: Record<string, string>): Promise<Record<string, unknown>[]> {
  return (await conn.runAndReadAll(sql, params)).getRowObjectsJS() as Record<string, unknown>[];
}

function valueCountsOf(list: readonly Record<string, unknown>[]): ValueCount[] {
  return list.map((r) => ({ value: r['value'] === null ? null : String(r['value']), rows: Number(r['n']) }))
    .sort((a, b) => b.rows - a.rows || (a.value ?? '\uffff').localeCompare(b.value ?? '\uffff'));
}

/** Core: one scan for every column's nulls and distinct values, one group-by each for regions and top categories. */
async function coreProfile(conn: DuckDBConnection, file: string): Promise<CoreProfile> {
  const names = CORE_COLUMNS.map((c) => c.name);
  const stats = (await rows(conn, `SELECT count(*)::BIGINT AS n, ${names.map((n, i) => `count(${quoteIdent(n)})::BIGINT AS c${i}, count(DISTINCT ${quoteIdent(n)})::BIGINT AS d${i}`).join(', ')} FROM ${TABLES.core}`))[0]!;
  const total = Number(stats['n']);
  const columns: ColumnProfile[] = names.map((name, i) => ({ name, nulls: total - Number(stats[`c${i}`]), distinct: Number(stats[`d${i}`]) }));
  const byRegion = await rows(conn, `SELECT region AS value, count(*)::BIGINT AS n FROM ${TABLES.core} GROUP BY region`);
  const byCategory = await rows(conn, `SELECT top_category AS value, count(*)::BIGINT AS n FROM ${TABLES.core} GROUP BY top_category`);
  return { file, rows: total, regions: valueCountsOf(byRegion), top_categories: valueCountsOf(byCategory), columns };
}

/** Weekly or monthly: one scan grouped by period for POIs, visits and each column's nulls; one more for regions. */
async function periodProfiles(conn: DuckDBConnection, table: string, periodColumn: string, file: string): Promise<PeriodProfile[]> {
  const stats = await rows(conn, `SELECT strftime(${periodColumn}, '%Y-%m-%d') AS p, count(*)::BIGINT AS n, coalesce(sum(raw_visit_counts), 0)::BIGINT AS visits,
    ${PERIOD_COLUMNS.map((n, i) => `count(${quoteIdent(n)})::BIGINT AS c${i}`).join(', ')} FROM ${table} GROUP BY ALL ORDER BY p`);
  const regions = await rows(conn, `SELECT strftime(${periodColumn}, '%Y-%m-%d') AS p, region AS value, count(*)::BIGINT AS n FROM ${table} GROUP BY ALL`);
  return stats.map((s) => {
    const pois = Number(s['n']);
    return {
      period: String(s['p']), file, pois, visits: Number(s['visits']),
      regions: valueCountsOf(regions.filter((r) => r['p'] === s['p'])),
      columns: PERIOD_COLUMNS.map((name, i) => ({ name, nulls: pois - Number(s[`c${i}`]), distinct: null })),
    };
  });
}

/** Geometry: rows and each column's nulls (distinct values of polygons are not worth their hashing). */
async function geometryProfile(conn: DuckDBConnection, file: string): Promise<GeometryProfile> {
  const names = (await rows(conn, `SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main'
    AND table_name = $table AND column_name <> 'placekey' ORDER BY column_index`, { table: TABLES.geometry })).map((r) => String(r['column_name']));
  const stats = (await rows(conn, `SELECT count(*)::BIGINT AS n${names.map((n, i) => `, count(${quoteIdent(n)})::BIGINT AS c${i}`).join('')} FROM ${TABLES.geometry}`))[0]!;
  const total = Number(stats['n']);
  return { file, rows: total, columns: names.map((name, i) => ({ name, nulls: total - Number(stats[`c${i}`]), distinct: null })) };
}

/**
 * The new version's profile: the partitions its drop delivered are profiled from the product
 * tables the load just wrote (which hold exactly those rows: nothing inherited is in this file),
 * every inherited partition keeps the profile its base recorded for it. A base without a profile
 * (built by an older release) leaves its inherited partitions unprofiled: absent from `weeks` and
 * `months`, and core or geometry null.
 */
export async function profileVersion(conn: DuckDBConnection, manifest: VersionManifest, base: QualityProfile | null): Promise<QualityProfile> {
  const own = manifest.partitions.filter((p) => p.file === manifest.label);
  const has = (product: string) => own.some((p) => p.product === product);
  const inheritedPeriod = (list: readonly PeriodProfile[] | undefined, product: 'weekly' | 'monthly') => {
    const kept = new Set(manifest.partitions.filter((p) => p.product === product && p.file !== manifest.label).map((p) => p.period));
    return (list ?? []).filter((p) => kept.has(p.period));
  };
  const inheritsCore = manifest.partitions.some((p) => p.product === 'core' && p.file !== manifest.label);
  const inheritsGeometry = manifest.partitions.some((p) => p.product === 'geometry' && p.file !== manifest.label);
  const weeks = [...(has('weekly') ? await periodProfiles(conn, TABLES.weekly, 'week_start', manifest.label) : []), ...inheritedPeriod(base?.weeks, 'weekly')];
  const months = [...(has('monthly') ? await periodProfiles(conn, TABLES.monthly, 'month_start', manifest.label) : []), ...inheritedPeriod(base?.months, 'monthly')];
  return {
    profile_version: PROFILE_VERSION,
    core: has('core') ? await coreProfile(conn, manifest.label) : inheritsCore ? base?.core ?? null : null,
    geometry: has('geometry') ? await geometryProfile(conn, manifest.label) : inheritsGeometry ? base?.geometry ?? null : null,
    weeks: weeks.sort((a, b) => a.period.localeCompare(b.period)),
    months: months.sort((a, b) => a.period.localeCompare(b.period)),
  };
}

/** The table holding the profile in the version file, beside version_info: one row, one JSON document. */
export const PROFILE_TABLE = 'version_quality';

export async function writeProfile(conn: DuckDBConnection, profile: QualityProfile): Promise<void> {
  await conn.run(`CREATE TABLE ${PROFILE_TABLE} (profile JSON NOT NULL)`);
  await conn.run(`INSERT INTO ${PROFILE_TABLE} VALUES ($profile)`, { profile: JSON.stringify(profile) });
}

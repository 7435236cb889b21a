import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { nullShare, type QualityProfile, type ValueCount } from '../quality-profile.ts';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';
import { readManifest, routesOf, type VersionManifest } from '../version-manifest.ts';
import type { VersionRecord } from '../version-record.ts';
import { localVersionFile, retainedRecord } from '../retention/retained-version.ts';
import { CORE_COLUMNS, TABLES } from '../version-schema.ts';
import type { VersionSite } from '../version-site.ts';
import type { ChangedPoi, DiffPaging, Page, PeriodDiff, PoiDiff, PoiExample, ProfileDelta, ValueChange, ValueDelta, VersionDiff } from './version-diff-types.ts';

/** The spec fields of core places compared (placekey is the key). */
const FIELDS = CORE_COLUMNS.map((c) => c.name).filter((n) => n !== 'placekey');

export interface DiffSettings {
  readonly memoryLimit: string;
  readonly threads: number | null;
}

/** Most examples one page may ask for. */
export const MAX_DIFF_PAGE = 100;

function encodeCursor(placekey: string): string {
  return Buffer.from(placekey, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string | null): string | null {
  if (cursor === null) return null;
  const placekey = /^[A-Za-z0-9_-]{1,128}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!/^[0-9a-z@-]{1,64}$/.test(placekey)) throw new AppError(ErrorCodes.BAD_CURSOR, 'The cursor is not one a version diff returned');
  return placekey;
}

/** Weeks or months of two manifests: added, delivered again, carried (same file), removed. */
export function periodDiff(from: ReadonlyMap<string, string>, to: ReadonlyMap<string, string>): PeriodDiff {
  const all = [...new Set([...from.keys(), ...to.keys()])].sort();
  return {
    added: all.filter((p) => !from.has(p)),
    replaced: all.filter((p) => from.has(p) && to.has(p) && from.get(p) !== to.get(p)),
    carried: all.filter((p) => from.has(p) && to.get(p) === from.get(p)),
    removed: all.filter((p) => !to.has(p)),
  };
}

function valueDeltas(before: readonly ValueCount[] | undefined, after: readonly ValueCount[] | undefined): ValueDelta[] {
  const values = [...new Set([...(before ?? []), ...(after ?? [])].map((v) => v.value))];
  const count = (list: readonly ValueCount[] | undefined, value: string | null) => (list ? list.find((v) => v.value === value)?.rows ?? 0 : null);
  return values.map((value) => ({ value, before: count(before, value), after: count(after, value) }))
    .sort((a, b) => (a.value ?? '\uffff').localeCompare(b.value ?? '\uffff'));
}

/** The profiles side by side: recorded at ingest, nothing is read for it. */
export function profileDelta(before: QualityProfile | null, after: QualityProfile | null): ProfileDelta {
  const periods = [...new Set([...(before?.weeks ?? []), ...(after?.weeks ?? [])].map((w) => w.period))].sort();
  const week = (p: QualityProfile | null, period: string) => p?.weeks.find((w) => w.period === period) ?? null;
  return {
    core_rows: { before: before?.core?.rows ?? null, after: after?.core?.rows ?? null },
    regions: valueDeltas(before?.core?.regions, after?.core?.regions),
    top_categories: valueDeltas(before?.core?.top_categories, after?.core?.top_categories),
    null_shares: FIELDS.map((column) => ({
      column, before: before?.core ? nullShare(before.core, column) : null, after: after?.core ? nullShare(after.core, column) : null,
    })),
    weeks: periods.map((period) => ({
      period,
      pois: { before: week(before, period)?.pois ?? null, after: week(after, period)?.pois ?? null },
      visits: { before: week(before, period)?.visits ?? null, after: week(after, period)?.visits ?? null },
    })),
  };
}

async function all(conn: DuckDBConnection, sql: string, params: Record<string, string | number> = {}): Promise<Record<string, unknown>[]> {
  return (await conn.runAndReadAll(sql, params)).getRowObjectsJS() as Record<string, unknown>[];
}

const str = (v: unknown) => (v === null || v === undefined ? null : String(v));

function emptyPoiDiff(): PoiDiff {
  const none = { items: [], next: null };
  return { same_core_file: true, added: 0, removed: 0, changed: 0, added_by_region: [], added_by_category: [], removed_by_region: [], removed_by_category: [],
    changed_by_field: [], added_examples: none, removed_examples: none, changed_examples: none };
}

/** Core places of one side: the attached file's table, or no rows when that version has no core. */
function coreOf(alias: string | null): string {
  return alias ? `${quoteIdent(alias)}.${TABLES.core}` : `(SELECT ${CORE_COLUMNS.map((c) => `NULL::${c.type} AS ${c.name}`).join(', ')} WHERE false)`;
}

/**
 * POIs added, removed and changed: one full outer join of the two core partitions on placekey
 * (the only rows read), keeping only the rows that differ in a temp table; counts, breakdowns and
 * pages of examples are read from it, and the pages' before and after values from the two core
 * tables by key (sorted by placekey, so a page reads its row groups only).
 */
async function poiDiff(conn: DuckDBConnection, a: string | null, b: string | null, paging: DiffPaging): Promise<PoiDiff> {
  const [fromCore, toCore] = [coreOf(a), coreOf(b)];
  const differs = FIELDS.map((f) => `a.${f} IS DISTINCT FROM b.${f}`);
  await conn.run(`CREATE TEMP TABLE d AS
    SELECT coalesce(b.placekey, a.placekey) AS placekey,
      CASE WHEN a.placekey IS NULL THEN 'added' WHEN b.placekey IS NULL THEN 'removed' ELSE 'changed' END AS kind,
      CASE WHEN b.placekey IS NULL THEN a.region ELSE b.region END AS region,
      CASE WHEN b.placekey IS NULL THEN a.top_category ELSE b.top_category END AS top_category,
      list_filter([${FIELDS.map((f, i) => `CASE WHEN ${differs[i]} THEN ${quoteLiteral(f)} END`).join(', ')}], x -> x IS NOT NULL) AS fields
    FROM ${fromCore} a FULL OUTER JOIN ${toCore} b ON a.placekey = b.placekey
    WHERE a.placekey IS NULL OR b.placekey IS NULL OR ${differs.join(' OR ')}`);
  const counts = new Map((await all(conn, `SELECT kind, count(*)::BIGINT AS n FROM d GROUP BY kind`)).map((r) => [String(r['kind']), Number(r['n'])]));
  const by = async (kind: string, column: 'region' | 'top_category'): Promise<ValueChange[]> =>
    (await all(conn, `SELECT ${column} AS value, count(*)::BIGINT AS n FROM d WHERE kind = $kind GROUP BY ${column} ORDER BY n DESC, value NULLS LAST`, { kind }))
      .map((r) => ({ value: str(r['value']), pois: Number(r['n']) }));
  const fields = (await all(conn, `SELECT f, count(*)::BIGINT AS n FROM (SELECT unnest(fields) AS f FROM d WHERE kind = 'changed') GROUP BY f ORDER BY n DESC, f`))
    .map((r) => ({ field: String(r['f']), pois: Number(r['n']) }));
  const page = async <T>(kind: string, after: string | null, select: string, join: string, map: (r: Record<string, unknown>) => T): Promise<Page<T>> => {
    const rows = await all(conn, `SELECT d.placekey, d.fields, ${select} FROM d ${join}
      WHERE d.kind = $kind AND d.placekey > $after ORDER BY d.placekey LIMIT $limit`, { kind, after: decodeCursor(after) ?? '', limit: paging.first + 1 });
    const items = rows.slice(0, paging.first).map(map);
    return { items, next: rows.length > paging.first ? encodeCursor(String(rows[paging.first - 1]!['placekey'])) : null };
  };
  const example = (side: 'a' | 'b') => (r: Record<string, unknown>): PoiExample => ({
    placekey: String(r['placekey']), location_name: str(r[`${side}_location_name`]), region: str(r[`${side}_region`]), top_category: str(r[`${side}_top_category`]),
  });
  const exampleSelect = (side: 'a' | 'b') => ['location_name', 'region', 'top_category'].map((f) => `${side}.${f} AS ${side}_${f}`).join(', ');
  return {
    same_core_file: false,
    added: counts.get('added') ?? 0, removed: counts.get('removed') ?? 0, changed: counts.get('changed') ?? 0,
    added_by_region: await by('added', 'region'), added_by_category: await by('added', 'top_category'),
    removed_by_region: await by('removed', 'region'), removed_by_category: await by('removed', 'top_category'),
    changed_by_field: fields,
    added_examples: await page('added', paging.added_after, exampleSelect('b'), `JOIN ${toCore} b USING (placekey)`, example('b')),
    removed_examples: await page('removed', paging.removed_after, exampleSelect('a'), `JOIN ${fromCore} a USING (placekey)`, example('a')),
    changed_examples: await page('changed', paging.changed_after,
      FIELDS.map((f) => `a.${f}::VARCHAR AS a_${f}, b.${f}::VARCHAR AS b_${f}`).join(', '),
      `JOIN ${fromCore} a USING (placekey) JOIN ${toCore} b USING (placekey)`,
      (r): ChangedPoi => ({
        placekey: String(r['placekey']),
        changes: (r['fields'] as string[]).map((field) => ({ field, before: str(r[`a_${field}`]), after: str(r[`b_${field}`]) })),
      })),
  };
}

/**
 * What changed from version `from` to version `to` (either may be held): POIs added, removed and
 * changed from their core partitions, weeks and months from their manifests, and their profiles
 * side by side. It opens the two versions' own files for their manifests (a few rows) and, when
 * their core places are in different files, those two files' core tables; it never reads a
 * weekly or monthly partition: which weeks were added, delivered again or carried is what the
 * manifests say (a week held by the same file in both is the same rows, immutable).
 * @throws AppError VERSION_NOT_FOUND, BAD_CURSOR, BAD_PAGE_SIZE
 */
export async function diffVersions(site: VersionSite, from: string, to: string, paging: DiffPaging, settings: DiffSettings): Promise<VersionDiff> {
  if (!Number.isSafeInteger(paging.first) || paging.first < 1 || paging.first > MAX_DIFF_PAGE) {
    throw new AppError(ErrorCodes.BAD_PAGE_SIZE, `first must be from 1 to ${MAX_DIFF_PAGE}`);
  }
  for (const cursor of [paging.added_after, paging.removed_after, paging.changed_after]) decodeCursor(cursor);
  const [recordFrom, recordTo] = [await retainedRecord(site, from), await retainedRecord(site, to)];
  const files = { from: await site.cache.ensure(from, recordFrom.sha256), to: await site.cache.ensure(to, recordTo.sha256) };
  // Its own spill folder: two diffs in one process must not remove each other's.
  const tempDir = path.join(site.cache.dir, '.tmp', `diff-${process.pid}-${randomBytes(6).toString('hex')}`);
  await mkdir(tempDir, { recursive: true });
  const db = await DuckDBInstance.create(':memory:', {
    memory_limit: settings.memoryLimit, temp_directory: tempDir, autoload_known_extensions: 'false', autoinstall_known_extensions: 'false',
    ...(settings.threads === null ? {} : { threads: String(settings.threads) }),
  });
  const conn = await db.connect();
  try {
    const attached = new Map<string, string>();
    const attach = async (label: string, file: string) => {
      if (!attached.has(label)) {
        await conn.run(`ATTACH ${quoteLiteral(file)} AS ${quoteIdent(`f${attached.size}`)} (READ_ONLY)`);
        attached.set(label, `f${attached.size}`);
      }
      return attached.get(label)!;
    };
    const manifest = async (label: string, file: string): Promise<VersionManifest> => {
      await conn.run(`USE ${quoteIdent(await attach(label, file))}`);
      return readManifest(conn);
    };
    const [mFrom, mTo] = [await manifest(from, files.from), await manifest(to, files.to)];
    await conn.run('USE memory');
    const [rFrom, rTo] = [routesOf(mFrom), routesOf(mTo)];
    let pois = emptyPoiDiff();
    if (rFrom.core !== rTo.core) {
      const side = async (label: string, record: VersionRecord, core: string | null) => core === null ? null : attach(core, await localVersionFile(site, label, record, core));
      pois = await poiDiff(conn, await side(from, recordFrom, rFrom.core), await side(to, recordTo, rTo.core), paging);
    }
    return {
      from, to, pois,
      weeks: periodDiff(rFrom.weeks, rTo.weeks), months: periodDiff(rFrom.months, rTo.months),
      profile: profileDelta(recordFrom.profile ?? null, recordTo.profile ?? null),
    };
  } finally {
    conn.closeSync();
    db.closeSync();
    await rm(tempDir, { recursive: true, force: true });
  }
}

import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { KIND_SQL_TYPE } from '../../shared/column-catalog.ts';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { VersionManifest } from '../../versions/version-manifest.ts';
import { PRODUCTS, productTableDdl, TABLES, VERSION_DDL, VERSION_INDEX_DDL, type ExtraColumnDdl } from '../../versions/version-schema.ts';
import { buildInstanceOptions } from './build-instance-options.ts';
import { checkProduct, keySql } from '../drop/check-product.ts';
import { inspectDrop } from '../drop/drop-files.ts';
import type { DropFile } from '../drop/drop-reader.ts';
import type { DropIdentity, ReadDrop } from '../drop/drop-id.ts';
import type { OpenedFile } from '../drop/open-drop.ts';
import type { LoadReport, Product, ProductReport } from '../drop/load-report.ts';
import { collectInvalidPlacekeys } from '../drop/invalid-placekeys.ts';
import { isResourceFailure, resourceError, type SpillUse } from '../drop/load-failure.ts';
import { productLayout, type ProductLayout } from '../drop/product-layout.ts';
import { productRows, STAGE_BOOKKEEPING, STAGE_COLUMNS, STAGED, stageProduct } from '../drop/stage-product.ts';
import { confineLoad } from './confine-load.ts';
import { READER_REJECTS_DDL, readerRejectedLines } from '../drop/reader-rejects.ts';
import { inheritFrom, type BaseVersion } from './inherit-partitions.ts';
import { writeManifest } from './write-manifest.ts';
import { buildMatchIndex } from '../../shared/matching/match-index.ts';
import { buildLookupStore, type BuiltLookupStore } from './build-lookup-store.ts';
import { lookupStorePath } from '../../versions/version-files.ts';
import type { BuildSettings } from './build-settings.ts';
import type { QualityProfile } from '../../versions/quality-profile.ts';
import { profileVersion, writeProfile } from './profile-version.ts';

export type { BuildSettings } from './build-settings.ts';

/** The build's phases: reading the drop's headers, staging its rows, checking them, writing the version file. */
export type BuildPhase = 'inspect' | 'stage' | 'check' | 'write';

/** Where a piece of work is: its phase, a rough overall percentage, and the rows read so far. */
export interface Progress<Phase extends string = string> {
  readonly phase: Phase;
  readonly percent: number;
  readonly rows?: number;
}

/** Where a build is: one of its own phases, at most 85% (what runs the build reports the rest). */
export type BuildProgress = Progress<BuildPhase>;

/**
 * Where a load is: the build's phases, and those of whatever runs the build after it (the
 * publish layer's own, named there: ingest/publish/load-drop.ts).
 */
export type LoadProgress = Progress;

export interface BuildInput {
  /** Where the new file is written (a temp name; publishing renames it). */
  readonly targetFile: string;
  /** `YYYY-MM` from the operator, or null to take it from the data. */
  readonly month: string | null;
  /** The version being served, whose partitions the new one inherits by reference where the drop delivers none. */
  readonly base: BaseVersion | null;
  readonly builtAt: Date;
  /** Names the version once its release month is known. */
  readonly labelFor: (releaseMonth: string) => string;
  /**
   * Checks the release month as soon as it is known, before the costly part of the build: at
   * once when `month` is given, else right after the drop is staged and checked (the month comes
   * from its data). What it throws ends the build (the load's release order, see load-drop.ts).
   */
  readonly checkReleaseMonth?: (releaseMonth: string, source: LoadReport['release_month_source']) => void;
  /** The drop's files and content identity (recorded so a retried job can tell it already published), and each CSV file's header and records as read. */
  readonly drop: ReadDrop;
  /** The drop's files as opened (ingest/drop/open-drop.ts), `drop.files[i]`'s at `i`: every read goes through them. */
  readonly sources: readonly OpenedFile[];
  readonly onProgress?: (progress: BuildProgress) => void;
}

export interface BuildResult {
  readonly label: string;
  readonly report: LoadReport;
  /** The new version's partitions and the earlier files it references. */
  readonly manifest: VersionManifest;
  /** The file's look-up store, built beside it (`lookupStorePath(targetFile)`). */
  readonly lookup: BuiltLookupStore;
  /** The version's quality profile, also written to the file (`version_quality`). */
  readonly profile: QualityProfile;
}

/** The load's own folder in the temp folder: DuckDB's spill files and converted copies of drop files. */
function workDirOf(file: string, s: BuildSettings): string {
  return path.join(s.tempDir, path.basename(file, '.duckdb'));
}

/**
 * Opens the version file being built, then confines the instance to the drop's files and the
 * load's folder: it reads no other version (what it inherits is named, not read).
 */
async function openBuildDb(file: string, s: BuildSettings, input: BuildInput): Promise<{ db: DuckDBInstance; conn: DuckDBConnection }> {
  const workDir = workDirOf(file, s);
  await mkdir(workDir, { recursive: true });
  const db = await DuckDBInstance.create(file, buildInstanceOptions({ ...s, tempDir: workDir }));
  try {
    const conn = await db.connect();
    await confineLoad(conn, input.sources.map((f) => f.readPath), workDir);
    return { db, conn };
  } catch (err) {
    db.closeSync();
    throw err;
  }
}

function assertUsable(product: Product, r: ProductReport, maxShare: number, report: LoadReport): void {
  if (r.rows_loaded === 0) {
    throw new AppError(ErrorCodes.BAD_DROP, `no usable ${product} row in the drop (${r.rows_read} read, ${r.rejected_total} rejected)`, { report });
  }
  const share = r.rows_read === 0 ? 0 : r.rejected_total / r.rows_read;
  if (share > maxShare) {
    const pct = (share * 100).toFixed(1);
    throw new AppError(ErrorCodes.BAD_DROP, `${pct}% of ${product} rows were rejected, above the ${(maxShare * 100).toFixed(1)}% allowed`, { report });
  }
}

/** The delivered columns beyond the spec's, typed by the catalog. */
function tableExtras(layout: ProductLayout): ExtraColumnDdl[] {
  return layout.extras.map((e) => ({ name: e.name, sqlType: KIND_SQL_TYPE[e.kind] }));
}

function emptyReport(files: readonly DropFile[], drop: DropIdentity, maxShare: number): LoadReport {
  return {
    files: files.map((f, i) => ({
      path: f.path, products: f.products, bytes: f.bytes, sha256: drop.files[i]!.sha256,
      ...f.reader.reportFacts(f),
    })),
    column_differences: [], rejected_lines: [], rejected_lines_total: 0,
    products: {}, samples: [], release_month: '', release_month_source: 'argument', weeks_loaded: [],
    weeks_carried_forward: 0, months_loaded: [], months_carried_forward: 0, core_carried_forward: false, geometry_carried_forward: false,
    base: null, inherited_files: [], max_reject_share: maxShare,
    ignored_columns: files.flatMap((f) => f.ignored.map((c) => `${path.basename(f.path)}: ${JSON.stringify(c)}`)),
  };
}

/**
 * Builds a version file from a drop: stage every file typed into the version file, apply the row
 * rules, de-duplicate, make the staged rows the product tables in place, and record the report, the sources and the manifest: the partitions the drop
 * delivered are this file's, every other partition of the base is inherited by reference to the
 * file that holds it (nothing of it is read or copied). Throws AppError BAD_DROP (with
 * `details.report`) when the drop is unusable; the caller removes the partial file.
 */
export async function buildVersion(input: BuildInput, settings: BuildSettings): Promise<BuildResult> {
  if (input.month) input.checkReleaseMonth?.(input.month, 'argument');
  const { db, conn } = await openBuildDb(input.targetFile, settings, input);
  try {
    const progress = input.onProgress ?? (() => undefined);
    progress({ phase: 'inspect', percent: 1 });
    const files = await inspectDrop(conn, input.drop, input.sources, workDirOf(input.targetFile, settings));
    const report = emptyReport(files, input.drop, settings.maxRejectShare);
    report.column_differences = columnDifferences(files);
    const layouts: Record<Product, ProductLayout> = {
      core: productLayout('core', files), weekly: productLayout('weekly', files),
      monthly: productLayout('monthly', files), geometry: productLayout('geometry', files),
    };
    const extras = {} as Record<Product, ExtraColumnDdl[]>;
    for (const product of ALL_PRODUCTS) extras[product] = tableExtras(layouts[product]);
    for (const ddl of VERSION_DDL) await conn.run(ddl);

    const delivered = Object.values(layouts).filter((l) => l.files.length > 0);
    await conn.run(READER_REJECTS_DDL);
    for (const layout of delivered) {
      progress({ phase: 'stage', percent: STAGE_PERCENT[layout.product] });
      await stageProduct(conn, `staged_${layout.product}`, layout);
    }
    progress({ phase: 'check', percent: 40 });
    await collectInvalidPlacekeys(conn, delivered.map((l) => `staged_${l.product}`));
    let rowsRead = 0;
    for (const layout of delivered) {
      const checked = await checkProduct(conn, `staged_${layout.product}`, layout, files);
      report.products[layout.product] = checked.report;
      report.samples.push(...checked.samples);
      rowsRead += checked.report.rows_read;
    }
    const rejectedLines = await readerRejectedLines(conn, files);
    report.rejected_lines = rejectedLines.lines;
    report.rejected_lines_total = rejectedLines.total;
    // Every read of the drop is done: it must have stayed as listed and opened throughout.
    for (const source of input.sources) await source.assertInPlace();
    for (const [product, r] of Object.entries(report.products)) assertUsable(product as Product, r, settings.maxRejectShare, report);

    if (input.month) report.release_month = input.month;
    else {
      const fromData = layouts.weekly.files.length ? await monthFromData(conn, 'weekly')
        : layouts.monthly.files.length ? await monthFromData(conn, 'monthly') : null;
      report.release_month = fromData ?? input.builtAt.toISOString().slice(0, 7);
      report.release_month_source = fromData ? 'data' : 'build_time';
      input.checkReleaseMonth?.(report.release_month, report.release_month_source); // before anything is written
    }

    progress({ phase: 'write', percent: 60, rows: rowsRead });
    // What needs the staged rows' bookkeeping (file, reason) is read before it is dropped.
    for (const layout of delivered) await markKept(conn, layout.product, report.products[layout.product]!.duplicates_dropped);
    await writeSources(conn, files, report);
    if (layouts.weekly.files.length > 0) report.weeks_loaded = await stagedPeriods(conn, 'weekly');
    if (layouts.monthly.files.length > 0) report.months_loaded = await stagedPeriods(conn, 'monthly');
    await conn.run('SET preserve_insertion_order = false');
    for (const product of ALL_PRODUCTS) {
      const layout = layouts[product];
      if (layout.files.length > 0) await finishStaged(conn, layout, report.products[product]!.duplicates_dropped);
      else await conn.run(productTableDdl(product, extras[product]));
    }
    const label = input.labelFor(report.release_month);
    const manifest = await inheritFrom(conn, label, input.base, layouts, report);
    await sortCore(conn);
    await conn.run(`CREATE UNIQUE INDEX ${TABLES.core}_placekey ON ${TABLES.core} (placekey)`);
    for (const ddl of VERSION_INDEX_DDL) await conn.run(ddl);
    // The match index lives with the core it was made from: a version inheriting core matches against the file holding it.
    progress({ phase: 'write', percent: 70, rows: rowsRead });
    if (layouts.core.files.length > 0) await buildMatchIndex(conn, TABLES.core);
    progress({ phase: 'write', percent: 75, rows: rowsRead });
    for (const table of [...ALL_PRODUCTS.map((p) => `kept_${p}`), 'invalid_placekeys']) await conn.run(`DROP TABLE IF EXISTS ${table}`);
    await writeManifest(conn, manifest, { builtAt: input.builtAt, report, dropId: input.drop.id, base: input.base?.label ?? null });
    // From the product tables just written (only what the drop delivered), before the checkpoint that writes them out.
    const profile = await profileVersion(conn, manifest, input.base?.profile ?? null);
    await writeProfile(conn, profile);
    await conn.run('CHECKPOINT');
    // The file's look-up store, from its finished tables: built once, here, and shipped beside
    // the file (docs/architecture.md, Look-up store).
    progress({ phase: 'write', percent: 85, rows: rowsRead });
    const lookup = await buildLookupStore(conn, lookupStorePath(input.targetFile), { connect: () => db.connect(), extras: settings.storeExtras });
    return { label, report, manifest, lookup, profile };
  } catch (err) {
    if (!isResourceFailure(err)) throw err;
    throw resourceError(err, settings, await spillUse(conn, workDirOf(input.targetFile, settings)));
  } finally {
    conn.closeSync();
    db.closeSync();
    await rm(workDirOf(input.targetFile, settings), { recursive: true, force: true });
  }
}

/**
 * Parts of one product whose columns differ from their siblings': a column some parts of the same
 * kind have and this one lacks, or one only this part has. They load all the same (by name; a
 * column a part lacks is null in its rows); the report says so.
 */
function columnDifferences(files: readonly DropFile[]): string[] {
  const out: string[] = [];
  for (const kind of new Set(files.map((f) => f.products))) {
    const parts = files.filter((f) => f.products === kind);
    if (parts.length < 2) continue;
    const all = new Set(parts.flatMap((f) => [...f.columns.keys()]));
    for (const part of parts) {
      const lacks = [...all].filter((c) => !part.columns.has(c));
      const alone = [...part.columns.keys()].filter((c) => parts.every((o) => o === part || !o.columns.has(c)));
      if (lacks.length) out.push(`${path.basename(part.path)} (${kind}) lacks ${lacks.map((c) => JSON.stringify(c)).join(', ')}, which other ${kind} parts have`);
      if (alone.length) out.push(`${path.basename(part.path)} (${kind}) alone has ${alone.map((c) => JSON.stringify(c)).join(', ')}`);
    }
  }
  return out;
}

/**
 * How much the failed build had spilled: the size of the files in its own work folder (DuckDB's
 * spill files stay there until the connection closes; counted from the folder, since a failure
 * inside a transaction leaves it aborted, and rolling it back frees blocks),
 * and DuckDB's cap, read once the transaction is rolled back.
 */
async function spillUse(conn: DuckDBConnection, workDir: string): Promise<SpillUse | null> {
  try {
    let usedBytes = 0;
    for (const name of await readdir(workDir)) usedBytes += (await stat(path.join(workDir, name)).catch(() => ({ size: 0 }))).size;
    await conn.run('ROLLBACK').catch(() => undefined);
    const row = (await conn.runAndReadAll(`SELECT current_setting('max_temp_directory_size') AS max`)).getRowObjectsJS()[0]!;
    return { usedBytes, max: String(row['max']) };
  } catch {
    return null;
  }
}

/**
 * Rewrites places_core in placekey order. Search pages by keyset in placekey order
 * (`placekey > $after ORDER BY placekey LIMIT n`): on a sorted table the zone maps skip the row
 * groups before the cursor and DuckDB's top-N filter those after the page, so a page costs the
 * same at any depth; drops deliver POIs in any order. Core is one row per POI, so the copy is
 * small beside the weekly rows (which stay as staged).
 */
async function sortCore(conn: DuckDBConnection): Promise<void> {
  // Without it, a parallel insert may write the sorted rows out of order.
  await conn.run('SET preserve_insertion_order = true');
  await conn.run(`CREATE TABLE ${TABLES.core}_sorted AS SELECT * FROM ${TABLES.core} ORDER BY placekey`);
  await conn.run(`DROP TABLE ${TABLES.core}`);
  await conn.run(`ALTER TABLE ${TABLES.core}_sorted RENAME TO ${TABLES.core}`);
  await conn.run('SET preserve_insertion_order = false');
}

const ALL_PRODUCTS: readonly Product[] = ['core', 'weekly', 'monthly', 'geometry'];
const STAGE_PERCENT: Readonly<Record<Product, number>> = { core: 5, weekly: 15, monthly: 25, geometry: 30 };

/** The release month a drop's patterns name: the month of its newest week (or month). */
async function monthFromData(conn: DuckDBConnection, product: 'weekly' | 'monthly'): Promise<string | null> {
  const period = PRODUCTS[product].period!;
  const row = (await conn.runAndReadAll(`SELECT strftime(max(${period}), '%Y-%m') AS m FROM ${productRows(`staged_${product}`)} WHERE ${STAGED.reason} IS NULL`)).getRowObjectsJS()[0];
  return row && row['m'] !== null ? String(row['m']) : null;
}

/** The weeks (Mondays) or months (1sts) of a drop's usable patterns rows, YYYY-MM-DD, oldest first. */
async function stagedPeriods(conn: DuckDBConnection, product: 'weekly' | 'monthly'): Promise<string[]> {
  const period = PRODUCTS[product].period!;
  const rows = (await conn.runAndReadAll(`SELECT DISTINCT strftime(${period}, '%Y-%m-%d') AS w FROM ${productRows(`staged_${product}`)} WHERE ${STAGED.reason} IS NULL ORDER BY w`)).getRowObjectsJS();
  return rows.map((w) => String(w['w']));
}

/**
 * When a product's drop repeats keys, the positions of the rows to keep (the earliest delivered
 * of each key), found on a narrow projection: a window over the wide rows (lists, maps) would
 * not fit the memory limit.
 */
async function markKept(conn: DuckDBConnection, product: Product, duplicates: number): Promise<void> {
  if (duplicates === 0) return;
  const { pos, reason } = STAGED;
  await conn.run(`CREATE OR REPLACE TEMP TABLE kept_${product} AS SELECT ${pos} FROM (
    SELECT ${pos}, row_number() OVER (PARTITION BY ${keySql(product)} ORDER BY ${pos}) AS k
    FROM ${productRows(`staged_${product}`)} WHERE ${reason} IS NULL) WHERE k = 1`);
}

/**
 * Turns a product's staging table into its table in place: deletes the rows not loaded (out of
 * the product, rejected, or repeating an earlier key: the earliest delivered is kept), drops the
 * bookkeeping columns and renames it. Deletes, column drops and renames do not rewrite the rows,
 * where copying millions of wide rows (lists, maps) into another table cost as much as reading
 * the drop (measured at 1M POIs x 4 weeks).
 */
async function finishStaged(conn: DuckDBConnection, layout: ProductLayout, duplicates: number): Promise<void> {
  const staged = `staged_${layout.product}`;
  const keep = duplicates > 0 ? ` OR rowid NOT IN (SELECT ${STAGED.pos} FROM kept_${layout.product})` : '';
  await conn.run(`DELETE FROM ${staged} WHERE NOT ${STAGED.inProduct} OR ${STAGED.reason} IS NOT NULL${keep}`);
  for (const column of STAGE_BOOKKEEPING) await conn.run(`ALTER TABLE ${staged} DROP COLUMN ${column}`);
  await conn.run(`ALTER TABLE ${staged} RENAME TO ${PRODUCTS[layout.product].table}`);
}

async function writeSources(conn: DuckDBConnection, files: readonly DropFile[], report: LoadReport): Promise<void> {
  const perFile = new Map<number, { read: number; loaded: number }>();
  for (const product of Object.keys(report.products) as Product[]) {
    // A usable row is loaded unless it repeats an earlier key: kept_<product> lists the positions kept.
    const { file: fileIdx, reason, pos } = STAGED;
    const kept = report.products[product]!.duplicates_dropped > 0 ? ` AND ${pos} IN (SELECT ${pos} FROM kept_${product})` : '';
    const rows = (await conn.runAndReadAll(`SELECT ${fileIdx}, count(*)::BIGINT AS r, count(*) FILTER (WHERE ${reason} IS NULL${kept})::BIGINT AS l
        FROM ${productRows(`staged_${product}`)} GROUP BY ${fileIdx}`)).getRowObjectsJS();
    for (const row of rows) {
      const index = Number(row[STAGE_COLUMNS.file]);
      const entry = perFile.get(index) ?? { read: 0, loaded: 0 };
      entry.read += Number(row['r']);
      entry.loaded += Number(row['l']);
      perFile.set(index, entry);
    }
  }
  for (const [index, f] of files.entries()) {
    const counts = perFile.get(index) ?? { read: 0, loaded: 0 };
    await conn.run(`INSERT INTO ${TABLES.sources} VALUES ($path, $bytes, $sha, $products, $read, $loaded)`, {
      path: path.basename(f.path), bytes: f.bytes, sha: report.files[index]!.sha256, products: f.products, read: counts.read, loaded: counts.loaded,
    });
  }
}

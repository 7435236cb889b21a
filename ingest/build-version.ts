import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { CORE_COLUMNS, SCHEMA_VERSION, TABLES, VERSION_DDL, VERSION_INDEX_DDL, WEEKLY_COLUMNS } from '../shared/version-schema.ts';
import { inspectDrop, type DropFile } from './drop-files.ts';
import { stageProduct } from './stage-product.ts';
import { checkProduct } from './check-product.ts';
import { CORE_REASON_SQL, WEEKLY_REASON_SQL, WEEK_START_SQL } from './validation-rules.ts';
import type { DropIdentity } from './drop-id.ts';
import type { LoadReport, Product, ProductReport } from './load-report.ts';
import { registerPlacekeyUdf } from './placekey-udf.ts';
import { quoteLiteral } from './sql.ts';

export interface BuildSettings {
  readonly memoryLimit: string;
  readonly threads: number | null;
  readonly tempDir: string;
  readonly maxRejectShare: number;
}

export interface BuildInput {
  /** Where the new file is written (a temp name; publishing renames it). */
  readonly targetFile: string;
  readonly inputs: readonly string[];
  /** `YYYY-MM` from the operator, or null to take it from the data. */
  readonly month: string | null;
  /** The version being served, to carry weeks (and core, if the drop has none) forward. */
  readonly previousFile: string | null;
  readonly builtAt: Date;
  /** Names the version once its release month is known. */
  readonly labelFor: (releaseMonth: string) => string;
  /** The drop's content identity (recorded so a retried job can tell it already published). */
  readonly drop: DropIdentity;
  readonly onProgress?: (progress: LoadProgress) => void;
}

/** Where a load is: its phase and a rough overall percentage. */
export interface LoadProgress {
  readonly phase: 'inspect' | 'stage' | 'check' | 'write' | 'verify' | 'publish' | 'done';
  readonly percent: number;
  readonly rows?: number;
}

export interface BuildResult {
  readonly label: string;
  readonly report: LoadReport;
}

const WEEKLY_ONLY_COLUMNS = ['date_range_start', 'date_range_end', 'raw_visit_counts', 'raw_visit_count', 'raw_visitor_counts', 'raw_visitor_count', 'visits_by_day'];

async function openBuildDb(file: string, s: BuildSettings): Promise<{ db: DuckDBInstance; conn: DuckDBConnection }> {
  await mkdir(s.tempDir, { recursive: true });
  const options: Record<string, string> = { memory_limit: s.memoryLimit, temp_directory: s.tempDir };
  if (s.threads !== null) options['threads'] = String(s.threads);
  const db = await DuckDBInstance.create(file, options);
  const conn = await db.connect();
  registerPlacekeyUdf(conn);
  return { db, conn };
}

function filesFor(files: readonly DropFile[], product: Product) {
  return files
    .map((file, index) => ({ file, index }))
    .filter(({ file }) => file.products === 'combined' || file.products === product)
    .map(({ file, index }) => ({ file, index, onlyRowsWith: product === 'weekly' && file.products === 'combined' ? WEEKLY_ONLY_COLUMNS : undefined }));
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

async function monthFromData(conn: DuckDBConnection): Promise<string | null> {
  const row = (await conn.runAndReadAll(`SELECT strftime(max(week_start), '%Y-%m') AS m FROM new_weekly`)).getRowObjectsJS()[0];
  return row && row['m'] !== null ? String(row['m']) : null;
}

/**
 * Builds a complete version file from a drop: stage every file as text, apply the row rules,
 * de-duplicate, write typed tables sorted by placekey, carry forward what the drop does not
 * replace, and record the report and sources. Throws AppError BAD_DROP (with `details.report`)
 * when the drop is unusable; the caller removes the partial file.
 */
export async function buildVersion(input: BuildInput, settings: BuildSettings): Promise<BuildResult> {
  const { db, conn } = await openBuildDb(input.targetFile, settings);
  try {
    const progress = input.onProgress ?? (() => undefined);
    progress({ phase: 'inspect', percent: 1 });
    for (const ddl of VERSION_DDL) await conn.run(ddl);
    const files = await inspectDrop(conn, input.drop.files.map((f) => f.path));
    const report: LoadReport = {
      files: [], products: {}, samples: [], release_month: '', release_month_source: 'argument',
      weeks_loaded: [], weeks_carried_forward: 0, core_carried_forward: false, max_reject_share: settings.maxRejectShare,
    };
    for (const [i, f] of files.entries()) report.files.push({ path: f.path, products: f.products, bytes: f.bytes, sha256: input.drop.files[i]!.sha256 });
    if (input.previousFile) await conn.run(`ATTACH ${quoteLiteral(input.previousFile)} AS prev (READ_ONLY)`);

    const coreFiles = filesFor(files, 'core');
    const weeklyFiles = filesFor(files, 'weekly');
    progress({ phase: 'stage', percent: 5 });
    if (coreFiles.length) {
      await stageProduct(conn, 'stage_core', CORE_COLUMNS, coreFiles);
      const checked = await checkProduct(conn, { product: 'core', staged: 'stage_core', checked: 'checked_core', reasonSql: CORE_REASON_SQL, keySql: 'placekey' }, files);
      report.products.core = checked.report;
      report.samples.push(...checked.samples);
    }
    if (weeklyFiles.length) {
      progress({ phase: 'stage', percent: 20, rows: report.products.core?.rows_read ?? 0 });
      await stageProduct(conn, 'stage_weekly', WEEKLY_COLUMNS, weeklyFiles);
      const checked = await checkProduct(conn, { product: 'weekly', staged: 'stage_weekly', checked: 'checked_weekly', reasonSql: WEEKLY_REASON_SQL, keySql: `placekey, ${WEEK_START_SQL}` }, files);
      report.products.weekly = checked.report;
      report.samples.push(...checked.samples);
    }
    for (const [product, r] of Object.entries(report.products)) assertUsable(product as Product, r, settings.maxRejectShare, report);

    const rowsRead = Object.values(report.products).reduce((n, r) => n + r.rows_read, 0);
    progress({ phase: 'write', percent: 60, rows: rowsRead });
    await writeCore(conn, coreFiles.length > 0, input.previousFile !== null, report);
    await writeWeekly(conn, weeklyFiles.length > 0, input.previousFile !== null, report);
    for (const ddl of VERSION_INDEX_DDL) await conn.run(ddl);

    if (input.month) report.release_month = input.month;
    else {
      const fromData = weeklyFiles.length ? await monthFromData(conn) : null;
      report.release_month = fromData ?? input.builtAt.toISOString().slice(0, 7);
      report.release_month_source = fromData ? 'data' : 'build_time';
    }
    await writeSources(conn, files, report);
    const label = input.labelFor(report.release_month);
    await writeVersionInfo(conn, label, input.builtAt, report, input.drop.id);
    await conn.run('CHECKPOINT');
    return { label, report };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

async function writeCore(conn: DuckDBConnection, delivered: boolean, hasPrevious: boolean, report: LoadReport): Promise<void> {
  const cols = CORE_COLUMNS.map((c) => c.name);
  if (delivered) {
    const exprs = CORE_COLUMNS.map((c) => (c.type === 'VARCHAR' ? c.name : `CAST(${c.name} AS ${c.type}) AS ${c.name}`));
    await conn.run(`INSERT INTO ${TABLES.core} SELECT ${exprs.join(', ')} FROM checked_core
      WHERE reason IS NULL AND key_rank = 1 ORDER BY placekey`);
  } else if (hasPrevious) {
    await conn.run(`INSERT INTO ${TABLES.core} SELECT ${cols.join(', ')} FROM prev.${TABLES.core} ORDER BY placekey`);
    report.core_carried_forward = true;
  }
}

async function writeWeekly(conn: DuckDBConnection, delivered: boolean, hasPrevious: boolean, report: LoadReport): Promise<void> {
  const cols = [...WEEKLY_COLUMNS.map((c) => c.name), 'week_start'];
  const exprs = WEEKLY_COLUMNS.map((c) => (c.type === 'VARCHAR' ? c.name : `CAST(${c.name} AS ${c.type}) AS ${c.name}`));
  await conn.run(`CREATE TEMP TABLE new_weekly AS SELECT ${exprs.join(', ')}, ${WEEK_START_SQL} AS week_start
    FROM ${delivered ? 'checked_weekly WHERE reason IS NULL AND key_rank = 1' : `${TABLES.weekly} WHERE false`}`);
  const weeks = (await conn.runAndReadAll(`SELECT DISTINCT strftime(week_start, '%Y-%m-%d') AS w FROM new_weekly ORDER BY w`)).getRowObjectsJS();
  report.weeks_loaded = weeks.map((w) => String(w['w']));
  // A week delivered again replaces that week; every other retained week carries forward.
  const carried = hasPrevious
    ? `UNION ALL SELECT ${cols.join(', ')} FROM prev.${TABLES.weekly} WHERE week_start NOT IN (SELECT week_start FROM new_weekly)`
    : '';
  await conn.run(`INSERT INTO ${TABLES.weekly} SELECT * FROM (SELECT ${cols.join(', ')} FROM new_weekly ${carried}) ORDER BY placekey, week_start`);
  if (hasPrevious) {
    const row = (await conn.runAndReadAll(`SELECT count(DISTINCT week_start)::INTEGER AS n FROM ${TABLES.weekly} WHERE week_start NOT IN (SELECT week_start FROM new_weekly)`)).getRowObjectsJS()[0]!;
    report.weeks_carried_forward = Number(row['n']);
  }
}

async function writeSources(conn: DuckDBConnection, files: readonly DropFile[], report: LoadReport): Promise<void> {
  for (const [index, f] of files.entries()) {
    const counts = await countsForFile(conn, index, report);
    await conn.run(`INSERT INTO ${TABLES.sources} VALUES ($path, $bytes, $sha, $products, $read, $loaded)`, {
      path: path.basename(f.path), bytes: f.bytes, sha: report.files[index]!.sha256, products: f.products, read: counts.read, loaded: counts.loaded,
    });
  }
}

async function countsForFile(conn: DuckDBConnection, index: number, report: LoadReport): Promise<{ read: number; loaded: number }> {
  let read = 0;
  let loaded = 0;
  for (const product of Object.keys(report.products)) {
    const row = (await conn.runAndReadAll(`SELECT count(*)::BIGINT AS r, count(*) FILTER (WHERE reason IS NULL AND key_rank = 1)::BIGINT AS l
      FROM checked_${product} WHERE file_idx = $idx`, { idx: index })).getRowObjectsJS()[0]!;
    read += Number(row['r']);
    loaded += Number(row['l']);
  }
  return { read, loaded };
}

/** Writes the version_info row: label, build time, release month, counts, weeks, report. */
async function writeVersionInfo(conn: DuckDBConnection, label: string, builtAt: Date, report: LoadReport, dropId: string): Promise<void> {
  await conn.run(`INSERT INTO ${TABLES.info}
    SELECT $label, $built, $month, $schema, (SELECT count(*) FROM ${TABLES.core}), (SELECT count(*) FROM ${TABLES.weekly}),
      min(week_start), max(week_start), count(DISTINCT week_start)::INTEGER, $report, $drop FROM ${TABLES.weekly}`, {
    label, built: builtAt.toISOString(), month: report.release_month, schema: SCHEMA_VERSION, report: JSON.stringify(report), drop: dropId,
  });
}

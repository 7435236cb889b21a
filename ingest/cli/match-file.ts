import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { matchIndexSelect } from '../../shared/matching/match-index.ts';
import { bestMatchSql, matchSourceIn, type MatchSource } from '../../shared/matching/match-places.ts';
import { PLACE_QUERY_FIELDS, shortfallSql, type PlaceQueryField } from '../../shared/matching/place-query.ts';
import { localVersionFile, retainedRecord } from '../../versions/retention/retained-version.ts';
import { quoteIdent, quoteLiteral } from '../../shared/sql.ts';
import { readManifest, routesOf } from '../../versions/version-manifest.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import type { Progress } from './cli-progress.ts';
import { resolveColumns } from './match-columns.ts';

/** Rows matched per statement: each chunk is one progress step, and bounds what one statement holds. */
export const DEFAULT_CHUNK_ROWS = 20_000;

export interface MatchFileOptions {
  readonly input: string;
  readonly output: string;
  readonly minConfidence: number;
  /** Columns named by flags, by the field they hold (the rest are found by their headers). */
  readonly columns: Partial<Record<PlaceQueryField, string>>;
  readonly force: boolean;
  readonly chunkRows: number;
  readonly memoryLimit: string;
  readonly threads: number | null;
  /** DuckDB's spill folder's parent (DUCKDB_TEMP_DIR): the run spills into a folder of its own there. */
  readonly tempDir: string;
  readonly onProgress?: (p: Progress) => void;
}

/** What `placedata match` did: counts of the input's rows by outcome, and where it read and wrote. */
export interface MatchFileSummary {
  readonly input: string;
  readonly output: string;
  /** The version matched against. */
  readonly version: string;
  /** Which input column held each query field. */
  readonly columns: Partial<Record<PlaceQueryField, string>>;
  readonly min_confidence: number;
  readonly rows: number;
  /** Rows given a Placekey (best candidate at or above the threshold). */
  readonly matched: number;
  /** Rows whose best candidate was below the threshold (its confidence and matched_on are written, no Placekey). */
  readonly below_threshold: number;
  /** Rows that could identify a place but had no candidate at all. */
  readonly no_candidate: number;
  /** Rows that cannot identify a place (queryShortfall's rule): not matched. */
  readonly refused: number;
  readonly seconds: number;
}

type FileFormat = 'csv' | 'csv.gz' | 'parquet';

/** The format a user's file's name says: `.csv`, `.csv.gz` or `.parquet` (any case), else null (a drop's files: ingest/drop/drop-readers.ts, which also reads .tsv and .txt). */
export function userFileFormat(file: string): FileFormat | null {
  const name = file.toLowerCase();
  if (name.endsWith('.csv.gz')) return 'csv.gz';
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.parquet')) return 'parquet';
  return null;
}

/** The table function reading the user's file: every CSV value as text, as written. */
function readerOf(file: string, format: FileFormat): string {
  return format === 'parquet' ? `read_parquet(${quoteLiteral(file)})` : `read_csv(${quoteLiteral(file)}, header = true, all_varchar = true)`;
}

function copyOptions(format: FileFormat): string {
  return format === 'parquet' ? 'FORMAT parquet' : `FORMAT csv, HEADER true, COMPRESSION ${format === 'csv.gz' ? "'gzip'" : "'none'"}`;
}

/** A DuckDB error on the user's file, as a refusal naming the file (the first line of DuckDB's message). */
function unreadable(file: string, format: FileFormat, err: unknown): AppError {
  const why = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 300);
  return new AppError(ErrorCodes.BAD_INPUT, `cannot read ${file} as ${format === 'parquet' ? 'Parquet' : 'CSV with a header row'}: ${why}`);
}

/**
 * The SQL value of each query field from the input's columns (positional `c<i>`): text trimmed,
 * blank as null; coordinates as DOUBLE (text that is not a number as null).
 */
function fieldSql(field: PlaceQueryField, column: string | undefined): string {
  if (column === undefined) return `NULL::${field === 'latitude' || field === 'longitude' ? 'DOUBLE' : 'VARCHAR'} AS ${field}`;
  if (field === 'latitude' || field === 'longitude') return `TRY_CAST(nullif(trim(${column}::VARCHAR), '') AS DOUBLE) AS ${field}`;
  return `nullif(trim(${column}::VARCHAR), '') AS ${field}`;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(() => true, () => false);
}

/** Checks the input, the output and their formats before anything is read. */
async function checkFiles(o: MatchFileOptions): Promise<{ inFormat: FileFormat; outFormat: FileFormat }> {
  const inFormat = userFileFormat(o.input);
  const outFormat = userFileFormat(o.output);
  if (!inFormat) throw new AppError(ErrorCodes.BAD_REQUEST, `the input must be .csv, .csv.gz or .parquet; got ${JSON.stringify(path.basename(o.input))}`);
  if (!outFormat) throw new AppError(ErrorCodes.BAD_REQUEST, `--out must name a .csv, .csv.gz or .parquet file; got ${JSON.stringify(path.basename(o.output))}`);
  const input = await stat(o.input).catch(() => null);
  if (!input) throw new AppError(ErrorCodes.INPUT_NOT_FOUND, `no such file: ${o.input}`);
  if (!input.isFile()) throw new AppError(ErrorCodes.BAD_INPUT, `${o.input} is not a file`);
  if (path.resolve(o.input) === path.resolve(o.output)) throw new AppError(ErrorCodes.BAD_REQUEST, '--out must not be the input');
  if (!(await stat(path.dirname(path.resolve(o.output))).then((s) => s.isDirectory(), () => false))) {
    throw new AppError(ErrorCodes.BAD_REQUEST, `the folder of --out does not exist: ${path.dirname(o.output)}`);
  }
  if (!o.force && await exists(o.output)) throw new AppError(ErrorCodes.OUTPUT_EXISTS, `${o.output} exists; pass --force to replace it`);
  return { inFormat, outFormat };
}

/**
 * Attaches the version in service's file holding core places (read-only, under its label) and
 * returns the version's label and the file's database name.
 */
async function attachCore(conn: DuckDBConnection, site: VersionSite): Promise<{ version: string; database: string }> {
  const version = await site.pointer.read();
  if (version === null) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, 'no version is in service: load a drop first (placedata load)');
  const record = await retainedRecord(site, version);
  const own = await localVersionFile(site, version, record, version);
  await conn.run(`ATTACH ${quoteLiteral(own)} AS ${quoteIdent(version)} (READ_ONLY)`);
  await conn.run(`USE ${quoteIdent(version)}`);
  const core = routesOf(await readManifest(conn)).core;
  await conn.run('USE memory');
  if (core === null) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${version} holds no core places to match against`);
  if (core !== version) await conn.run(`ATTACH ${quoteLiteral(await localVersionFile(site, version, record, core))} AS ${quoteIdent(core)} (READ_ONLY)`);
  return { version, database: core };
}

/**
 * The source with an index: a file built before matching has none, and the pipeline would derive
 * it from core in every statement (every chunk); here it is derived once, into a table of the run's own.
 */
async function indexedSource(conn: DuckDBConnection, source: MatchSource): Promise<MatchSource> {
  if (source.index !== null) return source;
  await conn.run(`CREATE TABLE derived_index AS ${matchIndexSelect(source.core, source.coreColumns)}`);
  return { ...source, index: 'derived_index' };
}

async function count(conn: DuckDBConnection, sql: string): Promise<number> {
  return Number((await conn.runAndReadAll(sql)).getRows()[0]![0]);
}

/**
 * Matches every row of the user's file (CSV, gzipped CSV or Parquet) against the version in
 * service and writes them, in input order and with every column as read, plus `placekey`,
 * `confidence` and `matched_on` (the agreeing fields, `;`-separated), to
 * `output` (its format by its name): written under a temp name beside it and renamed when whole.
 * The file's contents are data only: its names reach SQL through quoteIdent alone.
 * @throws AppError INPUT_NOT_FOUND, BAD_INPUT (unreadable, columns), OUTPUT_EXISTS, BAD_REQUEST
 *   (file names, folders), VERSION_NOT_FOUND (nothing in service).
 */
export async function matchFile(site: VersionSite, o: MatchFileOptions): Promise<MatchFileSummary> {
  const started = performance.now();
  const { inFormat, outFormat } = await checkFiles(o);
  const progress = o.onProgress ?? (() => undefined);
  // Its own spill folder: two runs must not remove each other's.
  const spill = path.join(o.tempDir, `match-${process.pid}-${randomBytes(6).toString('hex')}`);
  await mkdir(spill, { recursive: true });
  const db = await DuckDBInstance.create(':memory:', {
    memory_limit: o.memoryLimit, temp_directory: spill, autoload_known_extensions: 'false', autoinstall_known_extensions: 'false',
    ...(o.threads === null ? {} : { threads: String(o.threads) }),
  });
  const conn = await db.connect();
  const partial = path.join(path.dirname(o.output), `.${path.basename(o.output)}.${process.pid}-${randomBytes(4).toString('hex')}.part`);
  try {
    const { version, database } = await attachCore(conn, site);
    const source = await indexedSource(conn, await matchSourceIn(conn, database));
    progress({ phase: 'read', percent: 0 });
    const reader = readerOf(o.input, inFormat);
    let headers: string[];
    try {
      headers = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${reader}`)).getRowObjectsJS().map((r) => String(r['column_name']));
    } catch (err) {
      throw unreadable(o.input, inFormat, err);
    }
    const columns = resolveColumns(headers, o.columns);
    // Positional names inside: a header such as `rowid` would hide the row's position (DuckDB's
    // rowid, the input order the output keeps); the headers come back on the way out.
    try {
      await conn.run(`CREATE TABLE input AS SELECT ${headers.map((h, i) => `${quoteIdent(h)} AS c${i}`).join(', ')} FROM ${reader}`);
    } catch (err) {
      throw unreadable(o.input, inFormat, err);
    }
    const position = (column: string | undefined) => column === undefined ? undefined : `c${headers.indexOf(column)}`;
    await conn.run(`CREATE TABLE queries AS SELECT query_row, ${PLACE_QUERY_FIELDS.join(', ')}, ${shortfallSql()} AS refused
      FROM (SELECT rowid AS query_row, ${PLACE_QUERY_FIELDS.map((f) => fieldSql(f, position(columns[f]))).join(', ')} FROM input)`);
    const rows = await count(conn, 'SELECT count(*) FROM input');
    const refused = await count(conn, 'SELECT count(*) FROM queries WHERE refused');
    await conn.run('CREATE TABLE matches (query_row BIGINT, placekey VARCHAR, confidence DOUBLE, matched_on VARCHAR[])');
    progress({ phase: 'match', percent: 5, rows: 0 });
    for (let lo = 0; lo < rows; lo += o.chunkRows) {
      const chunk = `SELECT query_row, ${PLACE_QUERY_FIELDS.join(', ')} FROM queries WHERE query_row >= ${lo} AND query_row < ${lo + o.chunkRows} AND NOT refused`;
      await conn.run(`INSERT INTO matches SELECT query_row, placekey, confidence, matched_on FROM (${bestMatchSql(source, chunk, o.minConfidence)})`);
      const done = Math.min(rows, lo + o.chunkRows);
      progress({ phase: 'match', percent: 5 + Math.floor((90 * done) / rows), rows: done });
    }
    const [candidates, distinct, matched] = (await conn.runAndReadAll('SELECT count(*), count(DISTINCT query_row), count(placekey) FROM matches')).getRows()[0]!.map(Number) as [number, number, number];
    if (candidates !== distinct) throw new Error(`the match gave ${candidates} answers for ${distinct} rows: one per row was expected`);
    progress({ phase: 'write', percent: 95, rows });
    await conn.run(`COPY (SELECT ${headers.map((h, i) => `i.c${i} AS ${quoteIdent(h)}`).join(', ')},
        m.placekey, m.confidence, array_to_string(m.matched_on, ';') AS matched_on
      FROM input i LEFT JOIN matches m ON m.query_row = i.rowid ORDER BY i.rowid) TO ${quoteLiteral(partial)} (${copyOptions(outFormat)})`);
    await rename(partial, o.output);
    progress({ phase: 'done', percent: 100, rows });
    return {
      input: o.input, output: o.output, version, columns, min_confidence: o.minConfidence,
      rows, matched, below_threshold: candidates - matched, no_candidate: rows - refused - candidates, refused,
      seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
    };
  } finally {
    conn.closeSync();
    db.closeSync();
    await rm(partial, { force: true });
    await rm(spill, { recursive: true, force: true });
  }
}

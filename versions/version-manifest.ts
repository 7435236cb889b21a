import type { DuckDBConnection } from '@duckdb/node-api';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { TABLES, WHOLE_COPY_SCHEMAS } from './version-schema.ts';

/** The products a version is made of, each split into partitions: core and geometry whole, patterns by period. */
export type PartitionProduct = 'core' | 'geometry' | 'weekly' | 'monthly';

/**
 * One partition of a version and the file that holds it: core or geometry (period null), one
 * week of weekly patterns (its Monday) or one month of monthly patterns (its 1st), YYYY-MM-DD.
 * A drop that delivers a partition replaces it whole; the rest is inherited by reference.
 */
export interface Partition {
  readonly product: PartitionProduct;
  readonly period: string | null;
  /** The label of the file holding it (the version's own label for what its drop delivered). */
  readonly file: string;
  readonly rows: number;
}

/** What was recorded of a file's look-up store when it was built (checked before it serves). */
export interface StoreDigest {
  readonly bytes: number;
  readonly sha256: string;
  /** SHA-256 of its first pages (lmdb's meta pages), checked at every open: versions/lookup-store/lookup-store-head.ts. */
  readonly headSha256: string;
}

/** An earlier immutable file a version inherits partitions from, as it was published. */
export interface FileRef {
  readonly label: string;
  readonly sha256: string;
  readonly bytes: number;
  /** Its look-up store, or null for a file built without one (an older release's). */
  readonly lookup: StoreDigest | null;
}

/**
 * What a version is made of: every partition and the file holding it, and the earlier files it
 * references (with the sha256 each must have). Like an Iceberg snapshot's manifest list: the
 * version file holds what its drop delivered, and names the immutable files the rest comes from.
 */
export interface VersionManifest {
  readonly label: string;
  readonly schemaVersion: number;
  /** Core, geometry, then weeks and months, each oldest first. */
  readonly partitions: readonly Partition[];
  /** The referenced earlier files, oldest first; empty for a whole copy (schema 3 or 4). */
  readonly files: readonly FileRef[];
}

const ORDER: Readonly<Record<PartitionProduct, number>> = { core: 0, geometry: 1, weekly: 2, monthly: 3 };

/** Partitions in the manifest's order: product, then period. */
export function sortPartitions(partitions: readonly Partition[]): Partition[] {
  return [...partitions].sort((a, b) => ORDER[a.product] - ORDER[b.product] || (a.period ?? '').localeCompare(b.period ?? ''));
}

/**
 * The version's manifest, read from the database `conn` has as its current one (a version file
 * opened on its own, or the main database of a served version). A whole-copy file (schema 3 or
 * 4) has no manifest tables: its partitions are read from its product tables, all its own.
 * @throws AppError VERSION_INVALID when the file has no single version_info row.
 */
export async function readManifest(conn: DuckDBConnection): Promise<VersionManifest> {
  const info = (await conn.runAndReadAll(`SELECT label, schema_version FROM ${TABLES.info}`)).getRowObjectsJS();
  if (info.length !== 1) throw new AppError(ErrorCodes.VERSION_INVALID, 'version_info must hold exactly one row');
  const label = String(info[0]!['label']);
  const schemaVersion = Number(info[0]!['schema_version']);
  if (WHOLE_COPY_SCHEMAS.includes(schemaVersion)) return { label, schemaVersion, partitions: await wholeCopyPartitions(conn, label), files: [] };
  const partitions = (await conn.runAndReadAll(`SELECT product, strftime(period, '%Y-%m-%d') AS period, file, rows FROM ${TABLES.partitions}`))
    .getRowObjectsJS().map((r) => ({ product: String(r['product']) as PartitionProduct, period: r['period'] === null ? null : String(r['period']), file: String(r['file']), rows: Number(r['rows']) }));
  const files = (await conn.runAndReadAll(`SELECT label, sha256, bytes, lookup_bytes, lookup_sha256, lookup_head FROM ${TABLES.files}`))
    .getRowObjectsJS().map((r) => ({
      label: String(r['label']), sha256: String(r['sha256']), bytes: Number(r['bytes']),
      lookup: r['lookup_sha256'] === null ? null : { bytes: Number(r['lookup_bytes']), sha256: String(r['lookup_sha256']), headSha256: String(r['lookup_head']) },
    }));
  return { label, schemaVersion, partitions: sortPartitions(partitions), files: files.sort((a, b) => a.label.localeCompare(b.label)) };
}

/** A whole copy's partitions, counted from its own tables (monthly and geometry only where schema 4 has them). */
async function wholeCopyPartitions(conn: DuckDBConnection, label: string): Promise<Partition[]> {
  const tables = new Set((await conn.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'`))
    .getRowObjectsJS().map((r) => String(r['table_name'])));
  const out: Partition[] = [];
  const whole = async (product: 'core' | 'geometry', table: string) => {
    if (!tables.has(table)) return;
    const rows = Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${table}`)).getRowObjectsJS()[0]!['n']);
    if (rows > 0) out.push({ product, period: null, file: label, rows });
  };
  const periods = async (product: 'weekly' | 'monthly', table: string, column: string) => {
    if (!tables.has(table)) return;
    const rows = (await conn.runAndReadAll(`SELECT strftime(${column}, '%Y-%m-%d') AS p, count(*)::BIGINT AS n FROM ${table} GROUP BY ALL`)).getRowObjectsJS();
    for (const r of rows) out.push({ product, period: String(r['p']), file: label, rows: Number(r['n']) });
  };
  await whole('core', TABLES.core);
  await whole('geometry', TABLES.geometry);
  await periods('weekly', TABLES.weekly, 'week_start');
  await periods('monthly', TABLES.monthly, 'month_start');
  return sortPartitions(out);
}

/** Where each partition of a version is read from: a file label per partition. */
export interface PartitionRoutes {
  readonly core: string | null;
  readonly geometry: string | null;
  /** By Monday, oldest first. */
  readonly weeks: ReadonlyMap<string, string>;
  /** By 1st of the month, oldest first. */
  readonly months: ReadonlyMap<string, string>;
}

export function routesOf(manifest: Pick<VersionManifest, 'partitions'>): PartitionRoutes {
  const find = (product: PartitionProduct) => manifest.partitions.find((p) => p.product === product)?.file ?? null;
  const periods = (product: PartitionProduct) => new Map(manifest.partitions.filter((p) => p.product === product).map((p) => [p.period!, p.file]));
  return { core: find('core'), geometry: find('geometry'), weeks: periods('weekly'), months: periods('monthly') };
}

/** Every file a version needs: its own and those it references. */
export function filesOf(manifest: Pick<VersionManifest, 'label' | 'files'>): string[] {
  return [manifest.label, ...manifest.files.map((f) => f.label)];
}

import type { DuckDBConnection } from '@duckdb/node-api';
import { sortPartitions, type FileRef, type Partition, type StoreDigest, type VersionManifest } from '../../versions/version-manifest.ts';
import { SCHEMA_VERSION, TABLES, WHOLE_COPY_SCHEMAS } from '../../versions/version-schema.ts';
import type { LoadReport, Product } from '../drop/load-report.ts';
import type { ProductLayout } from '../drop/product-layout.ts';
import type { QualityProfile } from '../../versions/quality-profile.ts';

/** The version a load builds on: what it is made of, and its own file's published sha256 and size. */
export interface BaseVersion {
  readonly label: string;
  readonly sha256: string;
  readonly bytes: number;
  /** Its own file's look-up store (null: built without one). */
  readonly lookup: StoreDigest | null;
  readonly manifest: VersionManifest;
  /** Its quality profile as recorded (null: built by a release that recorded none). */
  readonly profile?: QualityProfile | null;
}

/** The partitions the drop delivered, counted from the new file's own product tables. */
async function ownPartitions(conn: DuckDBConnection, label: string, delivered: ReadonlySet<Product>): Promise<Partition[]> {
  const out: Partition[] = [];
  for (const [product, table] of [['core', TABLES.core], ['geometry', TABLES.geometry]] as const) {
    if (!delivered.has(product)) continue;
    const rows = Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${table}`)).getRowObjectsJS()[0]!['n']);
    out.push({ product, period: null, file: label, rows });
  }
  for (const [product, table, column] of [['weekly', TABLES.weekly, 'week_start'], ['monthly', TABLES.monthly, 'month_start']] as const) {
    if (!delivered.has(product)) continue;
    const rows = (await conn.runAndReadAll(`SELECT strftime(${column}, '%Y-%m-%d') AS p, count(*)::BIGINT AS n FROM ${table} GROUP BY ALL`)).getRowObjectsJS();
    for (const r of rows) out.push({ product, period: String(r['p']), file: label, rows: Number(r['n']) });
  }
  return out;
}

/**
 * The new version's manifest: the partitions its drop delivered are its own; every other
 * partition of the base is inherited, still held by the file that holds it in the base (a week
 * delivered again, or core or geometry delivered again, replaces the base's whole). The files it
 * references are exactly those its inherited partitions are in, with the sha256 each was
 * published with. Records in the report what was inherited.
 */
export async function inheritFrom(conn: DuckDBConnection, label: string, base: BaseVersion | null,
  layouts: Readonly<Record<Product, ProductLayout>>, report: LoadReport): Promise<VersionManifest> {
  const delivered = new Set((Object.keys(layouts) as Product[]).filter((p) => layouts[p].files.length > 0));
  const own = await ownPartitions(conn, label, delivered);
  const replaced = new Set(own.map((p) => `${p.product}:${p.period ?? ''}`));
  const inherited = (base?.manifest.partitions ?? []).filter((p) => !replaced.has(`${p.product}:${p.period ?? ''}`));
  const known = new Map<string, FileRef>(base ? [[base.label, { label: base.label, sha256: base.sha256, bytes: base.bytes, lookup: base.lookup }], ...base.manifest.files.map((f) => [f.label, f] as const)] : []);
  const files = [...new Set(inherited.map((p) => p.file))].sort().map((f) => {
    const ref = known.get(f);
    if (!ref) throw new Error(`the base version ${base!.label} names ${f} for a partition but not among its files`);
    return ref;
  });
  report.weeks_carried_forward = inherited.filter((p) => p.product === 'weekly').length;
  report.months_carried_forward = inherited.filter((p) => p.product === 'monthly').length;
  report.core_carried_forward = inherited.some((p) => p.product === 'core');
  report.geometry_carried_forward = inherited.some((p) => p.product === 'geometry');
  report.base = base ? { label: base.label, whole_copy: WHOLE_COPY_SCHEMAS.includes(base.manifest.schemaVersion) } : null;
  report.inherited_files = files.map((f) => ({ label: f.label, bytes: f.bytes }));
  return { label, schemaVersion: SCHEMA_VERSION, partitions: sortPartitions([...own, ...inherited]), files };
}

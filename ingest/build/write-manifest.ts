import type { DuckDBConnection } from '@duckdb/node-api';
import type { Partition, VersionManifest } from '../../versions/version-manifest.ts';
import { TABLES } from '../../versions/version-schema.ts';
import type { LoadReport } from '../drop/load-report.ts';

/** Rows, number of periods, and first and last period of one product's partitions. */
function summary(partitions: readonly Partition[], product: Partition['product']) {
  const of = partitions.filter((p) => p.product === product);
  const periods = of.map((p) => p.period).filter((p): p is string => p !== null).sort();
  return { rows: of.reduce((n, p) => n + p.rows, 0), count: periods.length, first: periods[0] ?? null, last: periods.at(-1) ?? null };
}

/**
 * Writes the version's manifest (`version_partitions`, `version_files`) and its `version_info`,
 * whose counts describe the version as served: every partition, inherited ones included.
 */
export async function writeManifest(conn: DuckDBConnection, manifest: VersionManifest,
  meta: { readonly builtAt: Date; readonly report: LoadReport; readonly dropId: string; readonly base: string | null }): Promise<void> {
  for (const p of manifest.partitions) {
    await conn.run(`INSERT INTO ${TABLES.partitions} VALUES ($product, $period::DATE, $file, $rows)`, { product: p.product, period: p.period, file: p.file, rows: p.rows });
  }
  for (const f of manifest.files) {
    await conn.run(`INSERT INTO ${TABLES.files} VALUES ($label, $sha256, $bytes, $lookup_bytes, $lookup_sha256, $lookup_head)`, {
      label: f.label, sha256: f.sha256, bytes: f.bytes, lookup_bytes: f.lookup?.bytes ?? null, lookup_sha256: f.lookup?.sha256 ?? null, lookup_head: f.lookup?.headSha256 ?? null,
    });
  }
  const weeks = summary(manifest.partitions, 'weekly');
  const months = summary(manifest.partitions, 'monthly');
  await conn.run(`INSERT INTO ${TABLES.info} VALUES ($label, $built, $month, $schema, $core, $weekly, $first_week::DATE, $last_week::DATE, $weeks,
      $report, $drop, $monthly, $months, $first_month::DATE, $last_month::DATE, $geometry, $base)`, {
    label: manifest.label, built: meta.builtAt.toISOString(), month: meta.report.release_month, schema: manifest.schemaVersion,
    core: summary(manifest.partitions, 'core').rows, weekly: weeks.rows, first_week: weeks.first, last_week: weeks.last, weeks: weeks.count,
    report: JSON.stringify(meta.report), drop: meta.dropId, monthly: months.rows, months: months.count, first_month: months.first, last_month: months.last,
    geometry: summary(manifest.partitions, 'geometry').rows, base: meta.base,
  });
}

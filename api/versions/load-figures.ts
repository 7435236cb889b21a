import { withReadOnly } from '../../shared/duckdb-open.ts';
import { TABLES } from '../../versions/version-schema.ts';

/** What the load that built a version did to one product's rows (from the report it stored). */
export interface ProductFigures {
  readonly read: number;
  readonly loaded: number;
  readonly rejected: number;
  readonly duplicates: number;
}

interface StoredReport {
  readonly products?: Record<string, { rows_read?: number; rows_loaded?: number; rejected_total?: number; duplicates_dropped?: number }>;
}

/**
 * The row counts of the load that built a version file, per delivered product, read from the
 * report ingest stored in its `version_info` (briefly opened read-only: one row is read). A file
 * that cannot be read gives null.
 */
export async function readLoadFigures(file: string): Promise<Record<string, ProductFigures> | null> {
  try {
    return await withReadOnly(file, { memoryLimit: '64MB', threads: 1 }, async (conn) => {
      const row = (await conn.runAndReadAll(`SELECT CAST(report AS VARCHAR) AS report FROM ${TABLES.info}`)).getRowObjectsJS()[0];
      const report = JSON.parse(String(row?.['report'] ?? '{}')) as StoredReport;
      return Object.fromEntries(Object.entries(report.products ?? {}).map(([product, r]) => [product,
        { read: r.rows_read ?? 0, loaded: r.rows_loaded ?? 0, rejected: r.rejected_total ?? 0, duplicates: r.duplicates_dropped ?? 0 }]));
    });
  } catch {
    return null;
  }
}

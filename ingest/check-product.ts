import type { DuckDBConnection } from '@duckdb/node-api';
import type { DropFile } from './drop-files.ts';
import type { Product, ProductReport, RejectedSample } from './load-report.ts';
import type { RejectReason } from './validation-rules.ts';
import path from 'node:path';

const SAMPLE_LIMIT = 20;

/**
 * Applies the product's row rules to its staging table: `checked` gets every staged row with its
 * reject reason (NULL when usable) and its rank among rows of the same key, earliest first.
 */
export async function checkProduct(
  conn: DuckDBConnection,
  opts: { product: Product; staged: string; checked: string; reasonSql: string; keySql: string },
  files: readonly DropFile[],
): Promise<{ report: ProductReport; samples: RejectedSample[] }> {
  await conn.run(`CREATE TEMP TABLE ${opts.checked} AS
    SELECT *, CASE WHEN reason IS NULL THEN row_number() OVER (PARTITION BY reason IS NULL, ${opts.keySql} ORDER BY file_idx, row_no) END AS key_rank
    FROM (SELECT *, ${opts.reasonSql} AS reason FROM ${opts.staged})`);
  const counts = (await conn.runAndReadAll(`SELECT
      count(*)::BIGINT AS rows_read,
      count(*) FILTER (WHERE reason IS NULL AND key_rank = 1)::BIGINT AS rows_loaded,
      count(*) FILTER (WHERE key_rank > 1)::BIGINT AS duplicates
    FROM ${opts.checked}`)).getRowObjectsJS()[0]!;
  const reasons = (await conn.runAndReadAll(`SELECT reason, count(*)::BIGINT AS n FROM ${opts.checked}
    WHERE reason IS NOT NULL GROUP BY reason ORDER BY reason`)).getRowObjectsJS();
  const sampleRows = (await conn.runAndReadAll(`SELECT file_idx, row_no, reason, placekey FROM ${opts.checked}
    WHERE reason IS NOT NULL ORDER BY file_idx, row_no LIMIT ${SAMPLE_LIMIT}`)).getRowObjectsJS();
  const rejected: Partial<Record<RejectReason, number>> = {};
  let rejectedTotal = 0;
  for (const r of reasons) {
    rejected[r['reason'] as RejectReason] = Number(r['n']);
    rejectedTotal += Number(r['n']);
  }
  const samples = sampleRows.map((r) => ({
    product: opts.product,
    file: path.basename(files[Number(r['file_idx'])]!.path),
    row: Number(r['row_no']),
    reason: r['reason'] as RejectReason,
    placekey: r['placekey'] === null ? null : String(r['placekey']).slice(0, 80),
  }));
  const report: ProductReport = {
    rows_read: Number(counts['rows_read']),
    rows_loaded: Number(counts['rows_loaded']),
    rejected,
    rejected_total: rejectedTotal,
    duplicates_dropped: Number(counts['duplicates']),
  };
  return { report, samples };
}

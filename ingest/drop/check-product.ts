import type { DuckDBConnection } from '@duckdb/node-api';
import { PRODUCTS } from '../../versions/version-schema.ts';
import path from 'node:path';
import type { DropFile } from './drop-reader.ts';
import type { Product, ProductReport, RejectedSample } from './load-report.ts';
import type { ProductLayout } from './product-layout.ts';
import { readerRejectCounts } from './reader-rejects.ts';
import { PLACEKEY_KEPT_CHARS, productRows, STAGE_COLUMNS, STAGED, unparseableExtras } from './stage-product.ts';
import type { RejectReason } from './validation-rules.ts';

const SAMPLE_LIMIT = 20;

/** The key rows of a product are unique on. */
export function keySql(product: Product): string {
  const period = PRODUCTS[product].period;
  return period ? `placekey, ${period}` : 'placekey';
}

/**
 * Reports on a staged product without copying it: rows read (the reader's rejected lines
 * included), usable rows kept (one per key, the earliest), rejections by reason with samples,
 * duplicates, unparseable extra values.
 */
export async function checkProduct(conn: DuckDBConnection, staged: string, layout: ProductLayout, files: readonly DropFile[]): Promise<{ report: ProductReport; samples: RejectedSample[] }> {
  const product = layout.product;
  const bits = unparseableExtras(layout);
  const { file: fileIdx, reason, badMask, pos } = STAGED;
  const bitCounts = bits.map((_, i) => `count(*) FILTER (WHERE ${reason} IS NULL AND (${badMask} & ${2 ** i}) <> 0)::BIGINT AS b${i}`);
  const counts = (await conn.runAndReadAll(`SELECT count(*)::BIGINT AS rows_read,
      count(DISTINCT (${keySql(product)})) FILTER (WHERE ${reason} IS NULL)::BIGINT AS rows_loaded,
      count(*) FILTER (WHERE ${reason} IS NULL)::BIGINT AS usable ${bitCounts.map((b) => ', ' + b).join('')}
    FROM ${productRows(staged)}`)).getRowObjectsJS()[0]!;
  const reasons = (await conn.runAndReadAll(`SELECT ${reason}, count(*)::BIGINT AS n FROM ${productRows(staged)}
    WHERE ${reason} IS NOT NULL GROUP BY ${reason} ORDER BY ${reason}`)).getRowObjectsJS();
  const sampleRows = (await conn.runAndReadAll(`SELECT r.${fileIdx}, r.${pos} - f.first + 1 AS row_no, ${reason}, placekey
    FROM (SELECT ${fileIdx}, ${pos}, placekey, ${reason} FROM ${productRows(staged)} WHERE ${reason} IS NOT NULL ORDER BY ${pos} LIMIT ${SAMPLE_LIMIT}) r
    JOIN (SELECT ${fileIdx}, min(rowid) AS first FROM ${staged} GROUP BY ${fileIdx}) f USING (${fileIdx}) ORDER BY r.${pos}`)).getRowObjectsJS();
  // Lines the reader rejected count as rows read and rejected, before the row rules' reasons.
  const rejected: Partial<Record<RejectReason, number>> = await readerRejectCounts(conn, product);
  let rejectedTotal = Object.values(rejected).reduce((a, b) => a + b, 0);
  const readerRejected = rejectedTotal;
  for (const r of reasons) {
    rejected[r[STAGE_COLUMNS.reason] as RejectReason] = Number(r['n']);
    rejectedTotal += Number(r['n']);
  }
  // Keyed by delivered column names: built with own properties (an assignment of `__proto__`
  // would set the prototype), as JSON.parse reads the stored report back.
  const unparseable: Record<string, number> = Object.fromEntries(bits.map((name, i) => [name, Number(counts[`b${i}`])] as const).filter(([, n]) => n > 0));
  const samples = sampleRows.map((r) => ({
    product,
    file: path.basename(files[Number(r[STAGE_COLUMNS.file])]!.path),
    row: Number(r['row_no']),
    reason: r[STAGE_COLUMNS.reason] as RejectReason,
    placekey: r['placekey'] === null ? null : String(r['placekey']).slice(0, PLACEKEY_KEPT_CHARS),
  }));
  const report: ProductReport = {
    rows_read: Number(counts['rows_read']) + readerRejected,
    rows_loaded: Number(counts['rows_loaded']),
    rejected,
    rejected_total: rejectedTotal,
    duplicates_dropped: Number(counts['usable']) - Number(counts['rows_loaded']),
    unparseable_values: unparseable,
  };
  return { report, samples };
}

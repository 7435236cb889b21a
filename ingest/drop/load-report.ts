import path from 'node:path';
import type { RejectReason } from './validation-rules.ts';

export type Product = 'core' | 'weekly' | 'monthly' | 'geometry';

export interface ProductReport {
  rows_read: number;
  rows_loaded: number;
  rejected: Partial<Record<RejectReason, number>>;
  rejected_total: number;
  /** Rows dropped because an earlier row had the same key (placekey, or placekey and week). */
  duplicates_dropped: number;
  /** Delivered values of extra columns that did not parse as their type, by column (stored as NULL). */
  unparseable_values?: Record<string, number>;
}

export interface RejectedSample {
  readonly product: Product;
  readonly file: string;
  /** 1-based data row of the file (the header is row 0). */
  readonly row: number;
  readonly reason: RejectReason;
  readonly placekey: string | null;
}

/** A record of a CSV file the reader rejected (too many or too few fields, bad quoting or bytes, too long). */
export interface RejectedLine {
  readonly file: string;
  /** 1-based line of the file as delivered where the record starts (the header is line 1). */
  readonly line: number;
  /**
   * The last line the record covers: `line` unless a quoted value runs on over newlines (an
   * unterminated quote runs to the next quote character, or to the end of the file).
   */
  readonly end_line: number;
  readonly reason: RejectReason;
  /** The products whose reads met it (a combined export is read for core and patterns). */
  readonly products: readonly Product[];
}

/** What a load did, stored in the version's metadata and printed by the CLI. */
export interface LoadReport {
  files: {
    path: string; products: string; bytes: number; sha256: string;
    /** CSV files: the encoding found; a file not in UTF-8 was converted exactly before reading. */
    encoding?: string;
    /** CSV files: the dialect read from the header line. */
    delimiter?: string; newline?: string;
  }[];
  /** Columns a part lacks, or has alone, against the other parts of its product (read by name all the same). */
  column_differences: string[];
  /** Every line the reader rejected, up to 1000 (ingest/drop/reader-rejects.ts); `rejected_lines_total` counts them all. */
  rejected_lines: RejectedLine[];
  rejected_lines_total: number;
  products: Partial<Record<Product, ProductReport>>;
  samples: RejectedSample[];
  release_month: string;
  release_month_source: 'argument' | 'data' | 'build_time';
  weeks_loaded: string[];
  /** Weeks the version inherits by reference from earlier files (none is copied). */
  weeks_carried_forward: number;
  /** Months (their 1sts, YYYY-MM-DD) of monthly patterns the drop delivered. */
  months_loaded: string[];
  months_carried_forward: number;
  core_carried_forward: boolean;
  geometry_carried_forward: boolean;
  /** The version this one was built on (null: the first), and whether it is a whole copy of an older release (schema 3 or 4), referenced whole, never copied again. */
  base: { label: string; whole_copy: boolean } | null;
  /** The earlier files this version inherits partitions from, by reference, with their sizes. */
  inherited_files: { label: string; bytes: number }[];
  max_reject_share: number;
  /** Columns not loaded (unnamed index columns), as `file: "name"`. */
  ignored_columns: string[];
}

/** Human-readable lines for the CLI. */
export function formatReport(report: LoadReport): string {
  const lines: string[] = [];
  for (const [product, r] of Object.entries(report.products)) {
    lines.push(`${product}: read ${r.rows_read}, loaded ${r.rows_loaded}, rejected ${r.rejected_total}, duplicates dropped ${r.duplicates_dropped}`);
    for (const [reason, count] of Object.entries(r.rejected)) lines.push(`  rejected ${reason}: ${count}`);
    for (const [column, count] of Object.entries(r.unparseable_values ?? {})) lines.push(`  unparseable ${column} (kept as null): ${count}`);
  }
  for (const s of report.samples.slice(0, 10)) lines.push(`  e.g. ${s.product} ${s.file} row ${s.row}: ${s.reason} (${s.placekey ?? 'no placekey'})`);
  const listed = report.rejected_lines ?? [];
  if (listed.length) lines.push(`lines the reader rejected: ${report.rejected_lines_total}`);
  for (const r of listed.slice(0, 20)) lines.push(`  ${r.file} ${r.end_line > r.line ? `lines ${r.line}-${r.end_line}` : `line ${r.line}`}: ${r.reason}`);
  if (listed.length > 20) lines.push(`  ... ${report.rejected_lines_total - 20} more (--json lists up to ${listed.length})`);
  for (const f of report.files) {
    if (f.encoding && f.encoding !== 'utf-8') lines.push(`${path.basename(f.path)}: ${f.encoding === 'utf-8-damaged' ? 'UTF-8 with bytes that are not (their lines rejected)' : `${f.encoding}, converted to UTF-8`}`);
  }
  for (const d of report.column_differences ?? []) lines.push(`columns differ: ${d}`);
  if (report.ignored_columns.length) lines.push(`ignored unnamed columns: ${report.ignored_columns.join(', ')}`);
  if (report.weeks_loaded.length) lines.push(`weeks loaded: ${report.weeks_loaded.join(', ')}`);
  if (report.weeks_carried_forward) lines.push(`weeks inherited by reference: ${report.weeks_carried_forward}`);
  if (report.months_loaded?.length) lines.push(`months loaded: ${report.months_loaded.map((m) => m.slice(0, 7)).join(', ')}`);
  if (report.months_carried_forward) lines.push(`months inherited by reference: ${report.months_carried_forward}`);
  if (report.core_carried_forward) lines.push('core inherited by reference from an earlier file');
  if (report.geometry_carried_forward) lines.push('geometry inherited by reference from an earlier file');
  if (report.base?.whole_copy) lines.push(`built on ${report.base.label}, a whole copy from an older release: referenced whole, not copied`);
  if (report.inherited_files?.length) lines.push(`inherits from ${report.inherited_files.length} earlier file(s), ${report.inherited_files.reduce((n, f) => n + f.bytes, 0)} bytes, shared by reference`);
  if (report.release_month) lines.push(`release month: ${report.release_month} (from ${report.release_month_source.replace('_', ' ')})`);
  return lines.join('\n');
}

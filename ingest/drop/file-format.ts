/** The formats a drop's files come in. */
export type FileFormat = 'csv' | 'parquet';

/** A file's format by its name: Parquet, or delimited text (.csv, .tsv, .txt, each maybe gzipped). */
export function formatOf(file: string): FileFormat | null {
  if (/\.parquet$/i.test(file)) return 'parquet';
  if (/\.(csv|tsv|txt)(\.gz)?$/i.test(file)) return 'csv';
  return null;
}

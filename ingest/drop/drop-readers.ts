import { csvReader } from './csv-reader.ts';
import type { DropReader } from './drop-reader.ts';
import { parquetReader } from './parquet-reader.ts';

/** The formats a drop's files come in: a file is read by the first whose name it matches. A new format is listed here. */
export const DROP_READERS: readonly DropReader[] = [parquetReader, csvReader];

/** The reader of a file by its name, or null when it is of no format a drop holds (not a data file). */
export function readerFor(file: string): DropReader | null {
  return DROP_READERS.find((r) => r.matches(file)) ?? null;
}

import { AppError, ErrorCodes } from '../../shared/errors.ts';

/** How a CSV part is written: read from its own header line, so each part of a product may differ. */
export interface CsvDialect {
  readonly delimiter: ',' | '\t' | ';' | '|';
  readonly newline: '\n' | '\r\n';
}

/** The limits a drop's CSV files must keep (docs/operations.md, Loading a drop). */
export const CSV_LIMITS = {
  /** Columns one file may name. A drop within the limits loads under the default memory limit. */
  maxColumns: 1000,
  /** Bytes of the header line. */
  maxHeaderBytes: 64 * 1024,
  /**
   * Bytes of one data record, its line ending included (as DuckDB's `max_line_size` counts): a
   * longer one is rejected as a row, found and cut out before DuckDB reads the file
   * (ingest/drop/csv-records.ts); DuckDB's own limit is the same, as a backstop.
   */
  maxLineBytes: 2_000_000,
} as const;

export interface CsvHeader {
  readonly dialect: CsvDialect;
  /** The header's fields in order, as delivered (a UTF-8 byte order mark removed). */
  readonly names: readonly string[];
}

const DELIMITERS: readonly CsvDialect['delimiter'][] = [',', '\t', ';', '|'];

/**
 * The fields of the first record of `text` split at `delimiter`, with RFC 4180 quoting (`"` quotes,
 * `""` inside quotes), and the newline that ends it; null when `text` ends inside the record.
 */
function firstRecord(text: string, delimiter: string, atEnd: boolean): { fields: string[]; newline: CsvDialect['newline'] } | null {
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch !== '"') field += ch;
      else if (text[i + 1] === '"') field += text[++i];
      else quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === delimiter) {
      fields.push(field);
      field = '';
    } else if (ch === '\n' || (ch === '\r' && text[i + 1] === '\n')) {
      fields.push(field);
      return { fields, newline: ch === '\n' ? '\n' : '\r\n' };
    } else field += ch;
  }
  if (!atEnd || quoted) return null;
  fields.push(field);
  return { fields, newline: '\n' };
}

/**
 * The dialect and column names of a CSV part, from its header line: the delimiter is whichever of
 * `,` tab `;` `|` splits the header into the most fields (tab first for .tsv and .txt files), the
 * newline is the one ending the header. DuckDB then reads the part with exactly this dialect and
 * these columns (no sniffing, which one damaged row in its sample could mislead).
 * @param text the file's first CSV_LIMITS.maxHeaderBytes + 1 bytes (fewer: all of it), decoded as
 *   UTF-8 (ingest/drop/csv-text-scan.ts collects them in the pass that reads the file)
 * @param atEnd whether `text` is the whole file
 * @param name the file's name as delivered, for messages
 * @throws AppError BAD_DROP when the header is over CSV_LIMITS or unreadable.
 */
export function parseCsvHeader(text: string, atEnd: boolean, name: string): CsvHeader {
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') throw new AppError(ErrorCodes.BAD_DROP, `${name}: the file has no header row`);
  const order = /\.(tsv|txt)(\.gz)?$/i.test(name) ? ['\t', ...DELIMITERS.filter((d) => d !== '\t')] : DELIMITERS;
  let best: { fields: string[]; newline: CsvDialect['newline']; delimiter: CsvDialect['delimiter'] } | null = null;
  for (const delimiter of order as CsvDialect['delimiter'][]) {
    const record = firstRecord(body, delimiter, atEnd && text.length <= CSV_LIMITS.maxHeaderBytes);
    if (record && (!best || record.fields.length > best.fields.length)) best = { ...record, delimiter };
  }
  if (!best) {
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: the header line is over ${CSV_LIMITS.maxHeaderBytes} bytes (the limit), or opens a quote it never closes`);
  }
  if (best.fields.length > CSV_LIMITS.maxColumns) {
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: the header names ${best.fields.length} columns, over the limit of ${CSV_LIMITS.maxColumns}`);
  }
  if (best.fields.some((f) => f.includes('\uFFFD'))) {
    throw new AppError(ErrorCodes.BAD_DROP, `${name}: the header line is not valid UTF-8 text`);
  }
  return { dialect: { delimiter: best.delimiter, newline: best.newline }, names: best.fields };
}

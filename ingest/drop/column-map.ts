import { AppError, ErrorCodes } from '../../shared/errors.ts';

/** Characters a column name may not hold: they cannot be told apart in reports and messages. */
// eslint-disable-next-line no-control-regex -- control characters are what it looks for
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/**
 * A header's column names as delivered -> the product-facing key (trimmed, lower-cased) and the
 * reader's column (`readerName`), skipping the columns `unnamed` says are no data (an index).
 * @throws AppError BAD_DROP when a name holds a control character, or two names are one key.
 */
export function columnMap(name: string, delivered: readonly string[], readerName: (i: number) => string, unnamed: (key: string) => boolean) {
  const columns = new Map<string, string>();
  const first = new Map<string, number>();
  const ignored: string[] = [];
  for (const [i, raw] of delivered.entries()) {
    const key = raw.replace(/^\uFEFF/, '').trim().toLowerCase();
    const bad = CONTROL_RE.exec(raw);
    if (bad) {
      const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
      throw new AppError(ErrorCodes.BAD_DROP, `${name}: the name of column ${i + 1} (${JSON.stringify(raw)}) holds a control character (U+${code}); column names must be printable text`);
    }
    if (unnamed(key)) {
      ignored.push(raw);
      continue;
    }
    if (first.has(key)) {
      throw new AppError(ErrorCodes.BAD_DROP, `${name}: the header names column ${JSON.stringify(key)} twice (columns ${first.get(key)! + 1} and ${i + 1}; names are compared trimmed and lower-cased)`);
    }
    first.set(key, i);
    columns.set(key, readerName(i));
  }
  return { columns, ignored, positions: first };
}

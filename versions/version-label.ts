import { AppError, ErrorCodes } from '../shared/errors.ts';

/**
 * A version label, `<epoch_seconds>__<year>_<month>`: when the file was built and the data
 * release it holds. It is the file's name (plus `.duckdb`) and what `extensions.version_date` says.
 */
export interface VersionLabel {
  readonly label: string;
  readonly builtAtEpoch: number;
  /** `YYYY-MM` */
  readonly releaseMonth: string;
}

const LABEL_RE = /^(\d{1,12})__(\d{4})_(0[1-9]|1[0-2])$/;
const MONTH_RE = /^(\d{4})-(0[1-9]|1[0-2])$/;
export const VERSION_FILE_SUFFIX = '.duckdb';

export function parseLabel(label: string): VersionLabel | null {
  const m = LABEL_RE.exec(label);
  if (!m) return null;
  return { label, builtAtEpoch: Number(m[1]), releaseMonth: `${m[2]}-${m[3]}` };
}

/** @throws AppError BAD_DROP when the month is not `YYYY-MM`. */
export function assertReleaseMonth(month: string): string {
  if (!MONTH_RE.test(month)) throw new AppError(ErrorCodes.BAD_DROP, `release month must be YYYY-MM; got ${JSON.stringify(month)}`);
  return month;
}

export function makeLabel(builtAtEpoch: number, releaseMonth: string): string {
  assertReleaseMonth(releaseMonth);
  return `${builtAtEpoch}__${releaseMonth.replace('-', '_')}`;
}

export function labelFromFileName(fileName: string): VersionLabel | null {
  if (!fileName.endsWith(VERSION_FILE_SUFFIX)) return null;
  return parseLabel(fileName.slice(0, -VERSION_FILE_SUFFIX.length));
}

export function fileNameOf(label: string): string {
  return label + VERSION_FILE_SUFFIX;
}

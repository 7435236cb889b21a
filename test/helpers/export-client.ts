import { parse } from 'csv-parse/sync';
import { TEST_KEY } from './test-config.ts';

export interface ExportResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** GETs a bulk export with the test key (unless `headers` overrides it) and reads it whole. */
export async function getExport(baseUrl: string, pathAndQuery: string, headers: Record<string, string> = {}, method = 'GET'): Promise<ExportResponse> {
  const res = await fetch(`${baseUrl}${pathAndQuery}`, { method, headers: { apikey: TEST_KEY, ...headers } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The JSON error body of a refused export. */
export function errorBody(res: ExportResponse): unknown {
  return JSON.parse(res.text);
}

/**
 * Parses an exported CSV with csv-parse: the header row, then each record as raw fields, where
 * an unquoted empty field (NULL) is null and a quoted one ("") is the empty string.
 */
export function parseExportCsv(text: string): { header: string[]; records: (string | null)[][] } {
  const rows = parse(text, {
    cast: (value, context) => (value === '' && !context.quoting ? null : value),
    relax_column_count: false,
  }) as (string | null)[][];
  const [header, ...records] = rows;
  return { header: (header ?? []) as string[], records };
}

/** NDJSON lines parsed; the text must end with a newline after its last line (or be empty). */
export function parseNdjson(text: string): Record<string, unknown>[] {
  if (text === '') return [];
  if (!text.endsWith('\n')) throw new Error('NDJSON text does not end with a newline');
  return text.slice(0, -1).split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

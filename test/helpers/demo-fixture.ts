import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { writeDemoDrop, DEMO_DEFAULTS } from '../../ingest/cli/demo-drop.ts';

export type CsvRow = Record<string, string>;

/** Reads a delivered CSV (plain or gzipped) independently of DuckDB: the tests' oracle. */
export async function readCsv(file: string): Promise<CsvRow[]> {
  const raw = await readFile(file);
  const text = (file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
  return parse(text, { columns: true, bom: true, skip_empty_lines: true }) as CsvRow[];
}

export interface DemoFixture {
  readonly dropDir: string;
  readonly core: CsvRow[];
  readonly weekly: CsvRow[];
}

/** Writes the demo drop into `dir` and reads it back as plain rows. */
export async function demoFixture(dir: string): Promise<DemoFixture> {
  const files = await writeDemoDrop(dir, DEMO_DEFAULTS);
  const core = await readCsv(files.find((f) => path.basename(f) === 'core_poi.csv')!);
  const weekly: CsvRow[] = [];
  for (const f of files.filter((f) => path.basename(f).startsWith('patterns-'))) weekly.push(...(await readCsv(f)));
  return { dropDir: dir, core, weekly };
}

/** The core product as the API must return it, from a delivered row. */
export function expectedCore(row: CsvRow) {
  return {
    location_name: row['location_name'], street_address: row['street_address'], city: row['city'], region: row['region'],
    postal_code: row['postal_code'], iso_country_code: row['iso_country_code'], naics_code: Number(row['naics_code']),
    top_category: row['top_category'], sub_category: row['sub_category'],
  };
}

/** The weekly product as the API must return it, from a delivered row. */
export function expectedWeekly(row: CsvRow) {
  return {
    location_name: row['location_name'], street_address: row['street_address'], city: row['city'], region: row['region'],
    date_range_start: row['date_range_start'], date_range_end: row['date_range_end'],
    raw_visit_counts: Number(row['raw_visit_counts']), raw_visitor_counts: Number(row['raw_visitor_counts']),
    visits_by_day: JSON.parse(row['visits_by_day']!) as number[],
  };
}

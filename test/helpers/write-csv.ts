import { writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { csvField } from '../../shared/csv-field.ts';


/** Writes a CSV (gzipped when the name ends in .gz) the way drops are delivered. */
export async function writeCsv(file: string, header: readonly string[], rows: readonly (string | number | null)[][], eol = '\n'): Promise<void> {
  const text = [header.join(','), ...rows.map((r) => r.map((v) => csvField(v)).join(','))].join(eol) + eol;
  await writeFile(file, file.endsWith('.gz') ? gzipSync(text) : text);
}

export const WEEKLY_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'date_range_start', 'date_range_end', 'raw_visit_counts', 'raw_visitor_counts', 'visits_by_day'];
export const CORE_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'naics_code', 'top_category', 'sub_category'];

/** Valid placekeys for hand-written drops (all decode to real resolution-10 cells). */
export const KEYS = ['222-227@dvt-smp-tvz', 'zzw-22y@5vg-7gt-qzz', '227-222@62k-phc-qs5', '224-223@63c-rjh-pd9', '222-222@63d-kqz-49z', '@5vg-7gq-tvz'];

export function weeklyRow(placekey: string, monday: string, visits: number[], offset = '-04:00'): (string | number)[] {
  const end = new Date(Date.parse(monday + 'T00:00:00Z') + 7 * 86_400_000).toISOString().slice(0, 10);
  const total = visits.reduce((a, b) => a + b, 0);
  return [placekey, 'Place ' + placekey.slice(0, 3), '1 Main St', 'Springfield', 'MA', `${monday}T00:00:00${offset}`, `${end}T00:00:00${offset}`, total, Math.ceil(total / 2), JSON.stringify(visits)];
}

export function coreRow(placekey: string, name: string, postal = '01020'): (string | number)[] {
  return [placekey, name, '1 Main St', 'Springfield', 'MA', postal, 'US', 722511, 'Restaurants and Other Eating Places', 'Full-Service Restaurants'];
}

import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { geoToWhere } from '../../shared/placekey.ts';
import { CORE_HEADER, WEEKLY_HEADER, writeCsv } from './write-csv.ts';

/** One POI of a hand-made drop: the core fields a quality profile and a diff look at. */
export interface Poi {
  readonly placekey: string;
  readonly name: string;
  readonly region: string;
  readonly category: string;
  readonly postal: string | null;
}

/** `n` distinct valid Placekeys (where parts of cells along a line in Massachusetts), sorted. */
export function placekeys(n: number): string[] {
  const out = new Set<string>();
  for (let i = 0; out.size < n; i++) out.add('@' + geoToWhere(42.0 + i * 0.01, -71.5));
  return [...out].sort();
}

/** `n` POIs, alternating regions MA/NY and categories Restaurants/Banks, postal code 02110. */
export function pois(n: number): Poi[] {
  return placekeys(n).map((placekey, i) => ({
    placekey, name: `Place ${i}`, region: i % 2 === 0 ? 'MA' : 'NY', category: i % 2 === 0 ? 'Restaurants' : 'Banks', postal: '02110',
  }));
}

/**
 * Writes a drop of core places (`core`, or none) and weekly patterns: for each Monday of
 * `weeks`, a row per POI of `core ?? weeklyPois` with that many visits (all on Monday).
 */
export async function writeQualityDrop(dir: string, core: readonly Poi[] | null, weeks: Readonly<Record<string, number>>, weeklyPois: readonly Poi[] = core ?? []): Promise<string> {
  await mkdir(dir, { recursive: true });
  if (core) {
    await writeCsv(path.join(dir, 'core_poi.csv'), CORE_HEADER, core.map((p) => [p.placekey, p.name, '1 Main St', 'Springfield', p.region, p.postal, 'US', 722511, p.category, 'Sub']));
  }
  const rows = Object.entries(weeks).flatMap(([monday, visits]) => weeklyPois.map((p) => {
    const end = new Date(Date.parse(monday + 'T00:00:00Z') + 7 * 86_400_000).toISOString().slice(0, 10);
    return [p.placekey, p.name, '1 Main St', 'Springfield', p.region, `${monday}T00:00:00-04:00`, `${end}T00:00:00-04:00`, visits, Math.ceil(visits / 2), JSON.stringify([visits, 0, 0, 0, 0, 0, 0])];
  }));
  if (rows.length) await writeCsv(path.join(dir, 'patterns.csv'), WEEKLY_HEADER, rows);
  return dir;
}

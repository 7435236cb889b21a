import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { csvField } from '../../shared/csv-field.ts';
import { geoToWhere } from '../../shared/placekey.ts';

/**
 * The bundled demo drop: a few hundred POIs in seven US cities (six UTC offsets, one DST change
 * inside the first week), four weeks of patterns, in the delivered layout (core CSV and weekly
 * patterns as two gzipped parts). Deterministic: the same seed writes the same bytes.
 */
export interface DemoOptions {
  readonly pois: number;
  readonly weeks: readonly string[];
  readonly seed: number;
}

export const DEMO_DEFAULTS: DemoOptions = {
  pois: 300,
  weeks: ['2022-03-07', '2022-03-14', '2022-03-21', '2022-03-28'],
  seed: 42,
};

export interface City { name: string; region: string; lat: number; lng: number; std: number; dst: boolean; zips: string[]; streets: string[] }

const CITIES: City[] = [
  { name: 'Boston', region: 'MA', lat: 42.3601, lng: -71.0589, std: -5, dst: true, zips: ['02108', '02116', '02134', '02215'], streets: ['Tremont', 'Boylston', 'Beacon', 'Commonwealth'] },
  { name: 'New York', region: 'NY', lat: 40.7306, lng: -73.9866, std: -5, dst: true, zips: ['10001', '10003', '10011', '10014'], streets: ['Broadway', 'Bleecker', 'Hudson', 'Lexington'] },
  { name: 'Chicago', region: 'IL', lat: 41.8781, lng: -87.6298, std: -6, dst: true, zips: ['60601', '60607', '60614', '60622'], streets: ['Halsted', 'Clark', 'Division', 'Milwaukee'] },
  { name: 'Phoenix', region: 'AZ', lat: 33.4484, lng: -112.074, std: -7, dst: false, zips: ['85003', '85004', '85006', '85016'], streets: ['Camelback', 'Indian School', 'Central', 'McDowell'] },
  { name: 'Los Angeles', region: 'CA', lat: 34.0522, lng: -118.2437, std: -8, dst: true, zips: ['90012', '90026', '90028', '90036'], streets: ['Sunset', 'Melrose', 'Fairfax', 'Vermont'] },
  { name: 'Anchorage', region: 'AK', lat: 61.2181, lng: -149.9003, std: -9, dst: true, zips: ['99501', '99503', '99504', '99508'], streets: ['Northern Lights', 'Spenard', 'Benson', 'Tudor'] },
  { name: 'Honolulu', region: 'HI', lat: 21.3069, lng: -157.8583, std: -10, dst: false, zips: ['96813', '96814', '96815', '96822'], streets: ['Kapiolani', 'Kalakaua', 'Ala Moana', 'King'] },
];

const CATEGORIES = [
  { naics: 722511, top: 'Restaurants and Other Eating Places', sub: 'Full-Service Restaurants', kinds: ['Bistro', 'Kitchen', 'Grill', 'Trattoria'], visits: 400 },
  { naics: 722513, top: 'Restaurants and Other Eating Places', sub: 'Limited-Service Restaurants', kinds: ['Tacos', 'Burgers', 'Pizza', 'Noodles'], visits: 600 },
  { naics: 722515, top: 'Restaurants and Other Eating Places', sub: 'Snack and Nonalcoholic Beverage Bars', kinds: ['Coffee', 'Cafe', 'Juice Bar', 'Bakery'], visits: 500 },
  { naics: 445110, top: 'Grocery Stores', sub: 'Supermarkets and Other Grocery (except Convenience) Stores', kinds: ['Market', 'Grocery', 'Foods'], visits: 1500 },
  { naics: 446110, top: 'Health and Personal Care Stores', sub: 'Pharmacies and Drug Stores', kinds: ['Pharmacy', 'Drug'], visits: 700 },
  { naics: 447110, top: 'Gasoline Stations', sub: 'Gasoline Stations with Convenience Stores', kinds: ['Fuel', 'Gas & Go'], visits: 900 },
  { naics: 713940, top: 'Other Amusement and Recreation Industries', sub: 'Fitness and Recreational Sports Centers', kinds: ['Fitness', 'Gym', 'Yoga'], visits: 350 },
  { naics: 812112, top: 'Personal Care Services', sub: 'Beauty Salons', kinds: ['Salon', 'Hair Studio'], visits: 120 },
  { naics: 522110, top: 'Depository Credit Intermediation', sub: 'Commercial Banking', kinds: ['Bank', 'Savings'], visits: 200 },
  { naics: 712190, top: 'Museums, Historical Sites, and Similar Institutions', sub: 'Nature Parks and Other Similar Institutions', kinds: ['Park', 'Gardens'], visits: 2500 },
];

const WORDS = ['Blue Door', 'Golden', 'Corner', 'Harbor', 'Maple', 'Sunrise', 'Union', 'Liberty', 'Oak & Pine', 'Northside', 'Riverside', 'Lucky', 'Green Leaf', "Rosa's", "Sam's", 'Old Town'];
const WHAT_ALPHABET = '23456789bcdfghjkmnpqrstvwxyz';
const DAY_WEIGHTS = [0.12, 0.12, 0.13, 0.14, 0.17, 0.18, 0.14]; // Monday first

/** mulberry32: small, fast, deterministic. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

export function utcOffset(city: City, localDate: string): string {
  // US DST 2022: a local midnight from Mar 14 to Nov 6 inclusive is daylight time.
  const isDst = city.dst && localDate >= '2022-03-14' && localDate <= '2022-11-06';
  const hours = city.std + (isDst ? 1 : 0);
  return `${hours < 0 ? '-' : '+'}${String(Math.abs(hours)).padStart(2, '0')}:00`;
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(date + 'T00:00:00Z') + days * 86_400_000).toISOString().slice(0, 10);
}

export function csv(header: readonly string[], rows: readonly (string | number | null)[][]): string {
  return [header.join(','), ...rows.map((r) => r.map((v) => csvField(v)).join(','))].join('\n') + '\n';
}

function splitVisits(rand: () => number, total: number): number[] {
  const days = DAY_WEIGHTS.map((w) => Math.floor(total * w * (0.8 + rand() * 0.4)));
  let rest = total - days.reduce((a, b) => a + b, 0);
  for (let i = 0; rest !== 0; i = (i + 1) % 7) {
    if (rest > 0) { days[i]!++; rest--; } else if (days[i]! > 0) { days[i]!--; rest++; }
  }
  return days;
}

/** One demo POI: where it is (its point, from which its Placekey's where part comes) and what it is. */
export interface DemoPoi {
  readonly index: number;
  readonly placekey: string;
  readonly city: City;
  readonly cat: (typeof CATEGORIES)[number];
  readonly name: string;
  readonly street: string;
  readonly zip: string;
  readonly lat: number;
  readonly lng: number;
}

/** The first `count` demo POIs drawn from `rand`: the same draws give the same POIs, whatever follows. */
export function makeDemoPois(rand: () => number, count: number): DemoPoi[] {
  const seen = new Set<string>();
  const pois: DemoPoi[] = [];
  while (pois.length < count) {
    const city = CITIES[pois.length % CITIES.length]!;
    const lat = city.lat + (rand() - 0.5) * 0.12;
    const lng = city.lng + (rand() - 0.5) * 0.12;
    const where = geoToWhere(lat, lng);
    const what = Array.from({ length: 6 }, () => WHAT_ALPHABET[Math.floor(rand() * WHAT_ALPHABET.length)]).join('');
    const placekey = `${what.slice(0, 3)}-${what.slice(3)}@${where}`;
    if (seen.has(placekey)) continue;
    seen.add(placekey);
    const cat = pick(rand, CATEGORIES);
    const street = `${1 + Math.floor(rand() * 2400)} ${pick(rand, city.streets)} ${pick(rand, ['St', 'Ave', 'Blvd', 'Rd'])}`;
    pois.push({ index: pois.length, placekey, city, cat, name: `${pick(rand, WORDS)} ${pick(rand, cat.kinds)}`, street, zip: pick(rand, city.zips), lat, lng });
  }
  return pois;
}

/** One POI's week of the demo: the spec's weekly values. */
export interface DemoWeek {
  readonly poi: DemoPoi;
  /** The Monday, YYYY-MM-DD. */
  readonly week: string;
  readonly start: string;
  readonly end: string;
  readonly visits: number;
  readonly visitors: number;
  readonly byDay: readonly number[];
}

/** The weeks of `pois` drawn from `rand`, week after week; about 5% of POI-weeks have no data, as in real drops. */
export function makeDemoWeeks(rand: () => number, pois: readonly DemoPoi[], weeks: readonly string[]): DemoWeek[] {
  const out: DemoWeek[] = [];
  for (const week of weeks) {
    for (const poi of pois) {
      if (rand() < 0.05) continue;
      const visits = Math.max(0, Math.round(poi.cat.visits * (0.3 + rand() * 1.4)));
      const visitors = visits === 0 ? 0 : Math.max(1, Math.round(visits * (0.55 + rand() * 0.35)));
      const end = addDays(week, 7);
      out.push({ poi, week, start: `${week}T00:00:00${utcOffset(poi.city, week)}`, end: `${end}T00:00:00${utcOffset(poi.city, end)}`,
        visits, visitors, byDay: splitVisits(rand, visits) });
    }
  }
  return out;
}

export const DEMO_CORE_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'naics_code', 'top_category', 'sub_category'];
export const DEMO_WEEKLY_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'date_range_start', 'date_range_end', 'raw_visit_counts', 'raw_visitor_counts', 'visits_by_day'];

/** Writes the demo drop into `outDir` and returns the files written. */
export async function writeDemoDrop(outDir: string, options: DemoOptions = DEMO_DEFAULTS): Promise<string[]> {
  const rand = seededRandom(options.seed);
  const pois = makeDemoPois(rand, options.pois);
  const core = pois.map((p) => [p.placekey, p.name, p.street, p.city.name, p.city.region, p.zip, 'US', p.cat.naics, p.cat.top, p.cat.sub]);
  const weekly = makeDemoWeeks(rand, pois, options.weeks).map((w) => [w.poi.placekey, w.poi.name, w.poi.street, w.poi.city.name, w.poi.city.region,
    w.poi.zip, 'US', w.start, w.end, w.visits, w.visitors, JSON.stringify(w.byDay)]);
  await mkdir(outDir, { recursive: true });
  const half = Math.ceil(weekly.length / 2);
  // Level 6, not the 9 of the releases that loaded this drop into DATA_DIR as the demo: the drop id
  // of those bytes (LEGACY_DEMO_DROP_ID) marks their versions as demo data, and this drop, which
  // tests load as ordinary data, must not share it.
  const files = {
    'core_poi.csv': csv(DEMO_CORE_HEADER, core),
    'patterns-part1.csv.gz': gzipSync(csv(DEMO_WEEKLY_HEADER, weekly.slice(0, half)), { level: 6 }),
    'patterns-part2.csv.gz': gzipSync(csv(DEMO_WEEKLY_HEADER, weekly.slice(half)), { level: 6 }),
  };
  const written: string[] = [];
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(outDir, name);
    await writeFile(file, content);
    written.push(file);
  }
  return written;
}

/** `total` spread over `weights` (integers summing to `total`, none where the weight is 0), each share jittered by `r`. */
export function split(r: () => number, total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const out = weights.map((w) => Math.floor((total * w) / sum * (0.8 + r() * 0.4)));
  let rest = total - out.reduce((a, b) => a + b, 0);
  for (let k = 0; rest !== 0; k = (k + 1) % out.length) {
    if (weights[k] === 0) continue;
    if (rest > 0) { out[k]!++; rest--; } else if (out[k]! > 0) { out[k]!--; rest++; }
  }
  return out;
}

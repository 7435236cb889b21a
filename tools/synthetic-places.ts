import { geoToWhere } from '../shared/placekey.ts';
import { seededRandom, split } from '../ingest/cli/demo-drop.ts';

/**
 * Deterministic synthetic POIs and weeks in the shape of the real products, each a pure function
 * of (seed, POI index[, week]): a generator can stream millions without keeping any in memory.
 */
export interface Metro { city: string; region: string; lat: number; lng: number; std: number; dst: boolean; zip: string; state: string }

export const METROS: readonly Metro[] = [
  { city: 'Boston', region: 'MA', lat: 42.36, lng: -71.06, std: -5, dst: true, zip: '021', state: '25' },
  { city: 'Hartford', region: 'CT', lat: 41.76, lng: -72.68, std: -5, dst: true, zip: '061', state: '09' },
  { city: 'Newark', region: 'NJ', lat: 40.74, lng: -74.17, std: -5, dst: true, zip: '071', state: '34' },
  { city: 'New York', region: 'NY', lat: 40.73, lng: -73.99, std: -5, dst: true, zip: '100', state: '36' },
  { city: 'Atlanta', region: 'GA', lat: 33.75, lng: -84.39, std: -5, dst: true, zip: '303', state: '13' },
  { city: 'Miami', region: 'FL', lat: 25.76, lng: -80.19, std: -5, dst: true, zip: '331', state: '12' },
  { city: 'Chicago', region: 'IL', lat: 41.88, lng: -87.63, std: -6, dst: true, zip: '606', state: '17' },
  { city: 'Dallas', region: 'TX', lat: 32.78, lng: -96.8, std: -6, dst: true, zip: '752', state: '48' },
  { city: 'Minneapolis', region: 'MN', lat: 44.98, lng: -93.27, std: -6, dst: true, zip: '554', state: '27' },
  { city: 'Denver', region: 'CO', lat: 39.74, lng: -104.99, std: -7, dst: true, zip: '802', state: '08' },
  { city: 'Phoenix', region: 'AZ', lat: 33.45, lng: -112.07, std: -7, dst: false, zip: '850', state: '04' },
  { city: 'Los Angeles', region: 'CA', lat: 34.05, lng: -118.24, std: -8, dst: true, zip: '900', state: '06' },
  { city: 'Seattle', region: 'WA', lat: 47.61, lng: -122.33, std: -8, dst: true, zip: '981', state: '53' },
  { city: 'Anchorage', region: 'AK', lat: 61.22, lng: -149.9, std: -9, dst: true, zip: '995', state: '02' },
  { city: 'Honolulu', region: 'HI', lat: 21.31, lng: -157.86, std: -10, dst: false, zip: '968', state: '15' },
];

export const CATEGORIES = [
  { naics: 722511, top: 'Restaurants and Other Eating Places', sub: 'Full-Service Restaurants', tags: 'Dinner,Lunch,American Food', visits: 400 },
  { naics: 722513, top: 'Restaurants and Other Eating Places', sub: 'Limited-Service Restaurants', tags: 'Counter Service,Fast Food', visits: 600 },
  { naics: 722515, top: 'Restaurants and Other Eating Places', sub: 'Snack and Nonalcoholic Beverage Bars', tags: 'Coffee,Breakfast', visits: 500 },
  { naics: 445110, top: 'Grocery Stores', sub: 'Supermarkets and Other Grocery (except Convenience) Stores', tags: 'Grocery', visits: 1500 },
  { naics: 446110, top: 'Health and Personal Care Stores', sub: 'Pharmacies and Drug Stores', tags: 'Pharmacy', visits: 700 },
  { naics: 447110, top: 'Gasoline Stations', sub: 'Gasoline Stations with Convenience Stores', tags: 'Fuel,Convenience', visits: 900 },
  { naics: 713940, top: 'Other Amusement and Recreation Industries', sub: 'Fitness and Recreational Sports Centers', tags: 'Gym', visits: 350 },
  { naics: 812112, top: 'Personal Care Services', sub: 'Beauty Salons', tags: 'Hair Salon', visits: 120 },
  { naics: 522110, top: 'Depository Credit Intermediation', sub: 'Commercial Banking', tags: 'ATM', visits: 200 },
  { naics: 452210, top: 'General Merchandise Stores, including Warehouse Clubs and Supercenters', sub: 'Department Stores', tags: 'Clothing,Home Goods', visits: 1800 },
  { naics: 611110, top: 'Elementary and Secondary Schools', sub: 'Elementary and Secondary Schools', tags: '', visits: 900 },
  { naics: 712190, top: 'Museums, Historical Sites, and Similar Institutions', sub: 'Nature Parks and Other Similar Institutions', tags: 'Park', visits: 2500 },
] as const;

const BRANDS = ['Blue Bottle', 'Corner Market', 'Sunrise Fuel', 'Maple Pharmacy', 'Union Fitness', 'Golden Wok', 'Harbor Bank', 'Liberty Burgers', 'Northside Foods', 'Green Leaf Salon'];
const WORDS = ['Oak', 'Pine', 'River', 'Lake', 'Hill', 'Main Street', 'Old Town', 'Lucky', 'Rosa\'s', 'Sam\'s', 'Copper', 'Harvest'];
const STREETS = ['Main', 'Oak', 'Maple', 'Washington', 'Lake', 'Hill', 'Park', 'Elm', 'Cedar', 'Sunset', 'Broadway', 'Church'];
const SUFFIX = ['St', 'Ave', 'Blvd', 'Rd', 'Dr'];
const WHAT = '23456789bcdfghjkmnpqrstvwxyz';
const DAY_WEIGHTS = [0.12, 0.12, 0.13, 0.14, 0.17, 0.18, 0.14];
const HOUR_WEIGHTS = [0, 0, 0, 0, 0, 0, 1, 2, 4, 5, 6, 8, 10, 9, 7, 6, 6, 7, 8, 7, 5, 3, 1, 0];

/** A small, fast, deterministic generator for one (seed, index, week) cell: the parts hashed into a seed. */
export function cellRandom(...parts: number[]): () => number {
  let a = 0x9e3779b9;
  for (const p of parts) a = Math.imul(a ^ (p >>> 0), 0x85ebca6b) ^ (a >>> 13);
  return seededRandom(a);
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** The what part of POI `i`: unique by construction (28^6 > 400M POIs). */
function whatOf(i: number): string {
  let n = i;
  let s = '';
  for (let k = 0; k < 6; k++) {
    s = WHAT[n % 28] + s;
    n = Math.floor(n / 28);
  }
  return `${s.slice(0, 3)}-${s.slice(3)}`;
}

export interface SyntheticPoi {
  readonly index: number;
  readonly placekey: string;
  readonly metro: Metro;
  readonly category: (typeof CATEGORIES)[number];
  readonly brand: string | null;
  readonly name: string;
  readonly street: string;
  readonly postal: string;
  readonly lat: number;
  readonly lng: number;
  readonly phone: string;
  readonly popularity: number;
  readonly cbg: string;
}

export function poiOf(seed: number, i: number): SyntheticPoi {
  const r = cellRandom(seed, i);
  const metro = METROS[i % METROS.length]!;
  const category = pick(r, CATEGORIES);
  const lat = metro.lat + (r() - 0.5) * 0.4;
  const lng = metro.lng + (r() - 0.5) * 0.4;
  const brand = r() < 0.3 ? pick(r, BRANDS) : null;
  const name = brand ?? `${pick(r, WORDS)} ${category.sub.split(' ')[0]}`;
  const street = `${1 + Math.floor(r() * 9000)} ${pick(r, STREETS)} ${pick(r, SUFFIX)}`;
  const postal = metro.zip + String(Math.floor(r() * 100)).padStart(2, '0');
  const phone = '+1' + String(2000000000 + Math.floor(r() * 7999999999));
  const cbg = metro.state + String(Math.floor(r() * 1e10)).padStart(10, '0');
  return { index: i, placekey: `${whatOf(i)}@${geoToWhere(lat, lng)}`, metro, category, brand, name, street, postal, lat, lng, phone, popularity: 0.3 + r() * 1.4, cbg };
}

/** UTC offset of a metro at local midnight of `date` (US DST rules from 2007, computed per year). */
export function offsetAt(m: Metro, date: string): string {
  const year = Number(date.slice(0, 4));
  const nthSunday = (month: number, n: number) => {
    const first = new Date(Date.UTC(year, month, 1)).getUTCDay();
    return new Date(Date.UTC(year, month, 1 + ((7 - first) % 7) + 7 * (n - 1))).toISOString().slice(0, 10);
  };
  // Midnight of the switch day itself is still on the old offset (the switch happens at 02:00).
  const dst = m.dst && date > nthSunday(2, 2) && date <= nthSunday(10, 1);
  const h = m.std + (dst ? 1 : 0);
  return `${h < 0 ? '-' : '+'}${String(Math.abs(h)).padStart(2, '0')}:00`;
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(date + 'T00:00:00Z') + days * 86_400_000).toISOString().slice(0, 10);
}


/** The week of POI `p` starting Monday `week`, or null when the POI has no data that week. */
export function weekOf(seed: number, p: SyntheticPoi, week: string, weekIndex: number) {
  const r = cellRandom(seed, p.index, weekIndex + 1);
  if (r() < 0.03) return null;
  const visits = Math.max(0, Math.round(p.category.visits * p.popularity * (0.7 + r() * 0.6)));
  const visitors = visits === 0 ? 0 : Math.max(1, Math.round(visits * (0.55 + r() * 0.35)));
  const byDay = split(r, visits, DAY_WEIGHTS);
  const byHour = byDay.flatMap((d) => split(r, d, HOUR_WEIGHTS));
  const home: Record<string, number> = {};
  for (let k = 0, n = 1 + Math.floor(r() * 4); k < n; k++) home[p.cbg.slice(0, 5) + String(Math.floor(r() * 1e7)).padStart(7, '0')] = 4 + Math.floor(r() * 20);
  const end = addDays(week, 7);
  return {
    date_range_start: `${week}T00:00:00${offsetAt(p.metro, week)}`,
    date_range_end: `${end}T00:00:00${offsetAt(p.metro, end)}`,
    raw_visit_counts: visits, raw_visitor_counts: visitors, visits_by_day: byDay, visits_by_each_hour: byHour,
    visitor_home_cbgs: home, visitor_home_aggregation: { [p.cbg.slice(0, 11)]: visitors },
    visitor_daytime_cbgs: { [p.cbg]: Math.max(4, Math.round(visitors / 3)) }, visitor_country_of_origin: { US: visitors },
    distance_from_home: Math.round(2000 + r() * 30000), median_dwell: Math.round(5 + r() * 90),
    bucketed_dwell_times: { '<5': Math.round(visits * 0.1), '5-10': Math.round(visits * 0.2), '11-20': Math.round(visits * 0.2), '21-60': Math.round(visits * 0.3), '61-120': Math.round(visits * 0.1), '121-240': Math.round(visits * 0.05), '>240': Math.round(visits * 0.05) },
    related_same_day_brand: { [pick(r, BRANDS)]: Math.floor(r() * 30) }, related_same_week_brand: { [pick(r, BRANDS)]: Math.floor(r() * 30) },
    device_type: { android: Math.round(visitors * 0.45), ios: Math.round(visitors * 0.55) },
    normalized_visits_by_state_scaling: Number((visits * 12.3).toFixed(3)), normalized_visits_by_region_naics_visits: Number((r() / 1000).toPrecision(4)),
    normalized_visits_by_region_naics_visitors: Number((r() / 1000).toPrecision(4)), normalized_visits_by_total_visits: Number((visits / 3e8).toPrecision(4)),
    normalized_visits_by_total_visitors: Number((visitors / 3e8).toPrecision(4)),
  };
}

/** Days in the month starting on `month` (YYYY-MM-01). */
export function daysInMonth(month: string): number {
  return new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0)).getUTCDate();
}

/** The 1st of the month after `month` (YYYY-MM-01). */
export function nextMonth(month: string): string {
  const y = Number(month.slice(0, 4));
  const m = Number(month.slice(5, 7));
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
}

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/**
 * The month of POI `p` starting on `month` (YYYY-MM-01), or null when the POI has no data that
 * month: `visits_by_day` has one count per day of the month and sums to `raw_visit_counts`, and
 * the range runs local midnight to local midnight with each end's own UTC offset (they differ in
 * the months DST starts or ends).
 */
export function monthOf(seed: number, p: SyntheticPoi, month: string, monthIndex: number) {
  const r = cellRandom(seed, p.index, 1_000_000 + monthIndex);
  if (r() < 0.03) return null;
  const days = daysInMonth(month);
  const visits = Math.max(0, Math.round((p.category.visits * p.popularity * days / 7) * (0.7 + r() * 0.6)));
  const visitors = visits === 0 ? 0 : Math.max(1, Math.round(visits * (0.45 + r() * 0.35)));
  // Each day weighted by its weekday (the 1st's weekday first).
  const firstDow = (new Date(month + 'T00:00:00Z').getUTCDay() + 6) % 7;
  const byDay = split(r, visits, Array.from({ length: days }, (_, d) => DAY_WEIGHTS[(firstDow + d) % 7]!));
  const byWeekday: Record<string, number> = {};
  byDay.forEach((v, d) => { const k = WEEKDAYS[(firstDow + d) % 7]!; byWeekday[k] = (byWeekday[k] ?? 0) + v; });
  const popularityByDay: Record<string, number> = {};
  for (const k of WEEKDAYS) popularityByDay[k] = byWeekday[k] ?? 0;
  const home: Record<string, number> = {};
  for (let k = 0, n = 1 + Math.floor(r() * 5); k < n; k++) home[p.cbg.slice(0, 5) + String(Math.floor(r() * 1e7)).padStart(7, '0')] = 4 + Math.floor(r() * 40);
  const end = nextMonth(month);
  return {
    date_range_start: `${month}T00:00:00${offsetAt(p.metro, month)}`,
    date_range_end: `${end}T00:00:00${offsetAt(p.metro, end)}`,
    raw_visit_counts: visits, raw_visitor_counts: visitors, visits_by_day: byDay,
    popularity_by_hour: split(r, visits, HOUR_WEIGHTS), popularity_by_day: popularityByDay,
    visitor_home_cbgs: home, visitor_home_aggregation: { [p.cbg.slice(0, 11)]: visitors },
    visitor_daytime_cbgs: { [p.cbg]: Math.max(4, Math.round(visitors / 3)) }, visitor_country_of_origin: { US: visitors },
    distance_from_home: Math.round(2000 + r() * 30000), median_dwell: Math.round(5 + r() * 90),
    bucketed_dwell_times: { '<5': Math.round(visits * 0.1), '5-10': Math.round(visits * 0.2), '11-20': Math.round(visits * 0.2), '21-60': Math.round(visits * 0.3), '61-120': Math.round(visits * 0.1), '121-240': Math.round(visits * 0.05), '>240': Math.round(visits * 0.05) },
    related_same_day_brand: { [pick(r, BRANDS)]: Math.floor(r() * 30) }, related_same_month_brand: { [pick(r, BRANDS)]: Math.floor(r() * 90) },
    device_type: { android: Math.round(visitors * 0.45), ios: Math.round(visitors * 0.55) },
    normalized_visits_by_state_scaling: Number((visits * 12.3).toFixed(3)), normalized_visits_by_region_naics_visits: Number((r() / 1000).toPrecision(4)),
    normalized_visits_by_region_naics_visitors: Number((r() / 1000).toPrecision(4)), normalized_visits_by_total_visits: Number((visits / 3e8).toPrecision(4)),
    normalized_visits_by_total_visitors: Number((visitors / 3e8).toPrecision(4)),
  };
}

/** The footprint of POI `p`: a small square around its point (its area from the side's length), or null for the POIs without one. */
export function geometryOf(seed: number, p: SyntheticPoi) {
  const r = cellRandom(seed, p.index, 2_000_000);
  if (r() < 0.1) return null;
  const side = 10 + Math.floor(r() * 90); // metres
  const dLat = side / 2 / 111_320;
  const dLng = side / 2 / (111_320 * Math.cos((p.lat * Math.PI) / 180));
  const [x0, x1, y0, y1] = [p.lng - dLng, p.lng + dLng, p.lat - dLat, p.lat + dLat].map((v) => v.toFixed(6));
  const shared = r() < 0.2;
  return {
    polygon_wkt: `POLYGON ((${x0} ${y0}, ${x1} ${y0}, ${x1} ${y1}, ${x0} ${y1}, ${x0} ${y0}))`,
    polygon_class: shared ? 'SHARED_POLYGON' : 'OWNED_POLYGON',
    enclosed: r() < 0.15, is_synthetic: r() < 0.3, includes_parking_lot: r() < 0.25, wkt_area_sq_meters: side * side,
  };
}

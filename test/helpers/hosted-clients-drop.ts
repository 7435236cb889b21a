import path from 'node:path';
import { geoToWhere } from '../../shared/placekey.ts';
import { writeCsv } from './write-csv.ts';

/**
 * A hand-written drop for replaying the hosted Places API's clients (test/fixtures/hosted-clients):
 * POIs, weeks and months chosen so that the values written into the clients' documents (a
 * notebook's Placekey, a region, a NAICS code, a week) find data, with every column of the full
 * products. Each POI is kept here as the API returns it; the CSV files are written from it, so
 * the expected answers and the drop cannot disagree.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Doc = Record<string, Json>;

export interface Poi {
  readonly placekey: string;
  readonly core: Doc;
  /** Weekly patterns by Monday. */
  readonly weeks: Record<string, Doc>;
  /** Monthly patterns by 1st. */
  readonly months: Record<string, Doc>;
  readonly geometry: Doc | null;
}

const SLC = geoToWhere(40.7608, -111.891);

export const K = {
  /** SafeGraphR's documentation example. */
  starbucks: '222-223@5x4-4b6-mff',
  /** In the Go example's variables. */
  bar: 'zzw-222@5vg-3tv-7qz',
  /** In the Go example's variables. */
  seattleBar: '222-222@5qw-shj-7qz',
  /** The Placekey a v2 notebook looks up. */
  church: '225-222@5vg-7gs-t9z',
  utahChurch: `222-222@${SLC}`,
  utahChapel: `223-222@${SLC}`,
  /** In the Go example's variables. */
  hotel: '228-222@5sb-cyn-7qz',
  /** In the Go example's variables. */
  museum: '22s-223@63j-4f8-7qz',
  toronto: 'zzy-227@5sb-8cw-pjv',
  /** The place of safegraphQL's `lookup_by_name` README example (its answer's Placekey). */
  tacoBell: '224-222@5vg-7gv-d7q',
} as const;

/** In the Go example's variables, with no POI. */
export const NO_POI = '222-222@5s6-pyc-7qz';

const HOURS = (base: number) => Array.from({ length: 168 }, (_, h) => (h % 24 >= 8 && h % 24 < 22 ? base + (h % 3) : 0));

function core(placekey: string, c: { name: string; ids: string[]; brands: string[]; top: string; sub: string; naics: number; lat: number; lng: number;
  street: string; city: string; region: string; postal: string; country: string; phone: string | null; tags: string[]; parent?: string | null }): Doc {
  return {
    placekey, parent_placekey: c.parent ?? null, location_name: c.name, safegraph_brand_ids: c.ids.length ? c.ids : null, brands: c.brands.length ? c.brands : null,
    top_category: c.top, sub_category: c.sub, naics_code: c.naics, latitude: c.lat, longitude: c.lng, street_address: c.street, city: c.city,
    region: c.region, postal_code: c.postal, iso_country_code: c.country, phone_number: c.phone, open_hours: '{ "Mon": [["8:00", "22:00"]] }',
    category_tags: c.tags.length ? c.tags : null, opened_on: '2015-06', closed_on: null, tracking_closed_since: '2019-07', geometry_type: 'POLYGON',
  };
}

/** A weekly row of a POI for the week of `monday`, its place columns copied from core. */
function week(c: Doc, monday: string, offset: string, visits: number[]): Doc {
  const end = new Date(Date.parse(monday) + 7 * 86_400_000).toISOString().slice(0, 10);
  const total = visits.reduce((a, b) => a + b, 0);
  return {
    placekey: c['placekey']!, parent_placekey: c['parent_placekey']!, location_name: c['location_name']!, street_address: c['street_address']!,
    city: c['city']!, region: c['region']!, postal_code: c['postal_code']!, iso_country_code: c['iso_country_code']!,
    safegraph_brand_ids: c['safegraph_brand_ids']!, brands: c['brands']!,
    date_range_start: `${monday}T00:00:00${offset}`, date_range_end: `${end}T00:00:00${offset}`, raw_visit_counts: total, raw_visitor_counts: Math.ceil(total * 0.6),
    visits_by_day: visits, visits_by_each_hour: HOURS(visits[0]!), poi_cbg: '060750201001',
    visitor_home_cbgs: { '060750201001': 4, '060750177002': 7 }, visitor_home_aggregation: { '06075020100': 9 }, visitor_daytime_cbgs: { '060750201001': 5 },
    visitor_country_of_origin: { US: total - 2, CA: 2 }, distance_from_home: 3120.5, median_dwell: 27.5,
    bucketed_dwell_times: { '<5': 3, '5-10': 7, '11-20': 9, '21-60': 12, '61-120': 4, '121-240': 1, '>240': 0 },
    related_same_day_brand: { Walgreens: 6 }, related_same_week_brand: { Safeway: 11, 'Peet\'s': 3 }, device_type: { android: Math.floor(total / 3), ios: Math.floor(total / 2) },
  };
}

/** A monthly row of a POI for the month of `first` (days in the month from `visits`), place columns from core. */
function month(c: Doc, first: string, next: string, startOffset: string, endOffset: string, visits: number[]): Doc {
  const total = visits.reduce((a, b) => a + b, 0);
  return {
    placekey: c['placekey']!, parent_placekey: c['parent_placekey']!, location_name: c['location_name']!, street_address: c['street_address']!,
    city: c['city']!, region: c['region']!, postal_code: c['postal_code']!, iso_country_code: c['iso_country_code']!,
    safegraph_brand_ids: c['safegraph_brand_ids']!, brands: c['brands']!,
    date_range_start: `${first}T00:00:00${startOffset}`, date_range_end: `${next}T00:00:00${endOffset}`, raw_visit_counts: total, raw_visitor_counts: Math.ceil(total * 0.4),
    visits_by_day: visits, poi_cbg: '060750201001', visitor_home_cbgs: { '060750201001': 14, '060750177002': 21 }, visitor_home_aggregation: { '06075020100': 35 },
    visitor_daytime_cbgs: { '060750201001': 12 }, visitor_country_of_origin: { US: total }, distance_from_home: 2890, median_dwell: 31,
    bucketed_dwell_times: { '<5': 30, '5-10': 60, '11-20': 80, '21-60': 90, '61-120': 20, '121-240': 5, '>240': 1 },
    related_same_day_brand: { Walgreens: 20 }, related_same_month_brand: { Safeway: 40 },
    popularity_by_hour: Array.from({ length: 24 }, (_, h) => (h >= 7 && h < 21 ? 10 + h : 0)),
    popularity_by_day: { Monday: 40, Tuesday: 38, Wednesday: 41, Thursday: 45, Friday: 60, Saturday: 72, Sunday: 51 }, device_type: { android: 90, ios: 130 },
  };
}

const d = (n: number, base: number) => Array.from({ length: n }, (_, i) => base + ((i * 7) % 5));

const starbucks = core(K.starbucks, { name: 'Starbucks', ids: ['SG_BRAND_7f5b0a1e'], brands: ['Starbucks'], top: 'Restaurants and Other Eating Places', sub: 'Snack and Nonalcoholic Beverage Bars', naics: 722515, lat: 37.7722, lng: -122.4106, street: '1390 Market St', city: 'San Francisco', region: 'CA', postal: '94102', country: 'US', phone: '14155550134', tags: ['Coffee', 'Breakfast'] });
const bar = core(K.bar, { name: 'Tonic Bar', ids: [], brands: [], top: 'Drinking Places (Alcoholic Beverages)', sub: 'Drinking Places (Alcoholic Beverages)', naics: 722410, lat: 37.7987, lng: -122.4221, street: '2360 Polk St', city: 'San Francisco', region: 'CA', postal: '94109', country: 'US', phone: null, tags: ['Bar'] });
const seattleBar = core(K.seattleBar, { name: 'Rain Tavern', ids: [], brands: [], top: 'Drinking Places (Alcoholic Beverages)', sub: 'Drinking Places (Alcoholic Beverages)', naics: 722410, lat: 47.6142, lng: -122.3201, street: '500 E Pike St', city: 'Seattle', region: 'WA', postal: '98122', country: 'US', phone: '12065550100', tags: [] });
const church = core(K.church, { name: 'Mission Dolores', ids: [], brands: [], top: 'Religious Organizations', sub: 'Religious Organizations', naics: 813110, lat: 37.7643, lng: -122.4268, street: '3321 16th St', city: 'San Francisco', region: 'CA', postal: '94114', country: 'US', phone: null, tags: ['Church'] });
const utahChurch = core(K.utahChurch, { name: 'First Ward Chapel', ids: [], brands: [], top: 'Religious Organizations', sub: 'Religious Organizations', naics: 813110, lat: 40.7608, lng: -111.891, street: '100 S Main St', city: 'Salt Lake City', region: 'UT', postal: '84101', country: 'US', phone: null, tags: [] });
const utahChapel = core(K.utahChapel, { name: 'Capitol Hill Chapel', ids: [], brands: [], top: 'Religious Organizations', sub: 'Religious Organizations', naics: 813110, lat: 40.7609, lng: -111.8911, street: '102 S Main St', city: 'Salt Lake City', region: 'UT', postal: '84101', country: 'US', phone: null, tags: [], parent: K.utahChurch });
const hotel = core(K.hotel, { name: 'Harbor Inn', ids: ['SG_BRAND_4c1d'], brands: ['Harbor Hotels'], top: 'Traveler Accommodation', sub: 'Hotels (except Casino Hotels) and Motels', naics: 721110, lat: 32.7157, lng: -117.1611, street: '1 Harbor Dr', city: 'San Diego', region: 'CA', postal: '92101', country: 'US', phone: '16195550111', tags: ['Hotel'] });
const museum = core(K.museum, { name: 'Lakeside Museum', ids: [], brands: [], top: 'Museums, Historical Sites, and Similar Institutions', sub: 'Museums', naics: 712110, lat: 41.8781, lng: -87.6298, street: '1200 S Lake Shore Dr', city: 'Chicago', region: 'IL', postal: '60605', country: 'US', phone: null, tags: [] });
const toronto = core(K.toronto, { name: 'Queen St Bar', ids: [], brands: [], top: 'Drinking Places (Alcoholic Beverages)', sub: 'Drinking Places (Alcoholic Beverages)', naics: 722410, lat: 43.6532, lng: -79.3832, street: '1 Queen St W', city: 'Toronto', region: 'ON', postal: 'M5H 2N2', country: 'CA', phone: null, tags: [] });

const tacoBell = core(K.tacoBell, { name: 'Taco Bell', ids: ['SG_BRAND_e1f8'], brands: ['Taco Bell'], top: 'Restaurants and Other Eating Places', sub: 'Limited-Service Restaurants', naics: 722513, lat: 37.7786, lng: -122.393, street: '710 3rd St', city: 'San Francisco', region: 'CA', postal: '94107', country: 'US', phone: '14155550177', tags: ['Fast Food'] });

const poi = (c: Doc, weeks: Doc[], months: Doc[], geometry: Doc | null): Poi => ({
  placekey: String(c['placekey']), core: c, geometry,
  weeks: Object.fromEntries(weeks.map((w) => [String(w['date_range_start']).slice(0, 10), w])),
  months: Object.fromEntries(months.map((m) => [String(m['date_range_start']).slice(0, 10), m])),
});

const polygon = (placekey: string, wkt: string, cls: string, area: number, enclosed: boolean): Doc =>
  ({ placekey, polygon_wkt: wkt, polygon_class: cls, enclosed, is_synthetic: false, includes_parking_lot: !enclosed, wkt_area_sq_meters: area });

export const POIS: readonly Poi[] = [
  poi(starbucks, [week(starbucks, '2020-12-28', '-08:00', [90, 101, 99, 60, 20, 75, 80]), week(starbucks, '2022-03-14', '-07:00', [120, 131, 125, 140, 150, 160, 110]), week(starbucks, '2022-03-21', '-07:00', [118, 130, 126, 139, 151, 158, 109])],
    [month(starbucks, '2022-02-01', '2022-03-01', '-08:00', '-08:00', d(28, 110)), month(starbucks, '2022-03-01', '2022-04-01', '-08:00', '-07:00', d(31, 120))],
    polygon(K.starbucks, 'POLYGON ((-122.4108 37.7721, -122.4104 37.7721, -122.4104 37.7724, -122.4108 37.7721))', 'OWNED_POLYGON', 210.5, true)),
  poi(bar, [week(bar, '2020-04-20', '-07:00', [0, 0, 1, 0, 2, 3, 1]), week(bar, '2022-03-14', '-07:00', [20, 22, 25, 30, 61, 80, 40]), week(bar, '2022-03-21', '-07:00', [21, 20, 24, 33, 60, 82, 41])],
    [month(bar, '2022-03-01', '2022-04-01', '-08:00', '-07:00', d(31, 30))],
    polygon(K.bar, 'POLYGON ((-122.4223 37.7986, -122.422 37.7986, -122.422 37.7988, -122.4223 37.7986))', 'SHARED_POLYGON', 95, false)),
  poi(seattleBar, [week(seattleBar, '2022-03-21', '-07:00', [15, 14, 16, 20, 44, 52, 30])], [], null),
  poi(church, [week(church, '2021-07-12', '-07:00', [30, 5, 6, 8, 5, 9, 60])], [], null),
  poi(utahChurch, [week(utahChurch, '2021-07-12', '-06:00', [80, 6, 10, 12, 7, 14, 150])], [], polygon(K.utahChurch, 'POLYGON ((-111.8912 40.7607, -111.8908 40.7607, -111.8908 40.7610, -111.8912 40.7607))', 'OWNED_POLYGON', 640, true)),
  poi(utahChapel, [], [], null),
  poi(hotel, [], [], null),
  poi(museum, [week(museum, '2022-03-21', '-05:00', [300, 280, 290, 310, 330, 500, 480])], [], null),
  poi(toronto, [week(toronto, '2022-03-14', '-04:00', [10, 11, 12, 13, 30, 40, 20]), week(toronto, '2022-03-21', '-04:00', [9, 12, 12, 14, 31, 41, 22])], [], null),
  poi(tacoBell, [week(tacoBell, '2022-03-21', '-07:00', [210, 190, 205, 220, 260, 300, 240])], [], null),
];

export const poiOf = (placekey: string): Poi | undefined => POIS.find((p) => p.placekey === placekey);

const CORE_COLUMNS = Object.keys(starbucks);
const WEEKLY_COLUMNS = Object.keys(POIS[0]!.weeks['2022-03-21']!);
const MONTHLY_COLUMNS = Object.keys(POIS[0]!.months['2022-03-01']!);
const GEOMETRY_COLUMNS = Object.keys(POIS[0]!.geometry!);

/** A value as delivered: lists of names comma-joined, other lists and maps as JSON, the rest as text. */
function cell(name: string, value: Json): string | number | null {
  if (value === null) return null;
  if (Array.isArray(value) && (name === 'brands' || name === 'safegraph_brand_ids' || name === 'category_tags')) return value.join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'boolean') return String(value);
  return value;
}

const rows = (columns: readonly string[], docs: readonly Doc[]) => docs.map((doc) => columns.map((c) => cell(c, doc[c] ?? null)));

/** Writes the drop's four files (core, weekly patterns, monthly patterns, geometry) into `dir`. */
export async function writeHostedClientsDrop(dir: string): Promise<string[]> {
  const files = ['core_poi.csv', 'patterns-part1.csv', 'monthly_patterns-part1.csv', 'geometry.csv'].map((f) => path.join(dir, f));
  await writeCsv(files[0]!, CORE_COLUMNS, rows(CORE_COLUMNS, POIS.map((p) => p.core)));
  await writeCsv(files[1]!, WEEKLY_COLUMNS, rows(WEEKLY_COLUMNS, POIS.flatMap((p) => Object.values(p.weeks))));
  await writeCsv(files[2]!, MONTHLY_COLUMNS, rows(MONTHLY_COLUMNS, POIS.flatMap((p) => Object.values(p.months))));
  await writeCsv(files[3]!, GEOMETRY_COLUMNS, rows(GEOMETRY_COLUMNS, POIS.flatMap((p) => (p.geometry ? [p.geometry] : []))));
  return files;
}

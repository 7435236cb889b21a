import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { EXTRA_COLUMNS, inCatalog, type CatalogProduct } from '../../shared/column-catalog.ts';
import { csv, DEMO_CORE_HEADER, DEMO_DEFAULTS, DEMO_WEEKLY_HEADER, makeDemoPois, makeDemoWeeks, seededRandom, split, utcOffset,
  type DemoPoi, type DemoWeek } from './demo-drop.ts';

/**
 * The demo `npm start` serves: two monthly releases of the demo POIs (demo-drop.ts), so that
 * pinning a version, a version diff and a rollback have something to show, each with every column
 * the service knows of every product: core (its geometry columns feed the geometry product),
 * weekly patterns and monthly patterns. March's spec columns are exactly the demo drop's
 * (writeDemoDrop with DEMO_DEFAULTS: the tests' fixture); February's core lacks March's last
 * five POIs, holds three March no longer has, and names four POIs differently.
 */
export interface DemoRelease {
  /** The release month, YYYY-MM: also the month of its monthly patterns. */
  readonly month: string;
  /** The Mondays of its weekly patterns. */
  readonly weeks: readonly string[];
}

export const DEMO_RELEASES: readonly DemoRelease[] = [
  { month: '2022-02', weeks: ['2022-02-07', '2022-02-14', '2022-02-21', '2022-02-28'] },
  { month: '2022-03', weeks: DEMO_DEFAULTS.weeks },
];

/** POIs March adds (the demo's last five), February's extra POIs March removes, and the POIs March renames. */
const ADDED_IN_MARCH = 5;
const REMOVED_IN_MARCH = 3;
const RENAMED_IN_MARCH = new Set([1, 2, 3, 4]);

const STATE_FIPS: Readonly<Record<string, string>> = { MA: '25', NY: '36', IL: '17', AZ: '04', CA: '06', AK: '02', HI: '15' };
const BRAND_OF_NAICS: Readonly<Record<number, string>> = {
  722511: 'Harbor Grill', 722513: 'Taco Union', 722515: 'Blue Door Coffee', 445110: 'Corner Market', 446110: 'Maple Pharmacy',
  447110: 'Sunrise Fuel', 713940: 'Union Fitness', 812112: 'Lucky Salon', 522110: 'Liberty Bank', 712190: 'Green Parks',
};
const DAY_WEIGHTS = [0.12, 0.12, 0.13, 0.14, 0.17, 0.18, 0.14]; // Monday first
const HOUR_WEIGHTS = [0, 0, 0, 0, 0, 0, 1, 2, 4, 5, 6, 8, 10, 9, 7, 6, 6, 7, 8, 7, 5, 3, 1, 0];
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const OPEN_HOURS = '{ "Mon": [["8:00", "21:00"]], "Tue": [["8:00", "21:00"]], "Wed": [["8:00", "21:00"]], "Thu": [["8:00", "21:00"]], "Fri": [["8:00", "22:00"]], "Sat": [["9:00", "22:00"]], "Sun": [] }';

type Value = string | number | boolean | null | readonly number[] | Readonly<Record<string, number>>;
type Row = Record<string, Value>;

/** A deterministic generator for one cell (POI, period): the parts hashed into a seed. */
function cellRandom(...parts: number[]): () => number {
  const hash = createHash('sha256').update(parts.join(':')).digest();
  return seededRandom(hash.readUInt32LE(0));
}

function hex(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}


/** The header of a product: the spec's columns, then every catalogued column of the product. */
function headerOf(spec: readonly string[], product: CatalogProduct): string[] {
  return [...spec, ...[...EXTRA_COLUMNS.keys()].filter((c) => inCatalog(c, product) && !spec.includes(c))];
}

const CORE_HEADER = headerOf(DEMO_CORE_HEADER, 'core');
const WEEKLY_HEADER = headerOf(DEMO_WEEKLY_HEADER, 'weekly');
const MONTHLY_HEADER = headerOf(DEMO_WEEKLY_HEADER, 'monthly');

/** A row's values in header order; a column without a value is a bug of this file (the demo has every column). */
function line(header: readonly string[], row: Row): (string | number | null)[] {
  return header.map((c) => {
    if (!(c in row)) throw new Error(`the demo writes no value for column ${c}`);
    const v = row[c]!;
    return v === null || typeof v === 'number' || typeof v === 'string' ? v : typeof v === 'boolean' ? String(v) : JSON.stringify(v);
  });
}

/** The columns core, weekly and monthly rows share: ids and brands. */
function placeIds(p: DemoPoi, parent: DemoPoi | null): Row {
  const brand = p.index % 3 === 0 ? p.name : null; // a chain's store, named after its brand
  return {
    parent_placekey: parent?.placekey ?? null, safegraph_place_id: `sg:${hex(p.placekey, 32)}`,
    parent_safegraph_place_id: parent ? `sg:${hex(parent.placekey, 32)}` : null,
    safegraph_brand_ids: brand ? `SG_BRAND_${hex(brand, 16)}` : null, brands: brand,
  };
}

/** Every fifth POI of a city sits inside the one before it (a store in a mall, say). */
function parentOf(pois: readonly DemoPoi[], p: DemoPoi): DemoPoi | null {
  return p.index % 20 === 19 ? pois[p.index - 7] ?? null : null;
}

function coreRow(p: DemoPoi, name: string, parent: DemoPoi | null): Row {
  const r = cellRandom(p.index, 0);
  const side = 10 + Math.floor(r() * 90); // metres
  const dLat = side / 2 / 111_320;
  const dLng = side / 2 / (111_320 * Math.cos((p.lat * Math.PI) / 180));
  const [x0, x1, y0, y1] = [p.lng - dLng, p.lng + dLng, p.lat - dLat, p.lat + dLat].map((v) => v.toFixed(6));
  const ids = placeIds(p, parent);
  return {
    placekey: p.placekey, location_name: name, street_address: p.street, city: p.city.name, region: p.city.region, postal_code: p.zip,
    iso_country_code: 'US', naics_code: p.cat.naics, top_category: p.cat.top, sub_category: p.cat.sub, ...ids,
    store_id: ids['brands'] ? String(1000 + p.index) : null, latitude: p.lat.toFixed(6), longitude: p.lng.toFixed(6),
    phone_number: `+1${String(2_000_000_000 + Math.floor(r() * 7_999_999_999))}`, open_hours: OPEN_HOURS, category_tags: p.cat.kinds.join(','),
    opened_on: p.index % 7 === 0 ? '2019-07' : null, closed_on: null, tracking_opened_since: '2019-07', tracking_closed_since: '2019-07',
    websites: `["${name.toLowerCase().replace(/[^a-z0-9]+/g, '')}.example"]`, geometry_type: 'POLYGON',
    polygon_wkt: `POLYGON ((${x0} ${y0}, ${x1} ${y0}, ${x1} ${y1}, ${x0} ${y1}, ${x0} ${y0}))`,
    polygon_class: r() < 0.2 ? 'SHARED_POLYGON' : 'OWNED_POLYGON', enclosed: r() < 0.15, is_synthetic: r() < 0.3,
    includes_parking_lot: r() < 0.25, wkt_area_sq_meters: side * side,
  };
}

/** The columns weekly and monthly rows share beyond the spec's, for `visits` by `visitors` in one period. */
function patternsExtras(r: () => number, p: DemoPoi, parent: DemoPoi | null, visits: number, visitors: number): Row {
  const cbg = STATE_FIPS[p.city.region]! + String(Math.floor(cellRandom(p.index, 1)() * 1e10)).padStart(10, '0');
  const home: Record<string, number> = {};
  for (let k = 0, n = 1 + Math.floor(r() * 4); k < n; k++) home[cbg.slice(0, 5) + String(Math.floor(r() * 1e7)).padStart(7, '0')] = 4 + Math.floor(r() * 20);
  const brands = Object.values(BRAND_OF_NAICS);
  const share = (f: number) => Math.round(visits * f);
  return {
    ...placeIds(p, parent), postal_code: p.zip, iso_country_code: 'US', poi_cbg: cbg, visitor_home_cbgs: home,
    visitor_home_aggregation: { [cbg.slice(0, 11)]: visitors }, visitor_daytime_cbgs: { [cbg]: Math.max(4, Math.round(visitors / 3)) },
    visitor_work_cbgs: { [cbg.slice(0, 5) + '0000001']: Math.max(4, Math.round(visitors / 5)) }, visitor_country_of_origin: { US: visitors },
    distance_from_home: Math.round(2000 + r() * 30000), median_dwell: Math.round(5 + r() * 90),
    bucketed_dwell_times: { '<5': share(0.1), '5-10': share(0.2), '11-20': share(0.2), '21-60': share(0.3), '61-120': share(0.1), '121-240': share(0.05), '>240': share(0.05) },
    related_same_day_brand: { [brands[Math.floor(r() * brands.length)]!]: Math.floor(r() * 30) },
    popularity_by_hour: split(r, visits, HOUR_WEIGHTS), device_type: { android: Math.round(visitors * 0.45), ios: Math.round(visitors * 0.55) },
    normalized_visits_by_state_scaling: Number((visits * 12.3).toFixed(3)), normalized_visits_by_region_naics_visits: Number((r() / 1000).toPrecision(4)),
    normalized_visits_by_region_naics_visitors: Number((r() / 1000).toPrecision(4)), normalized_visits_by_total_visits: Number((visits / 3e8).toPrecision(4)),
    normalized_visits_by_total_visitors: Number((visitors / 3e8).toPrecision(4)),
  };
}

function popularityByDay(byDay: readonly number[], firstWeekday: number): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(WEEKDAYS.map((d) => [d, 0]));
  byDay.forEach((v, d) => (out[WEEKDAYS[(firstWeekday + d) % 7]!]! += v));
  return out;
}

function weeklyRow(w: DemoWeek, name: string, parent: DemoPoi | null): Row {
  const p = w.poi;
  const r = cellRandom(p.index, Date.parse(w.week) / 86_400_000);
  return {
    placekey: p.placekey, location_name: name, street_address: p.street, city: p.city.name, region: p.city.region,
    date_range_start: w.start, date_range_end: w.end, raw_visit_counts: w.visits, raw_visitor_counts: w.visitors, visits_by_day: w.byDay,
    ...patternsExtras(r, p, parent, w.visits, w.visitors),
    visits_by_each_hour: w.byDay.flatMap((d) => split(r, d, HOUR_WEIGHTS)), related_same_week_brand: { [BRAND_OF_NAICS[p.cat.naics]!]: Math.floor(r() * 30) },
    popularity_by_day: popularityByDay(w.byDay, 0),
  };
}

/** The month starting `month` (YYYY-MM-01) of POI `p`, or null for the few POIs without data that month. */
function monthlyRow(p: DemoPoi, name: string, parent: DemoPoi | null, month: string): Row | null {
  const r = cellRandom(p.index, Date.parse(month) / 86_400_000);
  if (r() < 0.04) return null;
  const start = new Date(month + 'T00:00:00Z');
  const next = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)).toISOString().slice(0, 10);
  const days = (Date.parse(next) - start.getTime()) / 86_400_000;
  const firstWeekday = (start.getUTCDay() + 6) % 7;
  const visits = Math.max(0, Math.round((p.cat.visits * days / 7) * (0.7 + r() * 0.6)));
  const visitors = visits === 0 ? 0 : Math.max(1, Math.round(visits * (0.45 + r() * 0.35)));
  const byDay = split(r, visits, Array.from({ length: days }, (_, d) => DAY_WEIGHTS[(firstWeekday + d) % 7]!));
  return {
    placekey: p.placekey, location_name: name, street_address: p.street, city: p.city.name, region: p.city.region,
    date_range_start: `${month}T00:00:00${utcOffset(p.city, month)}`, date_range_end: `${next}T00:00:00${utcOffset(p.city, next)}`,
    raw_visit_counts: visits, raw_visitor_counts: visitors, visits_by_day: byDay, ...patternsExtras(r, p, parent, visits, visitors),
    related_same_month_brand: { [BRAND_OF_NAICS[p.cat.naics]!]: Math.floor(r() * 90) }, popularity_by_day: popularityByDay(byDay, firstWeekday),
  };
}

/** The name a POI has in a release: March renamed a few. */
function nameIn(p: DemoPoi, month: string): string {
  if (month >= '2022-03' || !RENAMED_IN_MARCH.has(p.index)) return p.name;
  return `${p.name.split(' ').at(-1)} on ${p.street.split(' ')[1]}`;
}

/** A release's POIs and its weeks: March's are the demo drop's own draws; February's weeks come from a second seed. */
function releaseData(release: DemoRelease, index: number): { pois: DemoPoi[]; weeks: DemoWeek[] } {
  if (index === DEMO_RELEASES.length - 1) {
    const rand = seededRandom(DEMO_DEFAULTS.seed);
    const pois = makeDemoPois(rand, DEMO_DEFAULTS.pois);
    return { pois, weeks: makeDemoWeeks(rand, pois, release.weeks) };
  }
  // The first DEMO_DEFAULTS.pois of these are March's POIs (the same draws); the rest, March removed.
  const all = makeDemoPois(seededRandom(DEMO_DEFAULTS.seed), DEMO_DEFAULTS.pois + REMOVED_IN_MARCH);
  const pois = all.filter((p) => p.index < DEMO_DEFAULTS.pois - ADDED_IN_MARCH || p.index >= DEMO_DEFAULTS.pois);
  return { pois, weeks: makeDemoWeeks(seededRandom(DEMO_DEFAULTS.seed + 1 + index), pois, release.weeks) };
}

/** One release's drop folder, written. */
export interface WrittenRelease {
  readonly month: string;
  readonly dir: string;
  readonly files: readonly string[];
}

/** Writes each demo release into `<outDir>/<month>/` (core, weekly and monthly patterns, gzipped CSV); oldest first. */
export async function writeDemoReleases(outDir: string): Promise<WrittenRelease[]> {
  const written: WrittenRelease[] = [];
  for (const [index, release] of DEMO_RELEASES.entries()) {
    const { pois, weeks } = releaseData(release, index);
    const byIndex: DemoPoi[] = [];
    for (const p of pois) byIndex[p.index] = p;
    const parent = (p: DemoPoi) => parentOf(byIndex, p);
    const core = pois.map((p) => line(CORE_HEADER, coreRow(p, nameIn(p, release.month), parent(p))));
    const weekly = weeks.map((w) => line(WEEKLY_HEADER, weeklyRow(w, nameIn(w.poi, release.month), parent(w.poi))));
    const monthly = pois.map((p) => monthlyRow(p, nameIn(p, release.month), parent(p), `${release.month}-01`)).filter((r) => r !== null)
      .map((r) => line(MONTHLY_HEADER, r));
    const dir = path.join(outDir, release.month);
    await mkdir(dir, { recursive: true });
    const files = {
      'core_poi.csv.gz': csv(CORE_HEADER, core),
      'patterns.csv.gz': csv(WEEKLY_HEADER, weekly),
      'monthly_patterns.csv.gz': csv(MONTHLY_HEADER, monthly),
    };
    const paths: string[] = [];
    for (const [name, text] of Object.entries(files)) {
      const file = path.join(dir, name);
      await writeFile(file, gzipSync(text, { level: 6 }));
      paths.push(file);
    }
    written.push({ month: release.month, dir, files: paths });
  }
  return written;
}


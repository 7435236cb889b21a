import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { CORE_HEADER, GEOMETRY_HEADER, MONTHLY_HEADER, WEEKLY_HEADER } from '../../tools/generate-drop.ts';
import { geometryOf, monthOf, poiOf, weekOf, type SyntheticPoi } from '../../tools/synthetic-places.ts';
import { writeCsv } from './write-csv.ts';

/**
 * The drops of test/fixtures/schema5: three monthly releases over one universe of 300 synthetic
 * POIs (seed 505), every column of the four products plus one column each product's catalog does
 * not know (served in `other_columns`). Deterministic: the same release writes the same bytes.
 *
 * - 2022-02: core for POIs 0-259; weeks 2022-01-31 to 2022-02-21 for 0-279 (260-279 without
 *   core); month 2022-01 for 0-289 (280-289 only monthly and geometry); geometry for 0-299
 *   (290-299 geometry only).
 * - 2022-03: core again (0-249 and 260-269: 250-259 leave, 260-269 arrive; some names and hours
 *   change); weeks 2022-02-21 (delivered again, other values) to 2022-03-14; month 2022-02; no
 *   geometry (inherited).
 * - 2022-04 (loaded by test/integration/schema5-upgrade.test.ts): weekly patterns only, weeks
 *   2022-03-14 (again) to 2022-03-28; core, months and geometry inherited.
 */
export type Schema5Release = '2022-02' | '2022-03' | '2022-04';

const SEED = 505;
export const SCHEMA5_POIS = 300;

interface ReleasePlan {
  /** Salt of this release's values: a week delivered again by a later release differs. */
  readonly salt: number;
  readonly core: ((i: number) => boolean) | null;
  readonly weeks: readonly string[];
  readonly months: readonly string[];
  readonly geometry: boolean;
}

const PLANS: Record<Schema5Release, ReleasePlan> = {
  '2022-02': { salt: 0, core: (i) => i < 260, weeks: ['2022-01-31', '2022-02-07', '2022-02-14', '2022-02-21'], months: ['2022-01-01'], geometry: true },
  '2022-03': { salt: 1, core: (i) => i < 250 || (i >= 260 && i < 270), weeks: ['2022-02-21', '2022-02-28', '2022-03-07', '2022-03-14'], months: ['2022-02-01'], geometry: false },
  '2022-04': { salt: 2, core: null, weeks: ['2022-03-14', '2022-03-21', '2022-03-28'], months: [], geometry: false },
};

/** Names beyond ASCII (Latin accents, CJK, Greek, Cyrillic, Arabic, an emoji, a surrogate pair), for one POI in six. */
const NAMES = ['Café Zoë', 'Bäckerei Müller', 'Łódź Pierogi', '東京ラーメン 本店', 'Ελληνικό Καφέ', 'Кафе «Пушкин»', 'مطعم الأرز', '🍕 Pizza Ñandú',
  'Crème Brûlée & Co', 'Søndre Kiosk', 'Zürich Uhren', '𝔊𝔬𝔱𝔥𝔦𝔠 Books'];
const STREETS = ['12 Calle Peña', '3 Rue de l’Église', '7 Straße des 17. Juni'];
const OPEN_HOURS = ['{ "Mon": [["8:00", "21:00"]], "Sun": [] }', '{ "Mon": [["7:00", "12:00"], ["13:00", "22:00"]], "Sat": [["9:00", "23:30"]] }'];

function poi(i: number): SyntheticPoi {
  const p = poiOf(SEED, i);
  if (i % 6 !== 1) return p;
  const k = Math.floor(i / 6);
  return { ...p, name: NAMES[k % NAMES.length]!, street: k % 4 === 0 ? STREETS[k % STREETS.length]! : p.street };
}

const json = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'object' ? JSON.stringify(v) : (v as string | number));
const brandId = (p: SyntheticPoi) => (p.brand ? 'SG_BRAND_' + Buffer.from(p.brand).toString('hex').slice(0, 16) : null);

function coreRow(p: SyntheticPoi, salt: number): (string | number | null)[] {
  const renamed = salt > 0 && p.index % 4 === 0 ? `${p.name} (nuevo año)` : p.name;
  return [p.placekey, p.index % 9 === 0 ? poiOf(SEED, p.index + 1).placekey : null, renamed, brandId(p), p.brand, p.category.top, p.category.sub,
    p.category.naics, p.lat.toFixed(6), p.lng.toFixed(6), p.street, p.metro.city, p.metro.region, p.postal, 'US', p.phone, OPEN_HOURS[(p.index + salt) % 2]!,
    p.category.tags || null, p.index % 7 === 0 ? '2019-07-01' : null, p.index % 11 === 0 ? '2021-12-01' : null, '2019-07', p.index % 5 === 0 ? 'POINT' : 'POLYGON',
    p.index % 3 === 0 ? `note ${salt}: ${p.name}` : null];
}

function weeklyRow(p: SyntheticPoi, week: string, w: number): (string | number | null)[] | null {
  const d = weekOf(SEED, p, week, w);
  if (!d) return null;
  return [p.placekey, null, p.name, p.street, p.metro.city, p.metro.region, p.postal, 'US', brandId(p), p.brand, d.date_range_start, d.date_range_end,
    d.raw_visit_counts, d.raw_visitor_counts, json(d.visits_by_day), json(d.visits_by_each_hour), p.cbg, json(d.visitor_home_cbgs),
    json(d.visitor_home_aggregation), json(d.visitor_daytime_cbgs), json(d.visitor_country_of_origin), d.distance_from_home, d.median_dwell,
    json(d.bucketed_dwell_times), json(d.related_same_day_brand), json(d.related_same_week_brand), json(d.device_type), d.normalized_visits_by_state_scaling,
    d.normalized_visits_by_region_naics_visits, d.normalized_visits_by_region_naics_visitors, d.normalized_visits_by_total_visits,
    d.normalized_visits_by_total_visitors, w % 2 === 0 ? `wk ${week}` : null];
}

function monthlyRow(p: SyntheticPoi, month: string, m: number): (string | number | null)[] | null {
  const d = monthOf(SEED, p, month, m);
  if (!d) return null;
  return [p.placekey, null, p.name, p.street, p.metro.city, p.metro.region, p.postal, 'US', brandId(p), p.brand, d.date_range_start, d.date_range_end,
    d.raw_visit_counts, d.raw_visitor_counts, json(d.visits_by_day), p.cbg, json(d.visitor_home_cbgs), json(d.visitor_home_aggregation),
    json(d.visitor_daytime_cbgs), json(d.visitor_country_of_origin), d.distance_from_home, d.median_dwell, json(d.bucketed_dwell_times),
    json(d.related_same_day_brand), json(d.related_same_month_brand), json(d.popularity_by_hour), json(d.popularity_by_day), json(d.device_type),
    d.normalized_visits_by_state_scaling, d.normalized_visits_by_region_naics_visits, d.normalized_visits_by_region_naics_visitors,
    d.normalized_visits_by_total_visits, d.normalized_visits_by_total_visitors, `mo ${month.slice(0, 7)}`];
}

function geometryRow(p: SyntheticPoi): (string | number | null)[] | null {
  const g = geometryOf(SEED, p);
  if (!g) return null;
  return [p.placekey, g.polygon_wkt, g.polygon_class, String(g.enclosed), String(g.is_synthetic), String(g.includes_parking_lot), g.wkt_area_sq_meters, 'US'];
}

const indices = (n: number, keep: (i: number) => boolean) => Array.from({ length: n }, (_, i) => i).filter(keep);
const present = <T>(rows: (T | null)[]): T[] => rows.filter((r): r is T => r !== null);

/**
 * Writes release `release`'s drop into `dir` (gzipped CSV in the delivered layout) and returns
 * the folder. Each week (and month) of a release draws its values from (seed, POI, salt, period).
 */
export async function writeSchema5Drop(release: Schema5Release, dir: string): Promise<string> {
  const plan = PLANS[release];
  await mkdir(dir, { recursive: true });
  if (plan.core) {
    await writeCsv(path.join(dir, 'core_poi-part1.csv.gz'), [...CORE_HEADER, 'store_note'], indices(260 + 10, plan.core).map((i) => coreRow(poi(i), plan.salt)));
  }
  const weekly = indices(280, () => true).flatMap((i) => plan.weeks.map((week) => weeklyRow(poi(i), week, 10 * plan.salt + plan.weeks.indexOf(week))));
  await writeCsv(path.join(dir, 'patterns-part1.csv.gz'), [...WEEKLY_HEADER, 'shop_tag'], present(weekly));
  if (plan.months.length) {
    const monthly = indices(290, () => true).flatMap((i) => plan.months.map((month, m) => monthlyRow(poi(i), month, 10 * plan.salt + m)));
    await writeCsv(path.join(dir, 'monthly_patterns-part1.csv.gz'), [...MONTHLY_HEADER, 'shop_note'], present(monthly));
  }
  if (plan.geometry) {
    await writeCsv(path.join(dir, 'geometry-part1.csv.gz'), [...GEOMETRY_HEADER, 'iso_country_code'], present(indices(SCHEMA5_POIS, () => true).map((i) => geometryRow(poi(i)))));
  }
  return dir;
}

/** The weeks a release's drop delivers (Mondays). */
export function schema5OwnWeeks(release: Schema5Release): readonly string[] {
  return PLANS[release].weeks;
}

/** Every Placekey any release may hold (POIs 0-299), then `unknown` well-formed ones no release holds. */
export function schema5Keys(unknown: number): string[] {
  return Array.from({ length: SCHEMA5_POIS + unknown }, (_, i) => poiOf(SEED, i).placekey);
}

const RELEASES: readonly Schema5Release[] = ['2022-02', '2022-03', '2022-04'];

/** Every week (Monday) and month (1st) the version of `release` holds, its own and those it inherits, oldest first. */
export function schema5History(release: Schema5Release): { weeks: string[]; months: string[] } {
  const upTo = RELEASES.slice(0, RELEASES.indexOf(release) + 1).map((r) => PLANS[r]);
  return { weeks: [...new Set(upTo.flatMap((p) => p.weeks))].sort(), months: [...new Set(upTo.flatMap((p) => p.months))].sort() };
}

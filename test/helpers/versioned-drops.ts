import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { DEMO_CORE_HEADER, DEMO_WEEKLY_HEADER, seededRandom } from '../../ingest/cli/demo-drop.ts';
import { demoFixture, expectedCore, expectedWeekly, type CsvRow } from './demo-fixture.ts';
import { KEYS, writeCsv } from './write-csv.ts';

/** One version's data as the API must return it: per placekey, core and each week (by Monday). */
export interface ExpectedVersion {
  readonly n: number;
  readonly core: ReadonlyMap<string, object>;
  readonly weeks: ReadonlyMap<string, ReadonlyMap<string, object>>;
}

/**
 * Drops of the demo data that differ per version number `n`: every POI's name ends in ` v<n>`
 * (core and weekly) and every week's visits grow by `n` (on Monday), so any entry of a response
 * shows which version it came from, and a response mixing two versions shows two numbers.
 */
export class VersionedDrops {
  readonly placekeys: readonly string[];
  /** A valid Placekey with no POI in any version: its entry has null products. */
  readonly missingKey: string;
  readonly mondays: readonly string[];
  readonly #core: CsvRow[];
  readonly #weekly: CsvRow[];
  readonly #dir: string;

  private constructor(dir: string, core: CsvRow[], weekly: CsvRow[]) {
    this.#dir = dir;
    this.#core = core;
    this.#weekly = weekly;
    this.placekeys = core.map((r) => r['placekey']!);
    this.missingKey = KEYS.find((k) => !this.placekeys.includes(k))!;
    this.mondays = [...new Set(weekly.map((r) => r['date_range_start']!.slice(0, 10)))].sort();
  }

  static async create(dir: string): Promise<VersionedDrops> {
    const base = await demoFixture(path.join(dir, 'base'));
    return new VersionedDrops(dir, base.core, base.weekly);
  }

  #coreRow(row: CsvRow, n: number): CsvRow {
    return { ...row, location_name: `${row['location_name']} v${n}` };
  }

  #weeklyRow(row: CsvRow, n: number): CsvRow {
    const days = JSON.parse(row['visits_by_day']!) as number[];
    days[0]! += n;
    return { ...row, location_name: `${row['location_name']} v${n}`, raw_visit_counts: String(Number(row['raw_visit_counts']) + n), visits_by_day: JSON.stringify(days) };
  }

  /** Writes version `n`'s drop (core CSV, gzipped patterns) and returns its folder. */
  async write(n: number): Promise<string> {
    const dir = path.join(this.#dir, `drop-v${n}`);
    await mkdir(dir, { recursive: true });
    await writeCsv(path.join(dir, 'core_poi.csv'), DEMO_CORE_HEADER, this.#core.map((r) => DEMO_CORE_HEADER.map((h) => this.#coreRow(r, n)[h]!)));
    await writeCsv(path.join(dir, 'patterns.csv.gz'), DEMO_WEEKLY_HEADER, this.#weekly.map((r) => DEMO_WEEKLY_HEADER.map((h) => this.#weeklyRow(r, n)[h]!)));
    return dir;
  }

  expected(n: number): ExpectedVersion {
    const core = new Map(this.#core.map((r) => [r['placekey']!, expectedCore(this.#coreRow(r, n))]));
    const weeks = new Map<string, Map<string, object>>();
    for (const r of this.#weekly) {
      const monday = r['date_range_start']!.slice(0, 10);
      if (!weeks.has(monday)) weeks.set(monday, new Map());
      weeks.get(monday)!.set(r['placekey']!, expectedWeekly(this.#weeklyRow(r, n)));
    }
    return { n, core, weeks };
  }
}

export const LOOKUP_QUERY = `query($placekeys: [Placekey!], $date: String) {
  batch_lookup(placekeys: $placekeys) {
    placekey
    placedata_core { location_name street_address city region postal_code iso_country_code naics_code top_category sub_category }
    placedata_weekly_patterns(date: $date) { location_name street_address city region date_range_start date_range_end raw_visit_counts raw_visitor_counts visits_by_day }
  }
}`;

/** A look-up the load generators send: `size` demo keys and the missing one, core and one week. */
export interface Lookup {
  readonly placekeys: string[];
  /** The date asked for (a Wednesday of a week), or null for the newest week. */
  readonly date: string | null;
  readonly monday: string;
}

/** Random look-ups over the drops' keys and weeks; one in five omits the date (newest week). */
export function lookupMaker(drops: VersionedDrops, size: number, seed: number): () => Lookup {
  const random = seededRandom(seed);
  return () => {
    const placekeys = Array.from({ length: size }, () => drops.placekeys[Math.floor(random() * drops.placekeys.length)]!);
    placekeys.splice(Math.floor(random() * size), 0, drops.missingKey);
    const newest = random() < 0.2;
    const monday = newest ? drops.mondays.at(-1)! : drops.mondays[Math.floor(random() * drops.mondays.length)]!;
    const wednesday = new Date(Date.parse(monday + 'T00:00:00Z') + 2 * 86_400_000).toISOString().slice(0, 10);
    return { placekeys, date: newest ? null : wednesday, monday };
  };
}

export function lookupBody(lookup: Lookup): string {
  return JSON.stringify({ query: LOOKUP_QUERY, variables: { placekeys: lookup.placekeys, date: lookup.date } });
}

/**
 * Checks a look-up's answer whole against the version its `extensions.version_date` names:
 * every entry must hold exactly that version's data. Returns what is wrong, or null.
 */
export function checkLookup(status: number | null, bodyText: string, lookup: Lookup, versionOf: (label: string) => ExpectedVersion | undefined): string | null {
  if (status !== 200) return `status ${status}: ${bodyText.slice(0, 300)}`;
  let body: { data?: { batch_lookup?: unknown[] }; errors?: unknown; extensions?: { version_date?: string; row_count?: number } };
  try {
    body = JSON.parse(bodyText);
  } catch {
    return `not JSON (${bodyText.length} bytes): ${bodyText.slice(0, 200)}`;
  }
  if (body.errors) return `errors: ${JSON.stringify(body.errors).slice(0, 300)}`;
  const label = body.extensions?.version_date ?? '';
  const version = versionOf(label);
  if (!version) return `version_date ${JSON.stringify(label)} is not a published version`;
  const week = version.weeks.get(lookup.monday)!;
  const want = {
    data: {
      batch_lookup: lookup.placekeys.map((k) => ({ placekey: k, placedata_core: version.core.get(k) ?? null, placedata_weekly_patterns: week.get(k) ?? null })),
    },
    extensions: { row_count: lookup.placekeys.length, version_date: label },
  };
  if (isDeepStrictEqual(body, want)) return null;
  const entries = body.data?.batch_lookup ?? [];
  const wrong = entries.findIndex((e, i) => !isDeepStrictEqual(e, want.data.batch_lookup[i]));
  return `answer differs from v${version.n} (${label}) at entry ${wrong} of ${entries.length}: ${JSON.stringify(entries[wrong]).slice(0, 300)}`;
}

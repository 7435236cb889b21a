import { expect } from 'chai';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { openReadOnly } from '../../shared/duckdb-open.ts';
import { geoToWhere } from '../../shared/placekey.ts';
import { matchPlaces, matchSourceIn, type MatchOutcome, type MatchSource } from '../../shared/matching/match-places.ts';
import type { PlaceQuery, PlaceQueryField } from '../../shared/matching/place-query.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { writeCsv } from '../helpers/write-csv.ts';
import { figuresByKind, type KindFigures } from '../../tools/match-eval/eval-figures.ts';
import { FULL_ADDRESS_KINDS, NAME_COORDS_KINDS } from '../../tools/match-eval/eval-queries.ts';
import { runMatchEval, type EvalRun } from '../../tools/match-eval/run-match-eval.ts';

// A core file needs one of naics_code, top_category or sub_category to be told from other products: empty here.
const HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'latitude', 'longitude', 'top_category'];

/** A place of the small drop: its placekey's where part is its own coordinates' cell. */
function place(what: string, name: string, street: string | null, city: string | null, postal: string | null, lat: number, lon: number) {
  return { placekey: `${what}@${geoToWhere(lat, lon)}`, name, street, city, region: city ? 'IL' : null, postal, lat, lon };
}

// Springfield, IL and around: a place with directionals and suffixes, two Chipotles on one street
// about 240 m apart (chain stores), a name with accents, a place with a unit, one in another
// town, a park with a name and coordinates only.
const BLUE_DOOR = place('222-222', 'Blue Door Coffee', '120 N 5th St', 'Springfield', '62701', 39.8020, -89.6490);
const CHIPOTLE_A = place('223-222', 'Chipotle Mexican Grill', '2501 Wabash Ave', 'Springfield', '62704', 39.7760, -89.6900);
const CHIPOTLE_B = place('224-222', 'Chipotle Mexican Grill', '2680 Wabash Ave', 'Springfield', '62704', 39.7752, -89.6928);
const ETOILE = place('225-222', 'Café Étoile', '310 E Adams Street', 'Springfield', '62701', 39.8005, -89.6455);
const DENTAL = place('226-222', 'Lincoln Dental Care', '1000 S 6th St Suite 210', 'Springfield', '62703', 39.7880, -89.6480);
const BOOKS = place('227-222', 'Prairie Books', '77 Maple Avenue', 'Chatham', '62629', 39.6760, -89.7040);
const PARK = place('228-222', 'Washington Park', null, null, null, 39.7905, -89.6720);
const PLACES = [BLUE_DOOR, CHIPOTLE_A, CHIPOTLE_B, ETOILE, DENTAL, BOOKS, PARK];

/** About `north` and `east` metres from a place. */
function near(p: { lat: number; lon: number }, north: number, east: number): { latitude: number; longitude: number } {
  return { latitude: Number((p.lat + north / 111_320).toFixed(6)), longitude: Number((p.lon + east / (111_320 * Math.cos((p.lat * Math.PI) / 180))).toFixed(6)) };
}

const address = (p: typeof BLUE_DOOR): PlaceQuery => ({ location_name: p.name, street_address: p.street, city: p.city, region: p.region, postal_code: p.postal, iso_country_code: 'US' });

describe('matching one query per perturbation kind against a loaded drop (whole outcomes)', function () {
  this.timeout(120_000);
  let dir: string;
  let db: DuckDBInstance;
  let conn: DuckDBConnection;
  let source: MatchSource;
  const one = async (query: PlaceQuery): Promise<MatchOutcome> => (await matchPlaces(conn, source, [query]))[0]!;

  before(async () => {
    dir = await makeTempDir('match-kinds');
    const drop = path.join(dir, 'drop');
    const dataDir = path.join(dir, 'data');
    await mkdir(drop, { recursive: true });
    await writeCsv(path.join(drop, 'core_poi-part1.csv.gz'), HEADER,
      PLACES.map((p) => [p.placekey, p.name, p.street, p.city, p.region, p.postal, p.city ? 'US' : null, p.lat, p.lon, null]));
    const result = await loadDrop({ dataDir, inputs: [drop], month: '2022-04', settings: buildSettingsOf(testConfig(dataDir)) });
    db = await openReadOnly(result.file, { memoryLimit: '256MB', threads: 1 });
    conn = await db.connect();
    source = await matchSourceIn(conn, result.label);
  });
  after(async () => {
    conn?.closeSync();
    db?.closeSync();
    if (dir) await removeDir(dir);
  });

  const ADDRESS_FIELDS: PlaceQueryField[] = ['location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code'];
  const NAME_COORDS: PlaceQueryField[] = ['location_name', 'latitude', 'longitude'];

  /** A whole outcome: the best candidate's placekey (or null), confidence and matched_on, and the candidates as [placekey, confidence, matched_on]. */
  function outcome(placekey: string | null, confidence: number | null, matched_on: PlaceQueryField[], candidates: [string, number, PlaceQueryField[]][], query_id: string | null = null): MatchOutcome {
    return { query_id, placekey, confidence, matched_on, candidates: candidates.map(([k, c, m]) => ({ placekey: k, confidence: c, matched_on: m })) };
  }
  const exact = (p: { placekey: string }, confidence: number, on: PlaceQueryField[] = ADDRESS_FIELDS) => outcome(p.placekey, confidence, on, [[p.placekey, confidence, on]]);

  // Each kind of tools/match-eval/eval-queries.ts once; the confidences are the pipeline's as
  // returned (deterministic: rounded to 4 places, ties broken by placekey), pinned at the scoring
  // tuned on the evaluation set (units, name words and rarity, distance): a change to the scoring changes them, and the diff shows each whole outcome.
  const cases: [string, () => PlaceQuery, MatchOutcome][] = [
    ['full_address', () => ({ query_id: 'q1', ...address(BLUE_DOOR) }), { ...exact(BLUE_DOOR, 0.9995), query_id: 'q1' }],
    ['abbreviation: long forms for the short', () => ({ ...address(BLUE_DOOR), street_address: '120 North 5th Street' }), exact(BLUE_DOOR, 0.9995)],
    ['abbreviation: short forms for the long', () => ({ ...address(ETOILE), street_address: '310 East Adams St' }), exact(ETOILE, 0.9995)],
    ['name_typo', () => ({ ...address(DENTAL), location_name: 'Lincon Dental Care' }), exact(DENTAL, 0.9997)],
    ['postal_missing (blank, as a CSV gives it)', () => ({ ...address(BOOKS), postal_code: '' }),
      exact(BOOKS, 0.9987, ['location_name', 'street_address', 'city', 'region', 'iso_country_code'])],
    ['postal_wrong: not among what matched', () => ({ ...address(BOOKS), postal_code: '62639' }),
      exact(BOOKS, 0.9966, ['location_name', 'street_address', 'city', 'region', 'iso_country_code'])],
    ['unit_number added', () => ({ ...address(BOOKS), street_address: '77 Maple Avenue #5' }), exact(BOOKS, 0.9995)],
    ['unit_number as the data has it, written otherwise', () => ({ ...address(DENTAL), street_address: '1000 S 6th St Ste 210' }), exact(DENTAL, 0.9997)],
    ['address_only', () => ({ street_address: DENTAL.street, city: DENTAL.city, region: DENTAL.region, postal_code: DENTAL.postal }),
      exact(DENTAL, 0.9837, ['street_address', 'city', 'region', 'postal_code'])],
    ['name_coords', () => ({ location_name: PARK.name, latitude: PARK.lat, longitude: PARK.lon }), exact(PARK, 0.9917, NAME_COORDS)],
    ['coords_moved (about 80 m)', () => ({ location_name: PARK.name, ...near(PARK, 60, -50) }), exact(PARK, 0.9861, NAME_COORDS)],
    ['no_coords', () => ({ location_name: ETOILE.name, street_address: ETOILE.street, city: ETOILE.city, region: ETOILE.region }),
      exact(ETOILE, 0.9987, ['location_name', 'street_address', 'city', 'region'])],
    ['name_city', () => ({ location_name: BOOKS.name, city: BOOKS.city, region: BOOKS.region }), exact(BOOKS, 0.9637, ['location_name', 'city', 'region'])],
    ['case_accents', () => ({ ...address(ETOILE), location_name: 'CAFE ETOILE', street_address: '310 E ADAMS STREET', city: 'SPRINGFIELD' }), exact(ETOILE, 0.9995)],
    ['chain: a store by its own address', () => address(CHIPOTLE_B),
      outcome(CHIPOTLE_B.placekey, 0.998, ADDRESS_FIELDS, [[CHIPOTLE_B.placekey, 0.998, ADDRESS_FIELDS], [CHIPOTLE_A.placekey, 0.0015, ['location_name', 'city', 'region', 'postal_code', 'iso_country_code']]])],
    ['chain: a store by its coordinates moved 50 m (the other store is about 240 m away)', () => ({ location_name: CHIPOTLE_A.name, ...near(CHIPOTLE_A, 40, 30) }),
      outcome(CHIPOTLE_A.placekey, 0.9791, NAME_COORDS, [[CHIPOTLE_A.placekey, 0.9791, NAME_COORDS], [CHIPOTLE_B.placekey, 0.0108, ['location_name']]])],
    ['chain: name and city alone name no store', () => ({ location_name: CHIPOTLE_A.name, city: 'Springfield', region: 'IL' }),
      outcome(null, 0.4891, ['location_name', 'city', 'region'], [[CHIPOTLE_A.placekey, 0.4891, ['location_name', 'city', 'region']], [CHIPOTLE_B.placekey, 0.4891, ['location_name', 'city', 'region']]])],
    ['short_name: the first words of a longer name, with coordinates about 35 m off', () => ({ location_name: 'Lincoln Dental', ...near(DENTAL, 30, 20) }),
      exact(DENTAL, 0.9759, NAME_COORDS)],
    ['absent: a place not in the data, by its address', () => ({ location_name: 'Riverside Grill', street_address: '900 Riverside Dr', city: 'Springfield', region: 'IL', postal_code: '62702' }),
      outcome(null, null, [], [])],
    ['absent: a third store of the chain, by its coordinates (about 1.1 km from the nearest)', () => ({ location_name: CHIPOTLE_A.name, ...near(CHIPOTLE_B, -900, -700) }),
      outcome(null, null, [], [])],
    ['absent: another business at a place\'s address', () => ({ ...address(BLUE_DOOR), location_name: 'Sunrise Bakery' }),
      outcome(null, 0.0001, ['street_address', 'city', 'region', 'postal_code', 'iso_country_code'], [[BLUE_DOOR.placekey, 0.0001, ['street_address', 'city', 'region', 'postal_code', 'iso_country_code']]])],
    ['absent: another name at a place\'s coordinates', () => ({ location_name: 'Lincoln Statue', latitude: PARK.lat, longitude: PARK.lon }),
      outcome(null, 0, ['latitude', 'longitude'], [[PARK.placekey, 0, ['latitude', 'longitude']]])],
    ['absent: another suite at a place\'s address, by the address alone (the place has no unit: a building of several tenants)',
      () => ({ street_address: '77 Maple Avenue Ste 500', city: BOOKS.city, region: BOOKS.region, postal_code: BOOKS.postal }),
      outcome(null, 0.6457, ['street_address', 'city', 'region', 'postal_code'], [[BOOKS.placekey, 0.6457, ['street_address', 'city', 'region', 'postal_code']]])],
    ['absent: a name with a word the place lacks, at its coordinates (no address to tell them apart)',
      () => ({ location_name: 'Washington Park Pool', latitude: PARK.lat, longitude: PARK.lon }),
      outcome(null, 0.5842, ['latitude', 'longitude'], [[PARK.placekey, 0.5842, ['latitude', 'longitude']]])],
  ];

  for (const [kind, query, expected] of cases) {
    it(kind, async () => {
      expect(await one(query())).to.deep.equal(expected);
    });
  }

  it('a batch answers every kind at once, in request order, as one query at a time does', async () => {
    const outcomes = await matchPlaces(conn, source, cases.map(([, query]) => query()));
    expect(outcomes).to.deep.equal(cases.map(([, , expected]) => expected));
  });
});

const SAMPLES = process.env['SAMPLES_DIR'];

describe('the matching evaluation on the real samples (SAMPLES_DIR; npm run match:eval): issue 31\'s targets', function () {
  this.timeout(300_000);
  let dir: string;
  let run: EvalRun;
  let kinds: Map<string, KindFigures>;
  before(async function () {
    if (!SAMPLES) {
      console.log('    skipped: SAMPLES_DIR is not set, so the evaluation on the real samples was not run');
      this.skip();
    }
    dir = await makeTempDir('match-eval');
    // The whole set (about 56k queries) takes seconds: no reduced size needed.
    run = await runMatchEval({ samplesDir: SAMPLES!, workDir: dir, seed: 31, holdout: 0.1, env: { PATH: process.env['PATH'], LOG_LEVEL: 'silent', DUCKDB_MEMORY_LIMIT: '1GB' } });
    kinds = new Map(figuresByKind(run.queries, run.outcomes.map((o) => o.placekey)).map((f) => [f.kind, f]));
    for (const f of kinds.values()) console.log(`      ${f.kind}: ${f.queries} queries, ${f.correct} correct, ${f.wrong} wrong, precision ${f.precision?.toFixed(4)}, recall ${f.recall?.toFixed(4)}`);
  });
  after(async () => {
    if (dir) await removeDir(dir);
  });

  it('builds the same set from the samples every run (places, held out, queries per kind)', () => {
    expect({ drop: run.drop.length, heldOut: run.heldOut.length }).to.deep.equal({ drop: 6054, heldOut: 677 });
    expect(Object.fromEntries([...kinds.values()].map((f) => [f.kind, f.queries]))).to.deep.equal({
      full_address: 3695, abbreviation: 3472, name_typo: 3690, postal_missing: 3695, postal_wrong: 3695, unit_number: 2633, address_only: 3695,
      name_coords: 5958, coords_moved: 5897, no_coords: 3695, name_city: 2175, case_accents: 3695, chain: 3074, short_name: 4696, absent: 5245, ambiguous: 2105,
      absent_lookalike: 217, absent_duplicate: 56, full_address_kinds: 31965, name_coords_kinds: 11855, overall: 61388,
    });
  });

  it('precision at the default threshold is at least 0.99', () => {
    expect(kinds.get('overall')!.precision).to.be.at.least(0.99);
  });

  it('recall is at least 0.95 for the queries with a full address, and for each such kind', () => {
    for (const k of ['full_address_kinds', ...FULL_ADDRESS_KINDS]) expect(kinds.get(k)!.recall, k).to.be.at.least(0.95);
  });

  it('recall is at least 0.90 for a name with coordinates, and for each such kind', () => {
    for (const k of ['name_coords_kinds', ...NAME_COORDS_KINDS]) expect(kinds.get(k)!.recall, k).to.be.at.least(0.9);
  });

  // Issue 31's target: none. A held-out place the samples list twice (absent_duplicate: the same
  // name words within 200 m) is in the data under its other key, so it is counted apart.
  it('every query for a place not in the data answers null', () => {
    const answered = run.queries.map((q, i) => ({ q, o: run.outcomes[i]! })).filter(({ q, o }) => q.kind === 'absent' && o.placekey !== null)
      .map(({ q, o }) => `${q.query.query_id} -> ${o.placekey} (${o.confidence})`);
    expect(answered).to.deep.equal([]);
    expect(kinds.get('absent')!.queries).to.equal(5245);
  });
});

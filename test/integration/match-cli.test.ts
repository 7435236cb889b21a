import { DuckDBInstance } from '@duckdb/node-api';
import { expect } from 'chai';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { withReadOnly } from '../../shared/duckdb-open.ts';
import { matchPlaces, matchSourceIn } from '../../shared/matching/match-places.ts';
import type { PlaceQuery } from '../../shared/matching/place-query.ts';
import { geoToWhere } from '../../shared/placekey.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { CORE_HEADER, writeCsv } from '../helpers/write-csv.ts';

/** The places of the data folder: two of a chain a street apart, a non-ASCII name, coordinates that agree with each Placekey's where part. */
const PLACES = [
  { what: '222-222', name: 'Lucky Bank', street: '1134 Tremont Rd', city: 'Boston', region: 'MA', postal: '02108', lat: 42.372232, lng: -71.065105 },
  { what: '222-223', name: 'Green Leaf Grill', street: '641 Broadway St', city: 'New York', region: 'NY', postal: '10001', lat: 40.730688, lng: -73.964207 },
  { what: '222-224', name: 'Café Olé', street: '77 Elm St', city: 'Springfield', region: 'MA', postal: '01103', lat: 42.1015, lng: -72.5898 },
  { what: '222-225', name: 'Blue Bottle', street: '10 Main St', city: 'Boston', region: 'MA', postal: '02110', lat: 42.3555, lng: -71.0565 },
  { what: '222-226', name: 'Blue Bottle', street: '250 Main St', city: 'Boston', region: 'MA', postal: '02110', lat: 42.3570, lng: -71.0540 },
].map((p) => ({ ...p, placekey: `${p.what}@${geoToWhere(p.lat, p.lng)}` }));
const [BANK, GRILL, CAFE, , BOTTLE_250] = PLACES.map((p) => p.placekey) as [string, string, string, string, string];

/**
 * The user's list: odd header names (found by their headers), an exact address, an abbreviation
 * the other way (Street for St), a quoted comma and accents, a name with coordinates moved about
 * 20 m, the second of a chain, a place not in the data, a row with only a name and one with a
 * latitude alone (both too little), and a column named rowid (DuckDB's own name for a row's place).
 */
const INPUT = [
  'Ref,Store Name,Street Address,CITY,State,Zip Code,Lat,Lng,rowid',
  'r1,Lucky Bank,1134 Tremont Rd,Boston,MA,02108,,,a',
  'r2,Green Leaf Grill,641 Broadway Street,New York,NY,10001,,,b',
  'r3,"Café Olé, Springfield",77 Elm Street,Springfield,MA,01103,,,c',
  'r4,Lucky Bank,,,,,42.37240,-71.06500,d',
  'r5,Blue Bottle,250 Main Street,Boston,MA,02110,,,e',
  'r6,Nowhere Diner,1 Nowhere Ln,Boston,MA,02108,,,f',
  'r7,Only a name,,,,,,,g',
  'r8,Lucky Bank,,,,,42.3724,,h',
].join('\n') + '\n';

/** The rows the pipeline is asked about (the input's r1 to r6, as the CLI reads them), and the flags test's. */
const QUERIES: readonly PlaceQuery[] = [
  { location_name: 'Lucky Bank', street_address: '1134 Tremont Rd', city: 'Boston', region: 'MA', postal_code: '02108' },
  { location_name: 'Green Leaf Grill', street_address: '641 Broadway Street', city: 'New York', region: 'NY', postal_code: '10001' },
  { location_name: 'Café Olé, Springfield', street_address: '77 Elm Street', city: 'Springfield', region: 'MA', postal_code: '01103' },
  { location_name: 'Lucky Bank', latitude: 42.3724, longitude: -71.065 },
  { location_name: 'Blue Bottle', street_address: '250 Main Street', city: 'Boston', region: 'MA', postal_code: '02110' },
  { location_name: 'Nowhere Diner', street_address: '1 Nowhere Ln', city: 'Boston', region: 'MA', postal_code: '02108' },
  { location_name: 'Lucky Bank', street_address: '1134 Tremont Rd', postal_code: '02108' },
];

/** Each input row's added columns as written: placekey, confidence, matched_on (null: empty); the pipeline's answers (set in `before`). */
let ADDED: readonly (readonly [string | null, number | null, string | null])[] = [];
/** The flags test's row's added columns (the pipeline's). */
let FLAGGED: readonly [string | null, number | null, string] = [null, null, ''];

/**
 * What the pipeline itself (matchPlaces, as batch_match answers) gives each query against the
 * version file: its best Placekey, confidence and matched_on, which the CLI must write the same.
 * The pipeline's scoring is pinned by its own tests and moves as it is tuned; this test pins the
 * Placekeys and everything around them (order, columns, refusals, formats).
 */
async function pipelineAnswers(file: string, label: string): Promise<{ placekey: string | null; confidence: number | null; matched_on: string }[]> {
  return withReadOnly(file, { memoryLimit: '512MB', threads: 1 }, async (conn) => (await matchPlaces(conn, await matchSourceIn(conn, label), QUERIES))
    .map((o) => ({ placekey: o.placekey, confidence: o.confidence, matched_on: o.matched_on.join(';') })));
}

const COLUMNS = { location_name: 'Store Name', street_address: 'Street Address', city: 'CITY', region: 'State', postal_code: 'Zip Code', latitude: 'Lat', longitude: 'Lng' };

/** The input's rows as read (every value text; empty is null), each with its added columns. */
function expectedRows(added: readonly (readonly (string | number | null)[])[] = ADDED): (string | number | null)[][] {
  const rows = INPUT.trimEnd().split('\n').slice(1).map((line) => {
    const values: string[] = [];
    for (const m of line.matchAll(/("([^"]*)"|[^,]*)(,|$)/g)) {
      values.push(m[2] ?? m[1]!);
      if (m[3] === '') break;
    }
    return values.map((v) => (v === '' ? null : v));
  });
  return rows.map((r, i) => [...r, ...added[i]!]);
}

const csvLine = (row: readonly (string | number | null)[]) => row.map((v) => (v === null ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replaceAll('"', '""')}"` : String(v))).join(',');

const HEADER = 'Ref,Store Name,Street Address,CITY,State,Zip Code,Lat,Lng,rowid,placekey,confidence,matched_on';

/** Runs one statement in a DuckDB of its own (writing a Parquet input). */
async function duckdb(sql: string): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    await conn.run(sql);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

async function readParquet(file: string): Promise<{ columns: string[]; rows: unknown[][] }> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(`SELECT * FROM read_parquet(${quoteLiteral(file)})`);
    return { columns: reader.columnNames(), rows: reader.getRowsJS() };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** The summary line of a run without its seconds. */
const withoutSeconds = (text: string) => text.replace(/ in [\d.]+ s;/, ' in S s;');

describe('placedata match: a user\'s own file, every row matched in order', function () {
  this.timeout(120_000);
  let dir: string;
  let env: Record<string, string>;
  let label: string;
  let input: string;

  before(async () => {
    dir = await makeTempDir('match-cli');
    env = { DATA_DIR: path.join(dir, 'data') };
    const drop = path.join(dir, 'drop');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), [...CORE_HEADER, 'latitude', 'longitude'],
      PLACES.map((p) => [p.placekey, p.name, p.street, p.city, p.region, p.postal, 'US', 722511, 'Restaurants and Other Eating Places', 'Full-Service Restaurants', p.lat, p.lng]));
    const loaded = await placedata(['load', drop, '--month', '2022-03', '--json', '--no-progress'], env);
    expect(loaded.code, loaded.stderr).to.equal(0);
    label = (JSON.parse(loaded.stdout) as { label: string }).label;
    const answers = await pipelineAnswers(path.join(env['DATA_DIR']!, `${label}.duckdb`), label);
    // The places each query must find (the Nowhere Diner has no candidate at all).
    expect(answers.map((x) => x.placekey)).to.deep.equal([BANK, GRILL, CAFE, BANK, BOTTLE_250, null, BANK]);
    expect(answers[5]).to.deep.equal({ placekey: null, confidence: null, matched_on: '' });
    const added = (i: number) => [answers[i]!.placekey, answers[i]!.confidence, answers[i]!.matched_on] as const;
    ADDED = [added(0), added(1), added(2), added(3), added(4), [null, null, null], [null, null, null], [null, null, null]];
    FLAGGED = added(6);
    input = path.join(dir, 'stores.csv');
    await writeFile(input, INPUT);
  });
  after(async () => {
    await removeDir(dir);
  });

  it('writes every input row, in order, with placekey, confidence and matched_on, as CSV; and prints the summary', async () => {
    const out = path.join(dir, 'matched.csv');
    const run = await placedata(['match', input, '--out', out, '--no-progress'], env);
    expect([run.code, run.stderr]).to.deep.equal([0, '']);
    expect(withoutSeconds(run.stdout)).to.equal([
      `matched 5 of 8 rows against ${label} in S s; wrote ${out}`,
      '  below the threshold (0.8): 0; no candidate: 1; refused (too little to identify a place): 2',
      '  columns: location_name "Store Name", street_address "Street Address", city "CITY", region "State", postal_code "Zip Code", latitude "Lat", longitude "Lng"',
      '',
    ].join('\n'));
    expect(await readFile(out, 'utf8')).to.equal([HEADER, ...expectedRows().map(csvLine)].join('\n') + '\n');
    // Nothing else is left beside it (the output was written under a temp name and renamed).
    expect((await readdir(dir)).sort()).to.deep.equal(['data', 'drop', 'matched.csv', 'stores.csv']);
  });

  it('writes the same rows as Parquet and gzipped CSV, matched in chunks of any size, with --json', async () => {
    const parquet = path.join(dir, 'matched.parquet');
    const run = await placedata(['match', input, '--out', parquet, '--json', '--chunk-rows', '3'], env);
    // Not a terminal: progress is a line per phase on stderr (a bar on a terminal).
    expect([run.code, run.stderr]).to.deep.equal([0, 'progress: read 0%\nprogress: match 5%\nprogress: write 95% (8 rows)\nprogress: done 100% (8 rows)\n']);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary['seconds']).to.be.a('number');
    expect({ ...summary, seconds: 0 }).to.deep.equal({
      input, output: parquet, version: label, columns: COLUMNS, min_confidence: 0.8,
      rows: 8, matched: 5, below_threshold: 0, no_candidate: 1, refused: 2, seconds: 0,
    });
    expect(await readParquet(parquet)).to.deep.equal({ columns: HEADER.split(','), rows: expectedRows() });
    const gz = path.join(dir, 'matched.csv.gz');
    expect((await placedata(['match', input, '--out', gz, '--chunk-rows', '1', '--no-progress'], env)).code).to.equal(0);
    expect(gunzipSync(await readFile(gz)).toString('utf8')).to.equal([HEADER, ...expectedRows().map(csvLine)].join('\n') + '\n');
    // A Parquet input: the same rows.
    const parquetIn = path.join(dir, 'stores.parquet');
    await duckdb(`COPY (SELECT * FROM read_csv(${quoteLiteral(input)}, header = true, all_varchar = true)) TO ${quoteLiteral(parquetIn)} (FORMAT parquet)`);
    const fromParquet = path.join(dir, 'from-parquet.csv');
    expect((await placedata(['match', parquetIn, '--out', fromParquet, '--no-progress'], env)).code).to.equal(0);
    expect(await readFile(fromParquet, 'utf8')).to.equal([HEADER, ...expectedRows().map(csvLine)].join('\n') + '\n');
  });

  it('keeps a match below --min-confidence out of the placekey column, with its confidence and matched_on', async () => {
    const out = path.join(dir, 'strict.csv');
    const run = await placedata(['match', input, '--out', out, '--min-confidence', '0.999', '--json', '--no-progress'], env);
    expect(run.code, run.stderr).to.equal(0);
    const below = ADDED.map(([, confidence, on]) => [null, confidence, on] as const);
    const matched = ADDED.filter(([, c]) => c !== null && c >= 0.999).length;
    expect({ ...JSON.parse(run.stdout), seconds: 0 }).to.deep.include({ rows: 8, matched, below_threshold: 5 - matched, no_candidate: 1, refused: 2 });
    expect(await readFile(out, 'utf8')).to.equal([HEADER, ...expectedRows(ADDED.map((a, i) => (a[1] !== null && a[1] >= 0.999 ? a : below[i]!))).map(csvLine)].join('\n') + '\n');
  });

  it('maps columns by flags, whatever their headers', async () => {
    const odd = path.join(dir, 'odd.csv');
    await writeFile(odd, 'x,where,pc\nLucky Bank,1134 Tremont Rd,02108\n');
    const out = path.join(dir, 'odd-matched.csv');
    const run = await placedata(['match', odd, '--out', out, '--name-column', 'X', '--address-column', 'where', '--postal-column', 'pc', '--json', '--no-progress'], env);
    expect(run.code, run.stderr).to.equal(0);
    expect(JSON.parse(run.stdout).columns).to.deep.equal({ location_name: 'x', street_address: 'where', postal_code: 'pc' });
    expect(await readFile(out, 'utf8')).to.equal(`x,where,pc,placekey,confidence,matched_on\nLucky Bank,1134 Tremont Rd,02108,${FLAGGED.join(',')}\n`);
  });

  it('refuses with a stable code, exit 2 and a clear message: missing or unreadable input, unknown columns, an existing output, no version', async () => {
    const out = path.join(dir, 'refused.csv');
    const notParquet = path.join(dir, 'text.parquet');
    await writeFile(notParquet, 'a,b\n1,2\n');
    const noQuery = path.join(dir, 'no-query.csv');
    await writeFile(noQuery, 'id,colour\n1,red\n');
    const matchedBefore = path.join(dir, 'has-placekey.csv');
    await writeFile(matchedBefore, 'name,zip,PlaceKey\nLucky Bank,02108,x\n');
    const existing = path.join(dir, 'exists.csv');
    await writeFile(existing, 'keep me\n');
    const cases: [string[], Record<string, string>, string][] = [
      [['match', path.join(dir, 'absent.csv'), '--out', out], env, `error INPUT_NOT_FOUND: no such file: ${path.join(dir, 'absent.csv')}\n`],
      [['match', notParquet, '--out', out], env, `error BAD_INPUT: cannot read ${notParquet} as Parquet: Invalid Input Error: File '${notParquet}' too small to be a Parquet file\n`],
      [['match', input, '--out', out, '--city-column', 'Town'], env,
        'error BAD_INPUT: --city-column names "Town", which is not a column of the input (its columns: "Ref", "Store Name", "Street Address", "CITY", "State", "Zip Code", "Lat", "Lng", "rowid")\n'],
      [['match', noQuery, '--out', out], env, 'error BAD_INPUT: the input has none of the query columns (location_name, street_address, city, region, postal_code, iso_country_code, latitude, longitude, '
        + 'or name, address, state, zip, lat, lon, ...; or map them with --name-column, --address-column, --city-column, --region-column, --postal-column, --country-column, --latitude-column, --longitude-column); its columns: "id", "colour"\n'],
      [['match', matchedBefore, '--out', out], env, 'error BAD_INPUT: the input has a column "PlaceKey": the output adds placekey, confidence, matched_on; rename it first\n'],
      [['match', input, '--out', existing], env, `error OUTPUT_EXISTS: ${existing} exists; pass --force to replace it\n`],
      [['match', input, '--out', path.join(dir, 'matched.xlsx')], env, 'error BAD_REQUEST: --out must name a .csv, .csv.gz or .parquet file; got "matched.xlsx"\n'],
      [['match', path.join(dir, 'stores.txt'), '--out', out], env, 'error BAD_REQUEST: the input must be .csv, .csv.gz or .parquet; got "stores.txt"\n'],
      [['match', input, '--out', path.join(dir, 'no-such-folder', 'x.csv')], env, `error BAD_REQUEST: the folder of --out does not exist: ${path.join(dir, 'no-such-folder')}\n`],
      [['match', input, '--out', out], { DATA_DIR: path.join(dir, 'empty') }, 'error VERSION_NOT_FOUND: no version is in service: load a drop first (placedata load)\n'],
      [['match', input, '--out', out, '--min-confidence', '1.5'], env, 'error: option \'--min-confidence <x>\' argument \'1.5\' is invalid. It must be a number from 0 to 1.\n(run with --help for usage)\n'],
      [['match', input], env, 'error: required option \'--out <file>\' not specified\n(run with --help for usage)\n'],
    ];
    for (const [args, e, stderr] of cases) {
      const run = await placedata([...args, '--no-progress'], e);
      expect({ code: run.code, stderr: run.stderr, stdout: run.stdout }, args.join(' ')).to.deep.equal({ code: 2, stderr, stdout: '' });
    }
    expect(await readFile(existing, 'utf8')).to.equal('keep me\n');
    const json = await placedata(['match', path.join(dir, 'absent.csv'), '--out', out, '--json'], env);
    expect([json.code, JSON.parse(json.stderr)]).to.deep.equal([2, { error: { code: 'INPUT_NOT_FOUND', message: `no such file: ${path.join(dir, 'absent.csv')}` } }]);
    // --force replaces it.
    const forced = await placedata(['match', input, '--out', existing, '--force', '--no-progress'], env);
    expect(forced.code, forced.stderr).to.equal(0);
    expect(await readFile(existing, 'utf8')).to.equal([HEADER, ...expectedRows().map(csvLine)].join('\n') + '\n');
    expect((await readdir(dir)).filter((f) => f.endsWith('.part'))).to.deep.equal([]);
    expect((await readdir(path.join(dir, 'data', '.tmp')).catch(() => [])).filter((f) => f.startsWith('match-'))).to.deep.equal([]);
  });
});

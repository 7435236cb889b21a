import { expect } from 'chai';
import { mkdir, readdir } from 'node:fs/promises';
import { Writable } from 'node:stream';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { readCsv } from '../helpers/demo-fixture.ts';
import { errorBody, getExport, parseExportCsv, parseNdjson } from '../helpers/export-client.ts';
import { CORE_EXTRA_FIELDS, WEEKLY_EXTRA_FIELDS } from '../helpers/full-drop.ts';
import { CORE_FIELDS, postGraphql, WEEKLY_FIELDS } from '../helpers/graphql-client.ts';
import { MONTHLY_HEADER, MONTHLY_ROWS_1, writeMonthlyDrop } from '../helpers/monthly-drop.ts';
import { readParquet } from '../helpers/read-parquet.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';
import { CORE_HEADER, KEYS, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';

type Doc = Record<string, unknown>;

/**
 * The delivered columns of the generated drop's weekly patterns, as the export names and orders
 * them (the spec's first). A week's rows come from the file that holds that week, with the columns
 * its drop delivered: the tricky drop's week, inherited, has its own (TRICKY_WEEKLY_HEADER).
 */
const GEN_WEEKLY_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'date_range_start', 'date_range_end', 'raw_visit_counts',
  'raw_visitor_counts', 'visits_by_day', 'parent_placekey', 'postal_code', 'iso_country_code', 'safegraph_brand_ids', 'brands', 'visits_by_each_hour',
  'poi_cbg', 'visitor_home_cbgs', 'visitor_home_aggregation', 'visitor_daytime_cbgs', 'visitor_country_of_origin', 'distance_from_home', 'median_dwell',
  'bucketed_dwell_times', 'related_same_day_brand', 'related_same_week_brand', 'device_type', 'normalized_visits_by_state_scaling',
  'normalized_visits_by_region_naics_visits', 'normalized_visits_by_region_naics_visitors', 'normalized_visits_by_total_visits', 'normalized_visits_by_total_visitors'];

/** The tricky drop's weekly columns (the week the generated version inherits from it). */
const TRICKY_WEEKLY_HEADER = [...WEEKLY_HEADER, 'visitor_home_cbgs', 'distance_from_home', 'median_dwell', 'store_note'];

/**
 * The delivered columns of the monthly patterns of the generated drop, as the export names and
 * orders them (the hand-written drop's months, inherited, have that drop's columns).
 */
const GEN_MONTHLY_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'date_range_start', 'date_range_end', 'raw_visit_counts',
  'raw_visitor_counts', 'visits_by_day', 'parent_placekey', 'postal_code', 'iso_country_code', 'safegraph_brand_ids', 'brands', 'poi_cbg', 'visitor_home_cbgs',
  'visitor_home_aggregation', 'visitor_daytime_cbgs', 'visitor_country_of_origin', 'distance_from_home', 'median_dwell', 'bucketed_dwell_times',
  'related_same_day_brand', 'related_same_month_brand', 'popularity_by_hour', 'popularity_by_day', 'device_type', 'normalized_visits_by_state_scaling',
  'normalized_visits_by_region_naics_visits', 'normalized_visits_by_region_naics_visitors', 'normalized_visits_by_total_visits',
  'normalized_visits_by_total_visitors'];

const GEN_CORE_HEADER = ['placekey', 'location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'naics_code', 'top_category',
  'sub_category', 'parent_placekey', 'safegraph_brand_ids', 'brands', 'latitude', 'longitude', 'phone_number', 'open_hours', 'category_tags', 'opened_on',
  'closed_on', 'tracking_closed_since', 'geometry_type'];

/** Columns stored as text: their CSV field is the text itself. Every other field is JSON text. */
const TEXT_COLUMNS = new Set(['placekey', 'location_name', 'street_address', 'city', 'region', 'date_range_start', 'date_range_end', 'parent_placekey',
  'postal_code', 'iso_country_code', 'poi_cbg', 'top_category', 'sub_category', 'phone_number', 'open_hours', 'opened_on', 'closed_on',
  'tracking_closed_since', 'geometry_type', 'store_note', 'shop_note']);

/** Every field GraphQL has for each product. */
const WEEKLY_ALL = `placekey ${WEEKLY_FIELDS} ${WEEKLY_EXTRA_FIELDS}`;
const CORE_ALL = `placekey ${CORE_FIELDS} ${CORE_EXTRA_FIELDS}`;

/**
 * A GraphQL product document as the export writes it: the delivered columns by name, `brands`
 * as the delivered list of names (GraphQL pairs it with the ids), and the columns GraphQL puts
 * in `other_columns` at the top level.
 */
function asExported(doc: Doc, header: readonly string[]): Doc {
  const out: Doc = {};
  for (const column of header) {
    if (column === 'brands') out[column] = doc['brands'] === null ? null : (doc['brands'] as { brand_name: string }[]).map((b) => b.brand_name);
    else if (column in doc) out[column] = doc[column];
    else out[column] = (doc['other_columns'] as Doc)[column];
  }
  return out;
}

/** A CSV record read back: text columns as they are, the rest parsed from their JSON text. */
function csvRecord(header: readonly string[], fields: readonly (string | null)[]): Doc {
  expect(fields).to.have.length(header.length);
  return Object.fromEntries(header.map((column, i) => {
    const field = fields[i]!;
    return [column, field === null || TEXT_COLUMNS.has(column) ? field : JSON.parse(field)];
  }));
}

const byPlacekey = (a: Doc, b: Doc) => String(a['placekey']).localeCompare(String(b['placekey']));

/** What GraphQL answers for these Placekeys (batches of 1000): the product selected by `field`, for those that have it. */
async function graphqlDocs(url: string, placekeys: readonly string[], selection: string, headers: Record<string, string> = {}): Promise<Doc[]> {
  const docs: Doc[] = [];
  for (let i = 0; i < placekeys.length; i += 1000) {
    const res = await postGraphql(url, { query: `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { p: ${selection} } }`, variables: { k: placekeys.slice(i, i + 1000) } }, headers);
    expect(res.body.errors, JSON.stringify(res.body.errors)).to.equal(undefined);
    for (const entry of res.body.data.batch_lookup as { p: Doc | null }[]) if (entry.p) docs.push(entry.p);
  }
  return docs.sort(byPlacekey);
}

/** A small drop with text that CSV must quote (quotes, commas, CR/LF, an empty string), Unicode, and a column the catalog does not know. */
async function writeTrickyDrop(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeCsv(path.join(dir, 'core.csv'), [...CORE_HEADER, 'store_note'], [
    [KEYS[0]!, 'Joe\'s "Best", Diner', '1 Main St, Unit 2', 'Springfield', 'MA', '01020', 'US', 722511, 'Restaurants and Other Eating Places', 'Full-Service Restaurants', 'line one\nline two'],
    [KEYS[1]!, 'Café ☕ Zoë', '2 Elm St', 'Trenton', 'NJ', '08608', 'US', 722511, 'Restaurants and Other Eating Places', 'Full-Service Restaurants', null],
  ]);
  await writeCsv(path.join(dir, 'weekly.csv'), [...WEEKLY_HEADER, 'visitor_home_cbgs', 'distance_from_home', 'median_dwell', 'store_note'], [
    [KEYS[0]!, 'Joe\'s "Best", Diner', '1 Main St, Unit 2', 'Springfield', 'MA', '2022-04-18T00:00:00-04:00', '2022-04-25T00:00:00-04:00', 70, 40, '[10,10,10,10,10,10,10]',
      '{"010010201001":4,"250138011001":7}', 5123.5, 33, 'a,b "c"\r\nd'],
    [KEYS[1]!, 'Café ☕ Zoë', '2 Elm St', 'Trenton', 'NJ', '2022-04-18T00:00:00-04:00', '2022-04-25T00:00:00-04:00', 7, 7, '[1,1,1,1,1,1,1]',
      '{}', 0.000001, null, null],
    [KEYS[2]!, 'Corner', '3 Oak St', 'Hartford', 'CT', '2022-04-18T00:00:00-05:30', '2022-04-25T00:00:00-05:30', 0, 0, '[0,0,0,0,0,0,0]',
      null, null, 12.25, 'x'],
  ]);
}

describe('bulk export: GET /v1/export/<product>', function () {
  this.timeout(120_000);
  let dir: string;
  let server: RunningServer;
  let genLabel: string;
  let trickyLabel: string;
  let placekeys: string[];

  before(async () => {
    dir = await makeTempDir('export');
    const config = testConfig(path.join(dir, 'data'));
    const settings = buildSettingsOf(config);
    await writeTrickyDrop(path.join(dir, 'tricky'));
    trickyLabel = (await loadDrop({ dataDir: config.dataDir, inputs: [path.join(dir, 'tricky')], month: '2022-04', settings })).label;
    const files = await generateDrop({ pois: 4000, weeks: 2, out: path.join(dir, 'gen'), format: 'csv.gz', seed: 11 });
    // Built last, so it is the version served to requests that pin none (an older release than
    // the tricky drop's, published on purpose).
    genLabel = (await loadDrop({ dataDir: config.dataDir, inputs: [path.join(dir, 'gen')], month: '2022-01', settings, allowOlder: true })).label;
    placekeys = (await readCsv(files.find((f) => path.basename(f).startsWith('core'))!)).map((r) => r['placekey']!);
    server = await startServer(config, createLogger('silent', 'test'));
  });
  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  it('CSV: every weekly row of the week exactly once, each value what GraphQL returns for it', async () => {
    const res = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-01-05&format=csv');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8; header=present');
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="weekly_patterns_2022-01-03.csv"');
    expect(res.headers.get('x-placedata-version')).to.equal(genLabel);
    expect(res.headers.get('x-placedata-week')).to.equal('2022-01-03');
    expect(res.text.endsWith('\r\n')).to.equal(true);
    const { header, records } = parseExportCsv(res.text);
    expect(header).to.deep.equal(GEN_WEEKLY_HEADER);
    const expected = (await graphqlDocs(server.url, placekeys, `placedata_weekly_patterns(date: "2022-01-03") { ${WEEKLY_ALL} }`)).map((d) => asExported(d, header));
    expect(expected.length).to.be.greaterThan(3000); // most generated POIs have patterns that week
    expect(records.map((r) => csvRecord(header, r)).sort(byPlacekey)).to.deep.equal(expected);
  });

  it('NDJSON: the same rows as JSON objects, keys in column order, maps as objects and lists as lists', async () => {
    const res = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-01-16&format=ndjson');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="weekly_patterns_2022-01-10.ndjson"');
    expect(res.headers.get('x-placedata-week')).to.equal('2022-01-10');
    const rows = parseNdjson(res.text);
    for (const row of rows) expect(Object.keys(row)).to.deep.equal(GEN_WEEKLY_HEADER);
    const expected = (await graphqlDocs(server.url, placekeys, `placedata_weekly_patterns(date: "2022-01-10") { ${WEEKLY_ALL} }`)).map((d) => asExported(d, GEN_WEEKLY_HEADER));
    expect(rows.sort(byPlacekey)).to.deep.equal(expected);
  });

  it('without a date: the newest week of the version (here the week inherited from the version before, with its file\'s columns), as placedata_weekly_patterns answers', async () => {
    const latest = await getExport(server.url, '/v1/export/weekly_patterns?format=ndjson');
    const dated = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-04-20&format=ndjson');
    expect([latest.status, latest.headers.get('x-placedata-week'), latest.headers.get('x-placedata-version')]).to.deep.equal([200, '2022-04-18', genLabel]);
    expect(latest.text).to.equal(dated.text);
    const expected = await graphqlDocs(server.url, [KEYS[0]!, KEYS[1]!, KEYS[2]!], `placedata_weekly_patterns { ${WEEKLY_ALL} }`);
    expect(expected).to.have.length(3);
    for (const row of parseNdjson(latest.text)) expect(Object.keys(row)).to.deep.equal(TRICKY_WEEKLY_HEADER);
    expect(parseNdjson(latest.text).sort(byPlacekey)).to.deep.equal(expected.map((d) => asExported(d, TRICKY_WEEKLY_HEADER)));
  });

  it('region: only the rows whose region is the one asked for; a region with no rows gives the header alone', async () => {
    const res = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-01-03&region=MA');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="weekly_patterns_2022-01-03_MA.csv"');
    const { header, records } = parseExportCsv(res.text);
    const expected = (await graphqlDocs(server.url, placekeys, `placedata_weekly_patterns(date: "2022-01-03") { ${WEEKLY_ALL} }`))
      .filter((d) => d['region'] === 'MA').map((d) => asExported(d, header));
    expect(expected.length).to.be.greaterThan(100);
    expect(records.map((r) => csvRecord(header, r)).sort(byPlacekey)).to.deep.equal(expected);

    const none = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-01-03&region=ZZ');
    expect([none.status, none.text]).to.deep.equal([200, GEN_WEEKLY_HEADER.join(',') + '\r\n']);
    const noneJson = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-01-03&region=ZZ&format=ndjson');
    expect([noneJson.status, noneJson.text]).to.deep.equal([200, '']);
  });

  it('core: every POI once (optionally one region), each value what GraphQL returns for it', async () => {
    const res = await getExport(server.url, '/v1/export/core?format=ndjson');
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-placedata-week')).to.equal(null);
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="core.ndjson"');
    const expected = (await graphqlDocs(server.url, placekeys, `placedata_core { ${CORE_ALL} }`)).map((d) => asExported(d, GEN_CORE_HEADER));
    expect(expected).to.have.length(4000);
    const rows = parseNdjson(res.text);
    for (const row of rows) expect(Object.keys(row)).to.deep.equal(GEN_CORE_HEADER);
    expect(rows.sort(byPlacekey)).to.deep.equal(expected);

    const csv = await getExport(server.url, '/v1/export/core?region=CT');
    const { header, records } = parseExportCsv(csv.text);
    expect(header).to.deep.equal(GEN_CORE_HEADER);
    const inCt = expected.filter((d) => d['region'] === 'CT');
    expect(inCt.length).to.be.greaterThan(100);
    expect(records.map((r) => csvRecord(header, r)).sort(byPlacekey)).to.deep.equal(inCt);
  });

  it('pinned with x-placedata-version: that version answers, and the response names it; quoting, Unicode and NULL exactly', async () => {
    const pin = { 'x-placedata-version': trickyLabel };
    const csv = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-04-24', pin);
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('x-placedata-version')).to.equal(trickyLabel);
    // Storage (delivery) order; CRLF records; text quoted only when it must be, lists and maps
    // always; numbers as DuckDB's JSON writes them; NULL an empty unquoted field.
    expect(csv.text).to.equal([
      'placekey,location_name,street_address,city,region,date_range_start,date_range_end,raw_visit_counts,raw_visitor_counts,visits_by_day,visitor_home_cbgs,distance_from_home,median_dwell,store_note',
      `${KEYS[0]},"Joe's ""Best"", Diner","1 Main St, Unit 2",Springfield,MA,2022-04-18T00:00:00-04:00,2022-04-25T00:00:00-04:00,70,40,"[10,10,10,10,10,10,10]","{""010010201001"":4,""250138011001"":7}",5123.5,33.0,"a,b ""c""\r\nd"`,
      `${KEYS[1]},Café ☕ Zoë,2 Elm St,Trenton,NJ,2022-04-18T00:00:00-04:00,2022-04-25T00:00:00-04:00,7,7,"[1,1,1,1,1,1,1]","{}",0.000001,,`,
      `${KEYS[2]},Corner,3 Oak St,Hartford,CT,2022-04-18T00:00:00-05:30,2022-04-25T00:00:00-05:30,0,0,"[0,0,0,0,0,0,0]",,,12.25,x`,
      ''].join('\r\n'));
    const ndjson = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-04-18&format=ndjson', pin);
    expect(ndjson.headers.get('x-placedata-version')).to.equal(trickyLabel);
    const rows = parseNdjson(ndjson.text);
    const header = parseExportCsv(csv.text).header;
    const expected = await graphqlDocs(server.url, [KEYS[0]!, KEYS[1]!, KEYS[2]!], `placedata_weekly_patterns(date: "2022-04-18") { ${WEEKLY_ALL} }`, pin);
    expect(rows.sort(byPlacekey)).to.deep.equal(expected.map((d) => asExported(d, header)));
    expect(parseExportCsv(csv.text).records.map((r) => csvRecord(header, r)).sort(byPlacekey)).to.deep.equal(expected.map((d) => asExported(d, header)));
    // The unpinned export answers from the current version.
    expect((await getExport(server.url, '/v1/export/core?region=NJ')).headers.get('x-placedata-version')).to.equal(genLabel);
  });

  it('Parquet: the same rows read back by DuckDB, each column with its own type; a region, a pinned version, Unicode and NULL', async () => {
    const get = async (url: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${server.url}${url}`, { headers: { apikey: TEST_KEY, ...headers } });
      return { res, bytes: Buffer.from(await res.arrayBuffer()) };
    };
    const { res, bytes } = await get('/v1/export/weekly_patterns?date=2022-01-16&format=parquet');
    expect([res.status, res.headers.get('content-type'), res.headers.get('content-disposition'), res.headers.get('content-length'), res.headers.get('x-placedata-week')])
      .to.deep.equal([200, 'application/vnd.apache.parquet', 'attachment; filename="weekly_patterns_2022-01-10.parquet"', String(bytes.length), '2022-01-10']);
    const read = await readParquet(bytes, path.join(dir, 'weekly.parquet'));
    expect(read.columns.map(([c]) => c)).to.deep.equal(GEN_WEEKLY_HEADER);
    expect(Object.fromEntries(read.columns.filter(([c]) => ['raw_visit_counts', 'visits_by_day', 'visitor_home_cbgs', 'median_dwell'].includes(c))))
      .to.deep.equal({ raw_visit_counts: 'INTEGER', visits_by_day: 'INTEGER[]', visitor_home_cbgs: 'MAP(VARCHAR, INTEGER)', median_dwell: 'DOUBLE' });
    const expected = (await graphqlDocs(server.url, placekeys, `placedata_weekly_patterns(date: "2022-01-10") { ${WEEKLY_ALL} }`)).map((d) => asExported(d, GEN_WEEKLY_HEADER));
    expect(read.rows.sort(byPlacekey)).to.deep.equal(expected);

    const core = await readParquet((await get('/v1/export/core?region=CT&format=parquet')).bytes, path.join(dir, 'core.parquet'));
    const coreExpected = (await graphqlDocs(server.url, placekeys, `placedata_core { ${CORE_ALL} }`)).map((d) => asExported(d, GEN_CORE_HEADER)).filter((d) => d['region'] === 'CT');
    expect(coreExpected.length).to.be.greaterThan(100);
    expect(core.rows.sort(byPlacekey)).to.deep.equal(coreExpected);

    const pin = { 'x-placedata-version': trickyLabel };
    const tricky = await get('/v1/export/weekly_patterns?date=2022-04-18&format=parquet', pin);
    expect(tricky.res.headers.get('x-placedata-version')).to.equal(trickyLabel);
    const rows = (await readParquet(tricky.bytes, path.join(dir, 'tricky.parquet'))).rows;
    const header = [...WEEKLY_HEADER, 'visitor_home_cbgs', 'distance_from_home', 'median_dwell', 'store_note'];
    const trickyExpected = await graphqlDocs(server.url, [KEYS[0]!, KEYS[1]!, KEYS[2]!], `placedata_weekly_patterns(date: "2022-04-18") { ${WEEKLY_ALL} }`, pin);
    expect(rows.sort(byPlacekey)).to.deep.equal(trickyExpected.map((d) => asExported(d, header)));
    // Nothing is left behind in the server's temp folder.
    expect(await readdir(path.join(dir, 'data', '.tmp')).catch(() => [])).to.deep.equal([]);
  });

  it('HEAD: the headers of the export, no rows', async () => {
    const res = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-01-03&format=ndjson', {}, 'HEAD');
    expect([res.status, res.text, res.headers.get('x-placedata-version'), res.headers.get('x-placedata-week')]).to.deep.equal([200, '', genLabel, '2022-01-03']);
  });

  it('refuses with a code and a message, before reading any data', async () => {
    const queriesBefore = server.store.current!.queryCount;
    const cases: [string, Record<string, string>, number, string, string, string?][] = [
      ['/v1/export/weekly_patterns', { apikey: '' }, 401, 'UNAUTHENTICATED', 'No API key found in request'],
      ['/v1/export/weekly_patterns', { apikey: 'not-a-key' }, 401, 'UNAUTHENTICATED', 'Invalid authentication credentials'],
      ['/v1/export/weekly_patterns?date=2022-02-30', {}, 400, 'BAD_DATE', 'date must be a calendar date written YYYY-MM-DD; got "2022-02-30"'],
      ['/v1/export/weekly_patterns?date=yesterday', {}, 400, 'BAD_DATE', 'date must be a calendar date written YYYY-MM-DD; got "yesterday"'],
      ['/v1/export/weekly_patterns?date=2022-01-03&date=2022-01-10', {}, 400, 'BAD_REQUEST', 'date may be given once'],
      ['/v1/export/weekly_patterns?region=', {}, 400, 'BAD_FILTER', 'region must be 1 to 200 characters'],
      [`/v1/export/weekly_patterns?region=${'M'.repeat(201)}`, {}, 400, 'BAD_FILTER', 'region must be 1 to 200 characters'],
      ['/v1/export/weekly_patterns?format=xml', {}, 400, 'BAD_REQUEST', 'format must be csv, ndjson or parquet; got "xml"'],
      ['/v1/export/weekly_patterns?regoin=MA', {}, 400, 'BAD_REQUEST', 'Unknown parameter "regoin": /v1/export/weekly_patterns takes date, region, format'],
      ['/v1/export/core?date=2022-01-03', {}, 400, 'BAD_REQUEST', 'Unknown parameter "date": /v1/export/core takes region, format'],
      ['/v1/export/visits', {}, 404, 'NOT_FOUND', 'No export named "visits": GET /v1/export/weekly_patterns, /v1/export/monthly_patterns or /v1/export/core'],
      ['/v1/export/weekly_patterns', { 'x-placedata-version': '123__2022_01' }, 404, 'VERSION_NOT_FOUND', 'Dataset version "123__2022_01" is not retained (see dataset_versions)'],
    ];
    for (const [url, headers, status, code, message] of cases) {
      const res = await getExport(server.url, url, headers);
      expect([url, res.status, errorBody(res)]).to.deep.equal([url, status, { errors: [{ message, extensions: { code } }] }]);
    }
    const post = await getExport(server.url, '/v1/export/weekly_patterns', {}, 'POST');
    expect([post.status, post.headers.get('allow'), errorBody(post)]).to.deep.equal([405, 'GET, HEAD', { errors: [{ message: 'Method POST is not allowed: use GET', extensions: { code: 'BAD_REQUEST' } }] }]);
    expect(server.store.current!.queryCount).to.equal(queriesBefore);
    // A week the version does not hold: 404, naming what it holds (a region with no rows is an empty export, not this).
    const week = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-05-02');
    expect([week.status, errorBody(week)]).to.deep.equal([404, { errors: [{
      message: `Dataset version ${genLabel} has no weekly patterns for the week of 2022-05-02: it holds 3 weeks, from 2022-01-03 to 2022-04-18 (weeks named by their Monday)`,
      extensions: { code: 'WEEK_NOT_FOUND' } }] }]);
  });
});

/** Every field GraphQL has for monthly patterns, from the schema itself (`brands` as its objects). */
async function monthlyAll(url: string): Promise<string> {
  const res = await postGraphql(url, { query: '{ __type(name: "MonthlyPatterns") { fields { name } } }' });
  const fields = res.body.data.__type.fields as { name: string }[];
  return fields.map((f) => (f.name === 'brands' ? 'brands { brand_id brand_name }' : f.name)).join(' ');
}

describe('bulk export of monthly patterns: GET /v1/export/monthly_patterns', function () {
  this.timeout(120_000);
  let dir: string;
  let server: RunningServer;
  let handLabel: string;
  let genLabel: string;
  let placekeys: string[];
  let all: string;

  before(async () => {
    dir = await makeTempDir('export-monthly');
    const config = testConfig(path.join(dir, 'data'));
    const settings = buildSettingsOf(config);
    // The hand-written monthly drop (2022-02 to 04 and 2024-02, a delivered column of its own), then a generated one of 2022-01 and 02.
    handLabel = (await loadDrop({ dataDir: config.dataDir, inputs: await writeMonthlyDrop(await makeTempDir('export-monthly-hand')), month: null, settings })).label;
    const files = await generateDrop({ pois: 3000, weeks: 1, months: 2, out: path.join(dir, 'gen'), format: 'csv.gz', seed: 13 });
    // An older release than the hand-written drop's (2024-02, its newest month), published on purpose.
    genLabel = (await loadDrop({ dataDir: config.dataDir, inputs: [path.join(dir, 'gen')], month: '2022-01', settings, allowOlder: true })).label;
    placekeys = [...(await readCsv(files.find((f) => path.basename(f).startsWith('core'))!)).map((r) => r['placekey']!), KEYS[0]!, KEYS[1]!, KEYS[2]!, KEYS[3]!];
    server = await startServer(config, createLogger('silent', 'test'));
    all = await monthlyAll(server.url);
  });
  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  it('CSV: every monthly row of the month holding date exactly once, each value what placedata_monthly_patterns returns for it', async () => {
    const res = await getExport(server.url, '/v1/export/monthly_patterns?date=2022-01-31&format=csv');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8; header=present');
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="monthly_patterns_2022-01-01.csv"');
    expect([res.headers.get('x-placedata-version'), res.headers.get('x-placedata-month'), res.headers.get('x-placedata-week')]).to.deep.equal([genLabel, '2022-01-01', null]);
    const { header, records } = parseExportCsv(res.text);
    expect(header).to.deep.equal(GEN_MONTHLY_HEADER);
    const expected = (await graphqlDocs(server.url, placekeys, `placedata_monthly_patterns(date: "2022-01-01") { ${all} }`)).map((d) => asExported(d, header));
    expect(expected.length).to.be.greaterThan(2000);
    expect(records.map((r) => csvRecord(header, r)).sort(byPlacekey)).to.deep.equal(expected);
  });

  it('NDJSON with region: the month\'s rows of that region, keys in column order, as GraphQL returns them; a region with no rows is empty', async () => {
    const res = await getExport(server.url, '/v1/export/monthly_patterns?date=2022-02-01&region=MA&format=ndjson');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="monthly_patterns_2022-02-01_MA.ndjson"');
    expect(res.headers.get('x-placedata-month')).to.equal('2022-02-01');
    const rows = parseNdjson(res.text);
    for (const row of rows) expect(Object.keys(row)).to.deep.equal(GEN_MONTHLY_HEADER);
    // The generated drop delivers February, so it replaces the hand-written drop's February (KEYS[0]) entirely.
    const expected = (await graphqlDocs(server.url, placekeys, `placedata_monthly_patterns(date: "2022-02-01") { ${all} }`))
      .filter((d) => d['region'] === 'MA').map((d) => asExported(d, GEN_MONTHLY_HEADER));
    expect(expected.length).to.be.greaterThan(100);
    expect(rows.sort(byPlacekey)).to.deep.equal(expected);
    const none = await getExport(server.url, '/v1/export/monthly_patterns?date=2022-02-01&region=ZZ');
    expect([none.status, none.text]).to.deep.equal([200, GEN_MONTHLY_HEADER.join(',') + '\r\n']);
  });

  it('without a date: the newest month (inherited from the version before, with its file\'s columns), as placedata_monthly_patterns answers without one', async () => {
    const latest = await getExport(server.url, '/v1/export/monthly_patterns');
    expect([latest.status, latest.headers.get('x-placedata-month'), latest.headers.get('content-disposition')])
      .to.deep.equal([200, '2024-02-01', 'attachment; filename="monthly_patterns_2024-02-01.csv"']);
    expect(latest.text).to.equal((await getExport(server.url, '/v1/export/monthly_patterns?date=2024-02-29')).text);
    const row = MONTHLY_ROWS_1[3]!;
    const at = (name: string) => row[MONTHLY_HEADER.indexOf(name)];
    // Only the hand-written row holds 2024-02, in the file of the drop that delivered it: that drop's columns.
    const fields = MONTHLY_HEADER.map((c) => {
      const v = at(c);
      if (c === 'visits_by_day' || c === 'popularity_by_hour') return `"${String(v)}"`;
      if (c === 'visitor_home_cbgs' || c === 'related_same_month_brand' || c === 'popularity_by_day') return `"${String(v).replace(/"/g, '""')}"`;
      return typeof v === 'number' && c === 'median_dwell' ? v.toFixed(1) : String(v);
    });
    expect(latest.text).to.equal(`${MONTHLY_HEADER.join(',')}\r\n${fields.join(',')}\r\n`);
    const expected = await graphqlDocs(server.url, placekeys, `placedata_monthly_patterns { ${all} }`);
    expect(expected).to.have.length(1);
    expect(parseExportCsv(latest.text).records.map((r) => csvRecord(MONTHLY_HEADER, r))).to.deep.equal(expected.map((d) => asExported(d, MONTHLY_HEADER)));
  });

  it('pinned with x-placedata-version: that version\'s month, named in the response', async () => {
    const pin = { 'x-placedata-version': handLabel };
    const res = await getExport(server.url, '/v1/export/monthly_patterns?date=2022-03-13&format=ndjson', pin);
    expect([res.status, res.headers.get('x-placedata-version'), res.headers.get('x-placedata-month')]).to.deep.equal([200, handLabel, '2022-03-01']);
    const rows = parseNdjson(res.text);
    expect(rows.map((r) => r['placekey'])).to.deep.equal([KEYS[0], KEYS[1]]); // storage (delivery) order
    const expected = await graphqlDocs(server.url, [KEYS[0]!, KEYS[1]!, KEYS[2]!, KEYS[3]!], `placedata_monthly_patterns(date: "2022-03-13") { ${all} }`, pin);
    expect(rows.sort(byPlacekey)).to.deep.equal(expected.map((d) => asExported(d, MONTHLY_HEADER)));
  });

  it('HEAD: the headers of the export, no rows', async () => {
    const res = await getExport(server.url, '/v1/export/monthly_patterns?date=2022-01-03&format=ndjson', {}, 'HEAD');
    expect([res.status, res.text, res.headers.get('x-placedata-version'), res.headers.get('x-placedata-month')]).to.deep.equal([200, '', genLabel, '2022-01-01']);
  });

  it('refuses with a code and a message, before reading any data; a month the version does not hold is 404 MONTH_NOT_FOUND', async () => {
    const queriesBefore = server.store.current!.queryCount;
    const cases: [string, Record<string, string>, number, string, string][] = [
      ['/v1/export/monthly_patterns', { apikey: 'not-a-key' }, 401, 'UNAUTHENTICATED', 'Invalid authentication credentials'],
      ['/v1/export/monthly_patterns?date=2022-02-30', {}, 400, 'BAD_DATE', 'date must be a calendar date written YYYY-MM-DD; got "2022-02-30"'],
      ['/v1/export/monthly_patterns?date=2022-02', {}, 400, 'BAD_DATE', 'date must be a calendar date written YYYY-MM-DD; got "2022-02"'],
      ['/v1/export/monthly_patterns?date=2022-01-03&date=2022-02-03', {}, 400, 'BAD_REQUEST', 'date may be given once'],
      ['/v1/export/monthly_patterns?region=', {}, 400, 'BAD_FILTER', 'region must be 1 to 200 characters'],
      ['/v1/export/monthly_patterns?format=arrow', {}, 400, 'BAD_REQUEST', 'format must be csv, ndjson or parquet; got "arrow"'],
      ['/v1/export/monthly_patterns?month=2022-01', {}, 400, 'BAD_REQUEST', 'Unknown parameter "month": /v1/export/monthly_patterns takes date, region, format'],
      ['/v1/export/monthly', {}, 404, 'NOT_FOUND', 'No export named "monthly": GET /v1/export/weekly_patterns, /v1/export/monthly_patterns or /v1/export/core'],
      ['/v1/export/monthly_patterns', { 'x-placedata-version': '123__2022_01' }, 404, 'VERSION_NOT_FOUND', 'Dataset version "123__2022_01" is not retained (see dataset_versions)'],
    ];
    for (const [url, headers, status, code, message] of cases) {
      const res = await getExport(server.url, url, headers);
      expect([url, res.status, errorBody(res)]).to.deep.equal([url, status, { errors: [{ message, extensions: { code } }] }]);
    }
    expect(server.store.current!.queryCount).to.equal(queriesBefore);
    const month = await getExport(server.url, '/v1/export/monthly_patterns?date=2023-06-15');
    expect([month.status, errorBody(month)]).to.deep.equal([404, { errors: [{
      message: `Dataset version ${genLabel} has no monthly patterns for the month of 2023-06-01: it holds 5 months, from 2022-01-01 to 2024-02-01 (months named by their 1st)`,
      extensions: { code: 'MONTH_NOT_FOUND' } }] }]);
    const pinned = await getExport(server.url, '/v1/export/monthly_patterns?date=2022-01-01', { 'x-placedata-version': handLabel });
    expect([pinned.status, errorBody(pinned)]).to.deep.equal([404, { errors: [{
      message: `Dataset version ${handLabel} has no monthly patterns for the month of 2022-01-01: it holds 4 months, from 2022-02-01 to 2024-02-01 (months named by their 1st)`,
      extensions: { code: 'MONTH_NOT_FOUND' } }] }]);
  });
});

/** Reads a streaming export's first chunk and leaves the rest unread (the server then waits on backpressure). */
async function startReading(url: string, pathAndQuery: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(`${url}${pathAndQuery}`, { headers: { apikey: TEST_KEY, ...headers }, signal: controller.signal });
  const reader = res.body!.getReader();
  const first = await reader.read();
  return {
    res, firstBytes: first.value!.length, abort: () => controller.abort(),
    /** The rest of the body, read to its end, with the first chunk. */
    rest: async () => {
      const parts = [Buffer.from(first.value!)];
      for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(Buffer.from(r.value));
      return Buffer.concat(parts).toString('utf8');
    },
  };
}

/** Where two long texts first differ (a 25 MB export is too long for chai's own diff). */
function differenceOf(actual: string, expected: string): string {
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i++;
  const line = actual.slice(0, i).split('\n').length;
  return `${actual.length} characters against ${expected.length}; first difference at character ${i} (line ${line}): ${JSON.stringify(actual.slice(i, i + 120))} where ${JSON.stringify(expected.slice(i, i + 120))} was expected`;
}

async function until(check: () => boolean | Promise<boolean>, what: string, boundMs = 10_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('bulk export: a stream\'s lifetime (20,000 POIs: larger than the socket buffers)', function () {
  this.timeout(180_000);
  let dir: string;
  let dataDir: string;
  let server: RunningServer;
  /** The whole NDJSON export of the week, read by a client that keeps up. */
  let whole: string;
  /** The server's log lines. */
  const logged: Record<string, unknown>[] = [];
  const exportLogs = () => logged.filter((l) => l['msg'] === 'export');

  before(async () => {
    dir = await makeTempDir('export-stream');
    await generateDrop({ pois: 20_000, weeks: 1, out: path.join(dir, 'gen'), format: 'csv.gz', seed: 5 });
    const config = testConfig(path.join(dir, 'data'), { EXPORT_CONCURRENCY: '1', POINTER_POLL_MS: '50' });
    dataDir = config.dataDir;
    await loadDrop({ dataDir, inputs: [path.join(dir, 'gen')], month: '2022-01', settings: buildSettingsOf(config) });
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => { logged.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } });
    server = await startServer(config, createLogger('info', 'test', sink));
    const res = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-01-03&format=ndjson');
    expect(res.status).to.equal(200);
    whole = res.text;
    expect(parseNdjson(whole).length).to.be.greaterThan(19_000);
    expect(whole.length).to.be.greaterThan(25_000_000);
  });
  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  it('a client that goes away mid-stream: the export stops, its slot is freed, the next export is whole', async () => {
    const reading = await startReading(server.url, '/v1/export/weekly_patterns?date=2022-01-03&format=ndjson');
    expect(reading.res.status).to.equal(200);
    // With one slot (EXPORT_CONCURRENCY=1), a second export is refused while this one waits on its client.
    const busy = await getExport(server.url, '/v1/export/core');
    expect([busy.status, busy.headers.get('retry-after'), errorBody(busy)]).to.deep.equal([503, '5', { errors: [{
      message: 'This server is already streaming 1 exports; try again shortly', extensions: { code: 'EXPORTS_BUSY' } }] }]);
    const logsBefore = exportLogs().length;
    reading.abort();
    // The server stops reading DuckDB and says so: far fewer rows than the week holds.
    await until(() => exportLogs().length > logsBefore, 'the export is logged');
    const ended = exportLogs().at(-1)!;
    expect(ended).to.include({ export: 'weekly_patterns', format: 'ndjson', outcome: 'client_closed' });
    expect(ended['rows']).to.be.below(parseNdjson(whole).length / 2);
    const next = await getExport(server.url, '/v1/export/weekly_patterns?date=2022-01-03&format=ndjson');
    expect(next.status).to.equal(200);
    expect(next.text === whole).to.equal(true);
    expect(exportLogs().at(-1)).to.include({ outcome: 'complete', rows: parseNdjson(whole).length, bytes: Buffer.byteLength(whole) });
    // GraphQL on the same version is unaffected.
    const gql = await postGraphql(server.url, { query: '{ dataset_versions { label current } }' });
    expect(gql.status).to.equal(200);
  });

  it('rate limits: a fixed EXPORT_COST per export, charged before it streams; a refusal while busy costs nothing', async () => {
    const limited = await startServer(testConfig(dataDir, { RATE_LIMIT_POINTS: '3500', EXPORT_COST: '1000', EXPORT_CONCURRENCY: '1' }), createLogger('silent', 'test'));
    try {
      const first = await getExport(limited.url, '/v1/export/core?region=MA');
      expect([first.status, first.headers.get('ratelimit-limit'), first.headers.get('ratelimit-remaining')]).to.deep.equal([200, '3500', '2500']);
      const reading = await startReading(limited.url, '/v1/export/weekly_patterns?format=ndjson');
      expect([reading.res.status, reading.res.headers.get('ratelimit-remaining')]).to.deep.equal([200, '1500']);
      const busy = await getExport(limited.url, '/v1/export/core');
      expect(busy.status).to.equal(503);
      reading.abort();
      let third = await getExport(limited.url, '/v1/export/core?region=NJ');
      await until(async () => third.status !== 503 || !(third = await getExport(limited.url, '/v1/export/core?region=NJ')), 'the slot is freed');
      expect([third.status, third.headers.get('ratelimit-remaining')]).to.deep.equal([200, '500']);
      const refused = await getExport(limited.url, '/v1/export/core?region=NJ');
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
      expect(errorBody(refused)).to.deep.equal({ errors: [{ message: 'Rate limit exceeded: this key may ask for 3500 Placekeys per 60 s', extensions: { code: 'RATE_LIMITED' } }] });
    } finally {
      await limited.close();
    }
    const tooDear = await startServer(testConfig(dataDir, { RATE_LIMIT_POINTS: '500', EXPORT_COST: '1000' }), createLogger('silent', 'test'));
    try {
      const res = await getExport(tooDear.url, '/v1/export/core');
      expect([res.status, res.headers.get('retry-after'), errorBody(res)]).to.deep.equal([429, null, { errors: [{
        message: 'An export costs 1000 points; the rate limit allows 500 per 60 s', extensions: { code: 'RATE_LIMITED' } }] }]);
    } finally {
      await tooDear.close();
    }
  });

  it('a client that stops reading for EXPORT_STALL_MS is cut off: a failed transfer, its slot freed', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done(); } });
    const strict = await startServer(testConfig(dataDir, { EXPORT_STALL_MS: '300', EXPORT_CONCURRENCY: '1' }), createLogger('info', 'test', sink));
    try {
      const reading = await startReading(strict.url, '/v1/export/weekly_patterns?date=2022-01-03&format=ndjson');
      await until(() => lines.some((l) => l['msg'] === 'export'), 'the export is logged');
      expect(lines.find((l) => l['msg'] === 'export')).to.include({ outcome: 'client_stalled' });
      let failure: unknown = null;
      await reading.rest().catch((err: unknown) => (failure = err));
      expect((failure as Error | null)?.message).to.equal('terminated');
      const next = await getExport(strict.url, '/v1/export/core?region=MA');
      expect(next.status).to.equal(200);
    } finally {
      await strict.close();
    }
  });

  it('a new version published mid-stream: the export ends whole from the version it began on, which closes only after it', async () => {
    const old = server.store.current!;
    // Uncompressed: gzipped, the 25 MB fit the socket buffers, and a slow load (a busy machine)
    // let the whole export finish before the new version came, closing the old one early.
    const reading = await startReading(server.url, '/v1/export/weekly_patterns?date=2022-01-03&format=ndjson', { 'accept-encoding': 'identity' });
    expect(reading.res.headers.get('x-placedata-version')).to.equal(old.label);
    const drop = path.join(dir, 'next');
    await mkdir(drop);
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [[KEYS[0]!, 'Next', '1 Main St', 'Springfield', 'MA', '01020', 'US', 722511, 'Restaurants and Other Eating Places', 'Full-Service Restaurants']]);
    const { label } = await loadDrop({ dataDir, inputs: [drop], month: '2022-02', settings: buildSettingsOf(testConfig(dataDir)) });
    await until(() => server.store.current?.label === label, 'the server serves the new version');
    expect(old.closed).to.equal(false); // retired, but the export still holds it
    const body = await reading.rest();
    expect(body === whole, differenceOf(body, whole)).to.equal(true);
    await until(() => old.closed, 'the old version closes');
  });
});

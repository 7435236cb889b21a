import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { addDays, monthOf, poiOf, weekOf, type SyntheticPoi } from '../../tools/synthetic-places.ts';
import { parseExportCsv, parseNdjson } from '../helpers/export-client.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { readParquet } from '../helpers/read-parquet.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, TEST_KEY, testConfig } from '../helpers/test-config.ts';
import { CORE_HEADER, KEYS, WEEKLY_HEADER, weeklyRow, writeCsv } from '../helpers/write-csv.ts';

const SEED = 41;
const POIS = 120;
/** Two drops of two weeks each: the second version reads its first two weeks from the first drop's file. */
const DROPS = [{ firstWeek: '2022-01-03', month: '2022-01' }, { firstWeek: '2022-01-17', month: '2022-02' }] as const;
const WEEKS = ['2022-01-03', '2022-01-10', '2022-01-17', '2022-01-24'];

type Week = NonNullable<ReturnType<typeof weekOf>>;
interface Row { readonly p: SyntheticPoi; readonly week: string; readonly d: Week }

/** Every weekly row of the two drops, made by the generator's own functions (not read from the service). */
function allRows(): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < POIS; i++) {
    const p = poiOf(SEED, i);
    for (const drop of DROPS) {
      for (let w = 0; w < 2; w++) {
        const week = addDays(drop.firstWeek, 7 * w);
        const d = weekOf(SEED, p, week, w);
        if (d) rows.push({ p, week, d });
      }
    }
  }
  return rows;
}

type Key = 'week' | 'region' | 'city' | 'postal_code' | 'brand' | 'naics_code' | 'top_category' | 'sub_category' | 'placekey';
const GROUP_KEYS: readonly Key[] = ['week', 'region', 'city', 'postal_code', 'brand', 'naics_code', 'top_category', 'sub_category', 'placekey'];

function keyOf(r: Row, k: Key): string | number | null {
  switch (k) {
    case 'week': return r.week;
    case 'region': return r.p.metro.region;
    case 'city': return r.p.metro.city;
    case 'postal_code': return r.p.postal;
    case 'brand': return r.p.brand;
    case 'naics_code': return r.p.category.naics;
    case 'top_category': return r.p.category.top;
    case 'sub_category': return r.p.category.sub;
    case 'placekey': return r.p.placekey;
  }
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const elementwise = (lists: readonly (readonly number[])[], n: number) => Array.from({ length: n }, (_, i) => sum(lists.map((l) => l[i]!)));
function top(maps: readonly Record<string, number>[], n: number): { key: string; value: number }[] {
  const merged = new Map<string, number>();
  for (const m of maps) for (const [k, v] of Object.entries(m)) merged.set(k, (merged.get(k) ?? 0) + v);
  return [...merged].map(([key, value]) => ({ key, value })).sort((a, b) => b.value - a.value || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).slice(0, n);
}

/** What the service must answer, computed here: every value of every group, in the documented order. */
function expected(rows: readonly Row[], groupBy: readonly Key[], order: { value: string; descending: boolean } | null) {
  const groups = new Map<string, Row[]>();
  for (const r of rows) {
    const kt = JSON.stringify(groupBy.map((k) => { const v = keyOf(r, k); return v === null ? null : String(v); }));
    groups.set(kt, [...(groups.get(kt) ?? []), r]);
  }
  if (groupBy.length === 0 && groups.size === 0) groups.set('[]', []);
  const out = [...groups].map(([kt, rs]) => {
    const key = Object.fromEntries(groupBy.map((k) => [k, rs.length ? keyOf(rs[0]!, k) : null]));
    const group = {
      ...key,
      pois: new Set(rs.map((r) => r.p.placekey)).size, poi_weeks: rs.length,
      raw_visit_counts: rs.length ? sum(rs.map((r) => r.d.raw_visit_counts)) : null,
      raw_visitor_counts: rs.length ? sum(rs.map((r) => r.d.raw_visitor_counts)) : null,
      visits_by_day: rs.length ? elementwise(rs.map((r) => r.d.visits_by_day), 7) : Array(7).fill(null),
      visits_by_each_hour: rs.length ? elementwise(rs.map((r) => r.d.visits_by_each_hour), 168) : Array(168).fill(null),
      median_dwell: { median: median(rs.map((r) => r.d.median_dwell)), mean: rs.length ? sum(rs.map((r) => r.d.median_dwell)) / rs.length : null },
      distance_from_home: { median: median(rs.map((r) => r.d.distance_from_home)), mean: rs.length ? sum(rs.map((r) => r.d.distance_from_home)) / rs.length : null },
      homes: top(rs.map((r) => r.d.visitor_home_cbgs), 3),
      devices: top(rs.map((r) => r.d.device_type), 10),
    };
    return { kt, group };
  });
  const value = (g: Record<string, unknown>) => (order ? (g[order.value] as number | null) : 0);
  out.sort((a, b) => {
    const va = value(a.group) ?? (order?.descending ? -Infinity : Infinity);
    const vb = value(b.group) ?? (order?.descending ? -Infinity : Infinity);
    if (va !== vb) return order?.descending ? vb - va : va - vb;
    return a.kt < b.kt ? -1 : a.kt > b.kt ? 1 : 0;
  });
  return out.map((o) => o.group);
}

const VALUES = `pois poi_weeks raw_visit_counts raw_visitor_counts visits_by_day visits_by_each_hour
  median_dwell { median mean } distance_from_home { median mean }
  homes: top(column: visitor_home_cbgs, first: 3) { key value } devices: top(column: device_type) { key value }`;

/** Floats computed two ways may differ in their last bits: means compared to 1e-9, relative. */
function closeMeans(actual: any[], wanted: any[]): void {
  expect(actual.length).to.equal(wanted.length);
  actual.forEach((a, i) => {
    for (const stat of ['median_dwell', 'distance_from_home']) {
      if (wanted[i][stat].mean === null) expect(a[stat].mean).to.equal(null);
      else expect(Math.abs(a[stat].mean - wanted[i][stat].mean)).to.be.below(1e-9 * Math.abs(wanted[i][stat].mean));
      a[stat].mean = wanted[i][stat].mean;
    }
  });
  expect(actual).to.deep.equal(wanted);
}

describe('patterns_summary: weekly patterns aggregated, exact to the drops\' rows', function () {
  this.timeout(300_000);
  let dir: string;
  let server: RunningServer;
  const rows = allRows();

  before(async () => {
    dir = await makeTempDir('summary');
    const config = testConfig(path.join(dir, 'data'));
    for (const [i, drop] of DROPS.entries()) {
      const out = path.join(dir, `drop-${i}`);
      await generateDrop({ pois: POIS, weeks: 2, out, format: 'csv.gz', seed: SEED, firstWeek: drop.firstWeek });
      await loadDrop({ dataDir: config.dataDir, inputs: [out], month: drop.month, settings: buildSettingsOf(config) });
    }
    server = await startServer(config, createLogger('silent', 'test'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  const VARIABLE_TYPES: Record<string, string> = { f: 'SearchFilter', pk: '[String!]', after: 'String' };
  /** A /v1 summary as `s`, declaring the variables its arguments use. */
  const v1 = async (args: string, fields: string, variables: Record<string, unknown> = {}) => {
    const used = Object.keys(VARIABLE_TYPES).filter((v) => new RegExp(`\\$${v}\\b`).test(args));
    const header = used.length ? `(${used.map((v) => `$${v}: ${VARIABLE_TYPES[v]}`).join(', ')})` : '';
    return (await postGraphql(server.url, { query: `query${header} { s: patterns_summary${args ? `(${args})` : ''} { ${fields} } }`, variables })).body;
  };

  it('grouped by region and week over weeks in two files, every value, ordered by visits, paged by cursor to the end', async () => {
    const wanted = expected(rows, ['region', 'week'], { value: 'raw_visit_counts', descending: true });
    const got: any[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const body: any = await v1(`weeks: { from: "2022-01-01", to: "2022-01-30" }, group_by: [region, week], order_by: { value: raw_visit_counts }, first: 7, after: $after`,
        `weeks page_info { has_next_page end_cursor } groups { region week ${VALUES} }`, { after });
      expect(body.errors).to.equal(undefined);
      expect(body.data.s.weeks).to.deep.equal(WEEKS);
      got.push(...body.data.s.groups);
      pages++;
      if (!body.data.s.page_info.has_next_page) break;
      after = body.data.s.page_info.end_cursor;
    }
    expect(pages).to.equal(Math.ceil(wanted.length / 7));
    closeMeans(got, wanted);
  });

  it('every group_by alone, ordered by key; and none: one group of everything', async () => {
    for (const key of GROUP_KEYS) {
      const body = await v1(`weeks: { from: "2022-01-03", to: "2022-01-24" }, group_by: [${key}], first: 1000`, `groups { ${key} pois poi_weeks raw_visit_counts }`);
      expect(body.errors, key).to.equal(undefined);
      const wanted = expected(rows, [key], null).map((g: any) => ({ [key]: g[key], pois: g.pois, poi_weeks: g.poi_weeks, raw_visit_counts: g.raw_visit_counts }));
      expect(body.data.s.groups, key).to.deep.equal(wanted);
    }
    const all = await v1(`weeks: { from: "2022-01-03", to: "2022-01-24" }`, `groups { week region ${VALUES} }`);
    closeMeans(all.data.s.groups, expected(rows, [], null).map((g) => ({ week: null, region: null, ...g })));
  });

  it('top entries of several columns, and of one column at two sizes, in one answer', async () => {
    const body = await v1('weeks: { from: "2022-01-03", to: "2022-01-24" }, group_by: [region], first: 3',
      'groups { region one: top(column: visitor_home_cbgs, first: 1) { key value } five: top(column: visitor_home_cbgs, first: 5) { key value } devices: top(column: device_type, first: 2) { key value } }');
    expect(body.errors).to.equal(undefined);
    const regions = expected(rows, ['region'], null).slice(0, 3).map((g: any) => g.region as string);
    expect(body.data.s.groups).to.deep.equal(regions.map((region) => {
      const rs = rows.filter((r) => r.p.metro.region === region);
      return { region, one: top(rs.map((r) => r.d.visitor_home_cbgs), 1), five: top(rs.map((r) => r.d.visitor_home_cbgs), 5), devices: top(rs.map((r) => r.d.device_type), 2) };
    }));
  });

  it('filters as search takes them, and a list of Placekeys; a filter matching nothing gives one empty group', async () => {
    const region = poiOf(SEED, 0).metro.region;
    const keys = [poiOf(SEED, 3).placekey, poiOf(SEED, 7).placekey, poiOf(SEED, 11).placekey];
    const cases: [string, Record<string, unknown>, (r: Row) => boolean][] = [
      ['filter: $f', { f: { region } }, (r) => r.p.metro.region === region],
      ['filter: $f', { f: { naics_code: 7225 } }, (r) => String(r.p.category.naics).startsWith('7225')],
      ['filter: $f', { f: { brand: 'blue bottle' } }, (r) => r.p.brand === 'Blue Bottle'],
      ['placekeys: $pk', { pk: keys }, (r) => keys.includes(r.p.placekey)],
      ['filter: $f, placekeys: $pk', { f: { region: poiOf(SEED, 3).metro.region }, pk: keys }, (r) => keys.includes(r.p.placekey) && r.p.metro.region === poiOf(SEED, 3).metro.region],
      ['filter: $f', { f: { region: 'ZZ' } }, () => false],
    ];
    for (const [args, variables, keep] of cases) {
      const body = await v1(`${args}, weeks: { from: "2022-01-03", to: "2022-01-24" }, group_by: [week]`, `groups { week ${VALUES} }`, variables);
      expect(body.errors, JSON.stringify(variables)).to.equal(undefined);
      const matching = rows.filter(keep);
      closeMeans(body.data.s.groups, matching.length ? expected(matching, ['week'], null) : []);
    }
    const none = await v1('filter: $f', `groups { pois poi_weeks raw_visit_counts visits_by_day homes: top(column: visitor_home_cbgs) { key } }`, { f: { region: 'ZZ' } });
    expect(none.data.s.groups).to.deep.equal([{ pois: 0, poi_weeks: 0, raw_visit_counts: null, visits_by_day: Array(7).fill(null), homes: [] }]);
  });

  it('without weeks, the newest week; /v2 takes DateTime bounds and answers pageInfo in its style', async () => {
    const newest = await v1('group_by: [week]', 'weeks groups { week poi_weeks }');
    expect(newest.data.s).to.deep.equal({ weeks: ['2022-01-24'], groups: [{ week: '2022-01-24', poi_weeks: rows.filter((r) => r.week === '2022-01-24').length }] });
    const v2 = (await postGraphql(server.url, { query: `{ patterns_summary(start_date: "2022-01-10T00:00:00-05:00", end_date: "2022-01-17", group_by: [week], first: 1) {
      pageInfo { hasNextPage endCursor } groups { week raw_visitor_counts } } }` }, {}, '/v2/graphql')).body;
    expect(v2.errors).to.equal(undefined);
    const wanted = expected(rows.filter((r) => r.week === '2022-01-10'), ['week'], null)[0]!;
    expect(v2.data.patterns_summary.groups).to.deep.equal([{ week: '2022-01-10', raw_visitor_counts: wanted.raw_visitor_counts }]);
    expect(v2.data.patterns_summary.pageInfo.hasNextPage).to.equal(true);
  });

  /** POSTs a summary export with the test key: its status, headers and bytes. */
  const exportSummary = async (format: string, body: unknown, init: RequestInit = {}) => {
    const res = await fetch(`${server.url}/v1/export/summary${format ? `?format=${format}` : ''}`, {
      // identity: the compression middleware would drop Content-Length, which the test reads
      method: 'POST', headers: { apikey: TEST_KEY, 'content-type': 'application/json', 'accept-encoding': 'identity' }, body: JSON.stringify(body), ...init,
    });
    return { res, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  it('every group exported (POST /v1/export/summary) as CSV, NDJSON and Parquet, in order, each value exact', async () => {
    const ask = { weeks: { from: '2022-01-01', to: '2022-01-30' }, group_by: ['region', 'week'], order_by: { value: 'raw_visit_counts' },
      values: ['visits_by_day', 'visits_by_each_hour', 'median_dwell', 'distance_from_home'] };
    const wanted = expected(rows, ['region', 'week'], { value: 'raw_visit_counts', descending: true }).map((g: any) => ({
      region: g.region, week: g.week, pois: g.pois, poi_weeks: g.poi_weeks, raw_visit_counts: g.raw_visit_counts, raw_visitor_counts: g.raw_visitor_counts,
      visits_by_day: g.visits_by_day, visits_by_each_hour: g.visits_by_each_hour,
      median_dwell_median: g.median_dwell.median, median_dwell_mean: g.median_dwell.mean,
      distance_from_home_median: g.distance_from_home.median, distance_from_home_mean: g.distance_from_home.mean,
    }));
    const columns = Object.keys(wanted[0]!);
    /** Means computed two ways may differ in their last bits: compared to 1e-9, relative, then the rows whole. */
    const same = (got: Record<string, unknown>[], format: string) => {
      expect(got.length, format).to.equal(wanted.length);
      got.forEach((g, i) => {
        for (const c of ['median_dwell_mean', 'distance_from_home_mean']) {
          const w = (wanted[i] as any)[c] as number;
          expect(Math.abs((g[c] as number) - w), `${format} ${c}`).to.be.below(1e-9 * Math.abs(w));
          g[c] = w;
        }
      });
      expect(got, format).to.deep.equal(wanted);
    };
    for (const format of ['csv', 'ndjson', 'parquet']) {
      const { res, bytes } = await exportSummary(format, ask);
      expect([res.status, res.headers.get('content-disposition'), res.headers.get('content-length')], format)
        .to.deep.equal([200, `attachment; filename="summary_2022-01-03_2022-01-24.${format}"`, String(bytes.length)]);
      expect(res.headers.get('x-placedata-version')).to.match(/^\d+__2022_02$/);
      if (format === 'csv') {
        expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8; header=present');
        expect(bytes.toString('utf8').split('\r\n').length).to.equal(wanted.length + 2); // CRLF after every record
        const { header, records } = parseExportCsv(bytes.toString('utf8'));
        expect(header).to.deep.equal(columns);
        same(records.map((r) => Object.fromEntries(header.map((c, i) => [c, c === 'region' || c === 'week' ? r[i] : JSON.parse(r[i]!)]))), format);
      } else if (format === 'ndjson') {
        expect(res.headers.get('content-type')).to.equal('application/x-ndjson; charset=utf-8');
        same(parseNdjson(bytes.toString('utf8')), format);
      } else {
        const read = await readParquet(bytes, path.join(dir, 'summary.parquet'));
        expect(read.columns).to.deep.equal([['region', 'VARCHAR'], ['week', 'DATE'], ['pois', 'BIGINT'], ['poi_weeks', 'BIGINT'], ['raw_visit_counts', 'BIGINT'],
          ['raw_visitor_counts', 'BIGINT'], ['visits_by_day', 'BIGINT[]'], ['visits_by_each_hour', 'BIGINT[]'], ['median_dwell_median', 'DOUBLE'],
          ['median_dwell_mean', 'DOUBLE'], ['distance_from_home_median', 'DOUBLE'], ['distance_from_home_mean', 'DOUBLE']]);
        same(read.rows, format);
      }
    }
    // A filter and the default format (CSV): one group of the filter's rows, without the added values.
    const region = poiOf(SEED, 0).metro.region;
    const { bytes } = await exportSummary('', { filter: { region }, weeks: { from: '2022-01-03', to: '2022-01-24' } });
    const one = expected(rows.filter((r) => r.p.metro.region === region), [], null)[0]!;
    expect(parseExportCsv(bytes.toString('utf8'))).to.deep.equal({
      header: ['pois', 'poi_weeks', 'raw_visit_counts', 'raw_visitor_counts'],
      records: [[String(one.pois), String(one.poi_weeks), String(one.raw_visit_counts), String(one.raw_visitor_counts)]],
    });
  });

  it('a summary export refused with stable codes and statuses, before any data is read', async () => {
    const cases: [string, unknown, RequestInit, number, string, string][] = [
      ['csv', {}, { method: 'GET', body: null }, 405, 'BAD_REQUEST', 'Method GET is not allowed: use POST'],
      ['csv', {}, { headers: { apikey: TEST_KEY, 'content-type': 'text/plain' } }, 415, 'BAD_REQUEST', 'Unsupported content type: a summary export is application/json, the summary\'s arguments'],
      ['xml', {}, {}, 400, 'BAD_REQUEST', 'format must be csv, ndjson or parquet; got "xml"'],
      ['csv', [], {}, 400, 'BAD_REQUEST', 'the body must be a JSON object of the summary\'s arguments'],
      ['csv', { first: 10 }, {}, 400, 'BAD_REQUEST', 'Unknown field "first": a summary export takes filter, placekeys, weeks, group_by, order_by, values'],
      ['csv', { group_by: ['planet'] }, {}, 400, 'BAD_REQUEST', 'group_by: "planet" is none of week, region, city, postal_code, brand, naics_code, top_category, sub_category, placekey'],
      ['csv', { values: ['top'] }, {}, 400, 'BAD_REQUEST', 'values: "top" is none of visits_by_day, visits_by_each_hour, median_dwell, distance_from_home'],
      ['csv', { order_by: { value: 'brand' } }, {}, 400, 'BAD_REQUEST', 'order_by must be { "value": one of pois, poi_weeks, raw_visit_counts, raw_visitor_counts, "direction": "ASC" or "DESC" }'],
      ['csv', { filter: { naics_code: 'x' } }, {}, 400, 'BAD_FILTER', 'filter.naics_code: Int cannot represent non-integer value: "x"'],
      ['csv', { filter: { naics_code: 1 } }, {}, 400, 'BAD_FILTER', 'filter.naics_code must have 2 to 6 digits'],
      ['csv', { placekeys: ['nope'] }, {}, 400, 'BAD_PLACEKEY', 'Invalid Placekey: "nope"'],
      ['csv', { weeks: { from: '2022-01-24', to: '2022-01-03' } }, {}, 400, 'BAD_DATE', 'the range must not start after it ends; got 2022-01-24 to 2022-01-03'],
      ['csv', { weeks: { from: 20220103, to: '2022-01-03' } }, {}, 400, 'BAD_DATE', 'weeks.from must be a date, YYYY-MM-DD'],
    ];
    for (const [format, body, init, status, code, message] of cases) {
      const { res, bytes } = await exportSummary(format, body, init);
      expect([res.status, JSON.parse(bytes.toString('utf8'))], message).to.deep.equal([status, { errors: [{ message, extensions: { code } }] }]);
    }
    const keyless = await exportSummary('csv', {}, { headers: { 'content-type': 'application/json' } });
    expect(keyless.res.status).to.equal(401);
  });

  it('refuses bad arguments with stable codes before reading anything', async () => {
    const cursor = (await v1('group_by: [week], first: 1', 'page_info { end_cursor }')).data.s.page_info.end_cursor;
    const cases: [string, Record<string, unknown>, string, string][] = [
      ['first: 0', {}, 'BAD_PAGE_SIZE', 'first must be 1 to 1000; got 0'],
      ['group_by: [week], first: 1001', {}, 'BAD_PAGE_SIZE', 'first must be 1 to 1000; got 1001'],
      ['after: $after', { after: 'nonsense' }, 'BAD_CURSOR', 'Invalid cursor: pass `after` the end cursor a summary with the same group_by and order_by returned'],
      ['group_by: [region], after: $after', { after: cursor }, 'BAD_CURSOR', 'Invalid cursor: pass `after` the end cursor a summary with the same group_by and order_by returned'],
      ['weeks: { from: "2022-01-24", to: "2022-01-03" }', {}, 'BAD_DATE', 'the range must not start after it ends; got 2022-01-24 to 2022-01-03'],
      ['weeks: { from: "2022-13-01", to: "2022-01-03" }', {}, 'BAD_DATE', 'date must be a calendar date written YYYY-MM-DD; got "2022-13-01"'],
      ['placekeys: $pk', { pk: ['nope'] }, 'BAD_PLACEKEY', 'Invalid Placekey: "nope"'],
      ['filter: $f', { f: { naics_code: 1 } }, 'BAD_FILTER', 'filter.naics_code must have 2 to 6 digits'],
    ];
    for (const [args, variables, code, message] of cases) {
      const body = await v1(args, 'groups { pois } top: groups { top(column: device_type, first: 5) { key } }', variables);
      expect(body.data, args).to.equal(null);
      expect(body.errors.map((e: any) => [e.extensions.code, e.message]), args).to.deep.equal([[code, message]]);
    }
    const top = await v1('', 'groups { top(column: device_type, first: 101) { key } }');
    expect(top.errors.map((e: any) => [e.extensions.code, e.message])).to.deep.equal([['BAD_PAGE_SIZE', "top's first must be 1 to 100; got 101"]]);
  });
});

describe('patterns_summary: which attributes a group reads, and which rows count', function () {
  this.timeout(120_000);
  let dir: string;
  let server: RunningServer;
  const [MOVED, STAYED, NO_CORE] = [KEYS[0]!, KEYS[1]!, KEYS[2]!];
  const WEEK = '2022-04-18';
  /** A week's row (the helper's, visits spread over the days) with its own region. */
  const row = (placekey: string, region: string, visits: number) => {
    const r = weeklyRow(placekey, WEEK, [visits, 0, 0, 0, 0, 0, 0]);
    r[WEEKLY_HEADER.indexOf('region')] = region;
    return r;
  };

  before(async () => {
    dir = await makeTempDir('summary-rows');
    const drop = path.join(dir, 'drop');
    await mkdir(drop, { recursive: true });
    // MOVED: core says MA, its patterns row says NY; STAYED: CT in both; NO_CORE: a patterns row without a core row.
    await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [
      [MOVED, 'Moved', '1 Main St', 'Springfield', 'MA', '01020', 'US', 722511, 'Restaurants and Other Eating Places', 'Full-Service Restaurants'],
      [STAYED, 'Stayed', '2 Elm St', 'Hartford', 'CT', '06101', 'US', 445110, 'Grocery Stores', 'Supermarkets and Other Grocery (except Convenience) Stores'],
    ]);
    await writeCsv(path.join(drop, 'weekly.csv'), WEEKLY_HEADER, [row(MOVED, 'NY', 10), row(STAYED, 'CT', 20), row(NO_CORE, 'NJ', 40)]);
    const config = testConfig(path.join(dir, 'data'));
    await loadDrop({ dataDir: config.dataDir, inputs: [drop], month: '2022-04', settings: buildSettingsOf(config) });
    server = await startServer(config, createLogger('silent', 'test'));
  });
  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  const groups = async (args: string, fields: string) => {
    const body = (await postGraphql(server.url, { query: `{ patterns_summary${args ? `(${args})` : ""} { groups { ${fields} } } }` })).body;
    expect(body.errors, args).to.equal(undefined);
    return body.data.patterns_summary.groups;
  };

  it('with SUMMARY_THREADS=0 (summaries on the served DuckDB, no file system) a summary export is refused: 501 SUMMARY_EXPORTS_OFF', async () => {
    const served = await startServer({ ...testConfig(path.join(dir, 'data')), summaryThreads: 0 }, createLogger('silent', 'test'));
    try {
      const res = await fetch(`${served.url}/v1/export/summary`, { method: 'POST', headers: { apikey: TEST_KEY, 'content-type': 'application/json' }, body: '{}' });
      expect([res.status, await res.json()]).to.deep.equal([501, { errors: [{
        message: 'This server runs summaries on the served DuckDB (SUMMARY_THREADS=0), which cannot write a file: summary exports are off',
        extensions: { code: 'SUMMARY_EXPORTS_OFF' },
      }] }]);
    } finally {
      await served.close();
    }
  });

  it('region is the patterns row\'s; without a filter every row counts, a Placekey without core too', async () => {
    expect(await groups('group_by: [region]', 'region pois raw_visit_counts')).to.deep.equal([
      { region: 'CT', pois: 1, raw_visit_counts: 20 }, { region: 'NJ', pois: 1, raw_visit_counts: 40 }, { region: 'NY', pois: 1, raw_visit_counts: 10 }]);
    expect(await groups('', 'pois raw_visit_counts')).to.deep.equal([{ pois: 3, raw_visit_counts: 70 }]);
  });

  it('a filter selects POIs by core (MA finds the POI whose row says NY); a core key leaves out rows without core', async () => {
    expect(await groups('filter: { region: "MA" }, group_by: [region]', 'region pois raw_visit_counts')).to.deep.equal([{ region: 'NY', pois: 1, raw_visit_counts: 10 }]);
    expect(await groups('filter: { region: "NY" }', 'pois raw_visit_counts')).to.deep.equal([{ pois: 0, raw_visit_counts: null }]);
    expect(await groups('group_by: [top_category, region]', 'top_category region pois raw_visit_counts')).to.deep.equal([
      { top_category: 'Grocery Stores', region: 'CT', pois: 1, raw_visit_counts: 20 },
      { top_category: 'Restaurants and Other Eating Places', region: 'NY', pois: 1, raw_visit_counts: 10 }]);
  });
});

describe('monthly_patterns_summary: monthly patterns aggregated, exact to the drops\' rows', function () {
  this.timeout(300_000);
  const M_SEED = 43;
  const M_POIS = 80;
  /** Two drops of one month each: the second version reads January from the first drop's file. */
  const M_DROPS = [{ month: '2022-01', firstWeek: '2022-01-03' }, { month: '2022-02', firstWeek: '2022-02-07' }] as const;
  let dir: string;
  let server: RunningServer;
  type Month = NonNullable<ReturnType<typeof monthOf>>;
  const rows: { p: SyntheticPoi; month: string; d: Month }[] = [];
  for (let i = 0; i < M_POIS; i++) {
    const p = poiOf(M_SEED, i);
    for (const drop of M_DROPS) {
      const d = monthOf(M_SEED, p, `${drop.month}-01`, 0);
      if (d) rows.push({ p, month: `${drop.month}-01`, d });
    }
  }

  before(async () => {
    dir = await makeTempDir('summary-monthly');
    const config = testConfig(path.join(dir, 'data'));
    for (const [i, drop] of M_DROPS.entries()) {
      const out = path.join(dir, `drop-${i}`);
      await generateDrop({ pois: M_POIS, weeks: 1, months: 1, firstMonth: drop.month, out, format: 'csv.gz', seed: M_SEED, firstWeek: drop.firstWeek });
      await loadDrop({ dataDir: config.dataDir, inputs: [out], month: drop.month, settings: buildSettingsOf(config) });
    }
    server = await startServer(config, createLogger('silent', 'test'));
  });
  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  /** Every value of each group, computed here from the rows, in the documented order (by `order`, then key). */
  function wanted(selected: typeof rows, byMonth: boolean, byRegion: boolean) {
    const groups = new Map<string, typeof rows>();
    for (const r of selected) {
      const kt = JSON.stringify([...(byMonth ? [r.month] : []), ...(byRegion ? [r.p.metro.region] : [])]);
      groups.set(kt, [...(groups.get(kt) ?? []), r]);
    }
    return [...groups].map(([kt, rs]) => ({
      kt,
      group: {
        ...(byMonth ? { month: rs[0]!.month } : {}), ...(byRegion ? { region: rs[0]!.p.metro.region } : {}),
        pois: new Set(rs.map((r) => r.p.placekey)).size, poi_months: rs.length,
        raw_visit_counts: sum(rs.map((r) => r.d.raw_visit_counts)), raw_visitor_counts: sum(rs.map((r) => r.d.raw_visitor_counts)),
        // By day of the month: a day no row has (the 29th to 31st of February) is null.
        visits_by_day: Array.from({ length: 31 }, (_, i) => (rs.some((r) => r.d.visits_by_day.length > i) ? sum(rs.map((r) => r.d.visits_by_day[i] ?? 0)) : null)),
        popularity_by_hour: elementwise(rs.map((r) => r.d.popularity_by_hour), 24),
        median_dwell: { median: median(rs.map((r) => r.d.median_dwell)), mean: sum(rs.map((r) => r.d.median_dwell)) / rs.length },
        brands: top(rs.map((r) => r.d.related_same_month_brand), 3),
      },
    }));
  }
  const FIELDS = 'pois poi_months raw_visit_counts raw_visitor_counts visits_by_day popularity_by_hour median_dwell { median mean } brands: top(column: related_same_month_brand, first: 3) { key value }';
  const closeMean = (got: any[], want: any[]) => {
    expect(got.length).to.equal(want.length);
    got.forEach((g, i) => {
      expect(Math.abs(g.median_dwell.mean - want[i].median_dwell.mean)).to.be.below(1e-9 * want[i].median_dwell.mean);
      g.median_dwell.mean = want[i].median_dwell.mean;
    });
    expect(got).to.deep.equal(want);
  };

  it('grouped by month and region over months in two files, every value, ordered by visits', async () => {
    const body = (await postGraphql(server.url, { query: `{ s: monthly_patterns_summary(months: { from: "2022-01-15", to: "2022-02-28" }, group_by: [month, region],
      order_by: { value: raw_visit_counts }, first: 1000) { months page_info { has_next_page } groups { month region ${FIELDS} } } }` })).body;
    expect(body.errors).to.equal(undefined);
    expect(body.data.s.months).to.deep.equal(['2022-01-01', '2022-02-01']);
    expect(body.data.s.page_info).to.deep.equal({ has_next_page: false });
    const want = wanted(rows, true, true).sort((a, b) => b.group.raw_visit_counts - a.group.raw_visit_counts || (a.kt < b.kt ? -1 : 1)).map((g) => g.group);
    closeMean(body.data.s.groups, want);
  });

  it('no group: both months as one, POIs counted once; /v2 takes DateTime bounds; without a range, the newest month', async () => {
    const all = (await postGraphql(server.url, { query: `{ s: monthly_patterns_summary(months: { from: "2022-01-01", to: "2022-02-01" }) { groups { ${FIELDS} } } }` })).body;
    expect(all.errors).to.equal(undefined);
    closeMean(all.data.s.groups, wanted(rows, false, false).map((g) => g.group));
    const v2 = (await postGraphql(server.url, { query: `{ monthly_patterns_summary(start_date: "2022-02-10T00:00:00-05:00", end_date: "2022-02-11", group_by: [month], first: 1) {
      months pageInfo { hasNextPage } groups { month poi_months raw_visitor_counts } } }` }, {}, '/v2/graphql')).body;
    expect(v2.errors).to.equal(undefined);
    const feb = rows.filter((r) => r.month === '2022-02-01');
    expect(v2.data.monthly_patterns_summary).to.deep.equal({ months: ['2022-02-01'], pageInfo: { hasNextPage: false },
      groups: [{ month: '2022-02-01', poi_months: feb.length, raw_visitor_counts: sum(feb.map((r) => r.d.raw_visitor_counts)) }] });
    const newest = (await postGraphql(server.url, { query: '{ monthly_patterns_summary { months groups { poi_months } } }' })).body;
    expect(newest.data.monthly_patterns_summary).to.deep.equal({ months: ['2022-02-01'], groups: [{ poi_months: feb.length }] });
  });

  it('refuses a bad range with BAD_DATE, and a weekly key or value is no part of its schema', async () => {
    const bad = (await postGraphql(server.url, { query: '{ monthly_patterns_summary(months: { from: "2022-02-01", to: "2022-01-01" }) { groups { pois } } }' })).body;
    expect(bad.errors.map((e: any) => [e.extensions.code, e.message])).to.deep.equal([['BAD_DATE', 'the range must not start after it ends; got 2022-02-01 to 2022-01-01']]);
    const half = (await postGraphql(server.url, { query: '{ monthly_patterns_summary(months: { from: "2022-02-01", to: "" }) { groups { pois } } }' })).body;
    expect(half.errors.map((e: any) => e.extensions.code)).to.deep.equal(['BAD_DATE']);
    const week = (await postGraphql(server.url, { query: '{ monthly_patterns_summary(group_by: [week]) { groups { poi_weeks } } }' })).body;
    expect(week.errors.map((e: any) => e.extensions.code)).to.deep.equal(['GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_VALIDATION_FAILED']);
  });
});

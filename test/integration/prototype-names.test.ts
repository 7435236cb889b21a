import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startServer, type RunningServer } from '../../api/server.ts';
import { createLogger } from '../../shared/logger.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { getExport, parseNdjson } from '../helpers/export-client.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { loadDrop, type LoadResult } from '../helpers/load-drop.ts';
import { days, GEOMETRY_HEADER, GEOMETRY_ROWS, MONTHLY_HEADER, monthlyRow } from '../helpers/monthly-drop.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { coreRow, CORE_HEADER, KEYS, weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';

/**
 * Every name JavaScript objects inherit (`constructor`, `__proto__`, `toString`, ...): a drop may
 * name its columns so, or use them as keys of its maps, and must be served exactly as delivered.
 */
const NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];

/** The load lower-cases header names: `hasOwnProperty` is served as `hasownproperty`. */
const served = (name: string) => name.toLowerCase();

/** A value per name and row, each different. */
const cell = (name: string, row: number) => `${name} of row ${row}`;

/** Objects built with own properties only (Object.fromEntries defines `__proto__` as one of them). */
const own = <T>(entries: readonly (readonly [string, T])[]): Record<string, T> => Object.fromEntries(entries);
const extrasOf = (row: number) => own(NAMES.map((n) => [served(n), cell(n, row)] as const));

/** visitor_home_cbgs of each row: the first keyed by every inherited name (as delivered, not lower-cased), the second by two. */
const MAPS = [NAMES.map((n, i) => [n, i + 1] as const), [['__proto__', 7], ['constructor', 8]] as const];
const mapText = (pairs: readonly (readonly [string, number])[]) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;

const WEEK = '2022-04-18';
/** The weekly-only columns of a combined export (core's columns come from CORE_HEADER). */
const PATTERNS_ONLY = ['date_range_start', 'date_range_end', 'raw_visit_counts', 'raw_visitor_counts', 'visits_by_day', 'visitor_home_cbgs'];

const coreValues = (i: number) => coreRow(KEYS[i]!, `Place ${i}`);
const weeklyValues = (i: number) => [...weeklyRow(KEYS[i]!, WEEK, [i + 1, 1, 1, 1, 1, 1, 1]), mapText(MAPS[i]!)];
const extraValues = (i: number) => NAMES.map((n) => cell(n, i));
const MONTH_RANGES = [['2022-03-01T00:00:00-05:00', '2022-04-01T00:00:00-04:00'], ['2022-03-01T00:00:00-07:00', '2022-04-01T00:00:00-07:00']] as const;
const monthlyValues = (i: number) => monthlyRow(KEYS[i]!, MONTH_RANGES[i]![0], MONTH_RANGES[i]![1], days(31, i)).map((v, c) => (MONTHLY_HEADER[c] === 'visitor_home_cbgs' ? mapText(MAPS[i]!) : v));

type Layout = 'split' | 'combined';

/**
 * The drop's CSV files: `split` a file of each product, core, monthly and geometry with the names
 * as JavaScript spells them, weekly with them upper-cased (lower-cased by the load to the same
 * keys); `combined` one file with core and weekly columns, whose unknown columns are place
 * attributes (core's).
 */
async function writeDrop(dir: string, layout: Layout): Promise<string[]> {
  if (layout === 'combined') {
    const file = path.join(dir, 'combined.csv');
    const weeklyOnly = (i: number) => weeklyValues(i).slice(WEEKLY_HEADER.indexOf('date_range_start'));
    await writeCsv(file, [...CORE_HEADER, ...PATTERNS_ONLY, ...NAMES], [0, 1].map((i) => [...coreValues(i), ...weeklyOnly(i), ...extraValues(i)]));
    return [file];
  }
  const core = path.join(dir, 'core.csv');
  const weekly = path.join(dir, 'weekly.csv');
  await writeCsv(core, [...CORE_HEADER, ...NAMES], [0, 1].map((i) => [...coreValues(i), ...extraValues(i)]));
  await writeCsv(weekly, [...WEEKLY_HEADER, 'visitor_home_cbgs', ...NAMES.map((n) => n.toUpperCase())], [0, 1].map((i) => [...weeklyValues(i), ...extraValues(i)]));
  const monthly = path.join(dir, 'monthly.csv');
  const geometry = path.join(dir, 'geometry.csv');
  await writeCsv(monthly, [...MONTHLY_HEADER, ...NAMES], [0, 1].map((i) => [...monthlyValues(i), ...extraValues(i)]));
  await writeCsv(geometry, [...GEOMETRY_HEADER, ...NAMES], [0, 1].map((i) => [...GEOMETRY_ROWS[i]!, ...extraValues(i)]));
  return [core, weekly, monthly, geometry];
}

/** Parquet copies of CSV files (every column text), as DuckDB writes them: the same column names. */
async function parquetOf(csvFiles: readonly string[]): Promise<string[]> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const out: string[] = [];
    for (const csv of csvFiles) {
      const file = csv.replace(/\.csv$/, '.parquet');
      await conn.run(`COPY (SELECT * FROM read_csv(${quoteLiteral(csv)}, all_varchar = true)) TO ${quoteLiteral(file)} (FORMAT parquet)`);
      const names = (await conn.runAndReadAll(`SELECT name FROM parquet_schema(${quoteLiteral(file)}) WHERE num_children IS NULL`)).getRowObjectsJS().map((r) => r['name']);
      expect(names.slice(-NAMES.length), 'the names as written in the Parquet schema').to.deep.equal(csv.endsWith('weekly.csv') ? NAMES.map((n) => n.toUpperCase()) : NAMES);
      out.push(file);
    }
    return out;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

const LOOKUP_V1 = `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey
  placedata_core { location_name other_columns }
  placedata_weekly_patterns(date: "2022-04-20") { raw_visit_counts visitor_home_cbgs other_columns }
  safegraph_weekly_patterns(date: "2022-04-20") { visitor_home_cbgs { key value } }
  placedata_monthly_patterns(date: "2022-03-15") { raw_visit_counts visitor_home_cbgs other_columns }
  safegraph_monthly_patterns(date: "2022-03-15") { visitor_home_cbgs { key value } }
  placedata_geometry { polygon_class other_columns } } }`;
const LOOKUP_V2 = `query($k: [Placekey!], $one: Placekey!) {
  batch_lookup(placekeys: $k) { placekey safegraph_core { other_columns } weekly_patterns(start_date: "2022-04-18T00:00:00Z", end_date: "2022-04-24T00:00:00Z") { visitor_home_cbgs other_columns }
    monthly_patterns(start_date: "2022-03-01T00:00:00Z", end_date: "2022-03-31T00:00:00Z") { visitor_home_cbgs other_columns } safegraph_geometry { other_columns } }
  lookup(placekey: $one) { placedata_core { other_columns } safegraph_weekly_patterns(date: "2022-04-20T00:00:00Z") { visitor_home_cbgs other_columns } } }`;

describe('names JavaScript objects inherit (constructor, __proto__, ...) as delivered column names and map keys: loaded and served as delivered', function () {
  this.timeout(300_000);
  let dir: string;

  before(async () => {
    dir = await makeTempDir('proto-names');
  });
  after(() => removeDir(dir));

  for (const format of ['csv', 'parquet'] as const) {
    for (const layout of ['split', 'combined'] as const) {
      it(`${format}, ${layout === 'split' ? 'a file per product (core, weekly, monthly, geometry)' : 'core and weekly in one file'}: the whole load report, then every name's value on /v1 and /v2 and in the exports`, async () => {
        const drop = path.join(dir, `${format}-${layout}`);
        await mkdir(drop);
        const csvFiles = await writeDrop(drop, layout);
        if (format === 'parquet') {
          await parquetOf(csvFiles);
          for (const f of csvFiles) await removeDir(f);
        }
        const dataDir = path.join(dir, `${format}-${layout}-data`);
        const { label, report } = await loadDrop({ dataDir, inputs: [drop], month: '2022-04', settings: buildSettingsOf(testConfig(dataDir)) }) as LoadResult;
        const clean = { rows_read: 2, rows_loaded: 2, rejected: {}, rejected_total: 0, duplicates_dropped: 0, unparseable_values: {} };
        const split = layout === 'split';
        expect(report.products).to.deep.equal(split ? { core: clean, weekly: clean, monthly: clean, geometry: clean } : { core: clean, weekly: clean });
        expect({ differences: report.column_differences, lines: report.rejected_lines, samples: report.samples, ignored: report.ignored_columns, weeks: report.weeks_loaded, months: report.months_loaded })
          .to.deep.equal({ differences: [], lines: [], samples: [], ignored: [], weeks: [WEEK], months: split ? ['2022-03-01'] : [] });

        // A combined export's unknown columns are place attributes: its weeks carry none.
        const weekExtras = (i: number) => (split ? extrasOf(i) : {});
        // Monthly and geometry (split only): monthly's own unknown column, and geometry's iso_country_code (a patterns column).
        const monthly = (i: number) => (split ? { visitor_home_cbgs: own(MAPS[i]!), other_columns: { shop_note: 'monthly note', ...extrasOf(i) } } : null);
        const geometry = (i: number) => (split ? { other_columns: { iso_country_code: 'US', ...extrasOf(i) } } : null);
        const server: RunningServer = await startServer(testConfig(dataDir), createLogger('silent', 'test'));
        try {
          const v1 = await postGraphql(server.url, { query: LOOKUP_V1, variables: { k: [KEYS[0], KEYS[1]] } });
          expect(v1.body).to.deep.equal({
            data: { batch_lookup: [0, 1].map((i) => ({
              placekey: KEYS[i],
              placedata_core: { location_name: `Place ${i}`, other_columns: extrasOf(i) },
              placedata_weekly_patterns: { raw_visit_counts: i + 7, visitor_home_cbgs: own(MAPS[i]!), other_columns: weekExtras(i) },
              safegraph_weekly_patterns: { visitor_home_cbgs: MAPS[i]!.map(([key, value]) => ({ key, value })) },
              placedata_monthly_patterns: split ? { raw_visit_counts: days(31, i).reduce((a, b) => a + b, 0), ...monthly(i) } : null,
              safegraph_monthly_patterns: split ? { visitor_home_cbgs: MAPS[i]!.map(([key, value]) => ({ key, value })) } : null,
              placedata_geometry: split ? { polygon_class: GEOMETRY_ROWS[i]![2], ...geometry(i) } : null,
            })) },
            extensions: { row_count: 2, version_date: label },
          });
          const v2 = await postGraphql(server.url, { query: LOOKUP_V2, variables: { k: [KEYS[0], KEYS[1]], one: KEYS[1] } }, {}, '/v2/graphql');
          expect(v2.body).to.deep.equal({
            data: {
              batch_lookup: [0, 1].map((i) => ({
                placekey: KEYS[i],
                safegraph_core: { other_columns: extrasOf(i) },
                weekly_patterns: [{ visitor_home_cbgs: own(MAPS[i]!), other_columns: weekExtras(i) }],
                monthly_patterns: split ? [monthly(i)] : [],
                safegraph_geometry: geometry(i),
              })),
              lookup: { placedata_core: { other_columns: extrasOf(1) }, safegraph_weekly_patterns: { visitor_home_cbgs: own(MAPS[1]!), other_columns: weekExtras(1) } },
            },
            extensions: { row_count: 3, version_date: label },
          });

          const core = parseNdjson((await getExport(server.url, '/v1/export/core?format=ndjson')).text);
          expect(core.map((r) => own(NAMES.map((n) => [served(n), r[served(n)]] as const)))).to.deep.equal([extrasOf(0), extrasOf(1)]);
          const weekly = parseNdjson((await getExport(server.url, '/v1/export/weekly_patterns?date=2022-04-20&format=ndjson')).text);
          expect(weekly.map((r) => r['visitor_home_cbgs'])).to.deep.equal([own(MAPS[0]!), own(MAPS[1]!)]);
          if (split) expect(weekly.map((r) => own(NAMES.map((n) => [served(n), r[served(n)]] as const)))).to.deep.equal([extrasOf(0), extrasOf(1)]);
        } finally {
          await server.close();
        }
      });
    }
  }
});

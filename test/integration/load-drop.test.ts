import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { queryFile } from '../helpers/query-file.ts';
import { loadDrop, siteOf } from '../helpers/load-drop.ts';
import { queryVersion, weeklyRowsSql } from '../helpers/open-version.ts';
import { rollback } from '../../versions/rollback.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { demoFixture } from '../helpers/demo-fixture.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { coreRow, CORE_HEADER, KEYS, weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';


describe('loading a drop into a version file', () => {
  let dir: string;
  let dataDir: string;
  let n = 0;
  const settings = () => buildSettingsOf(testConfig(dataDir));
  const newDrop = async () => {
    const d = path.join(dir, `drop${++n}`);
    await mkdir(d, { recursive: true });
    return d;
  };

  beforeEach(async () => {
    dir = await makeTempDir('load');
    dataDir = path.join(dir, 'data');
  });
  afterEach(() => removeDir(dir));

  it('writes <epoch>__<year>_<month>.duckdb with typed tables, metadata and sources, and points at it', async () => {
    const fixture = await demoFixture(await newDrop());
    const now = new Date('2026-11-21T10:00:00Z');
    const result = await loadDrop({ dataDir, inputs: [fixture.dropDir], month: null, settings: settings(), now: () => now });
    expect(result.label).to.equal('1795255200__2022_03');
    expect(result.file).to.equal(path.join(dataDir, '1795255200__2022_03.duckdb'));
    expect(await readPointer(dataDir)).to.equal(result.label);
    expect((await readdir(dataDir)).sort()).to.deep.equal(['.tmp', '.verified', '1795255200__2022_03.duckdb', '1795255200__2022_03.duckdb.facts.json', '1795255200__2022_03.lookup', 'CURRENT']);
    const info = await queryFile(result.file, `SELECT label, built_at, release_month, schema_version, core_rows, weekly_rows,
      first_week, last_week, weeks_covered, report->>'release_month_source' AS month_source FROM version_info`);
    expect(info).to.deep.equal([{
      label: '1795255200__2022_03', built_at: '2026-11-21T10:00:00.000Z', release_month: '2022-03', schema_version: 6,
      core_rows: '300', weekly_rows: String(fixture.weekly.length), first_week: '2022-03-07', last_week: '2022-03-28', weeks_covered: 4, month_source: 'data',
    }]);
    const sources = await queryFile(result.file, 'SELECT path, bytes, sha256, product, rows_read, rows_loaded FROM source_files ORDER BY path');
    const expected = [];
    for (const name of ['core_poi.csv', 'patterns-part1.csv.gz', 'patterns-part2.csv.gz']) {
      const bytes = await readFile(path.join(fixture.dropDir, name));
      const rows = name === 'core_poi.csv' ? 300 : name.endsWith('1.csv.gz') ? Math.ceil(fixture.weekly.length / 2) : Math.floor(fixture.weekly.length / 2);
      expected.push({ path: name, bytes: String(bytes.length), sha256: createHash('sha256').update(bytes).digest('hex'),
        product: name === 'core_poi.csv' ? 'core' : 'weekly', rows_read: String(rows), rows_loaded: String(rows) });
    }
    expect(sources).to.deep.equal(expected);
    const types = await queryFile(result.file, `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'weekly_patterns' ORDER BY ordinal_position`);
    expect(types.map((t) => `${t['column_name']} ${t['data_type']}`)).to.deep.equal([
      'placekey VARCHAR', 'location_name VARCHAR', 'street_address VARCHAR', 'city VARCHAR', 'region VARCHAR', 'date_range_start VARCHAR',
      'date_range_end VARCHAR', 'raw_visit_counts INTEGER', 'raw_visitor_counts INTEGER', 'visits_by_day INTEGER[]', 'week_start DATE',
      'postal_code VARCHAR', 'iso_country_code VARCHAR']);
  });

  it('rejects bad rows with a counted, sampled report and keeps one row per (placekey, week)', async () => {
    const drop = await newDrop();
    await writeCsv(path.join(drop, 'patterns.csv'), WEEKLY_HEADER, [
      weeklyRow(KEYS[0]!, '2022-04-18', [1, 2, 3, 4, 5, 6, 7]),
      weeklyRow(KEYS[1]!, '2022-04-18', [1, 1, 1, 1, 1, 1, 1]),
      weeklyRow(KEYS[1]!, '2022-04-18', [2, 2, 2, 2, 2, 2, 2]), // duplicate week: the first row wins
      weeklyRow('222-222@222-222-222', '2022-04-18', [1, 1, 1, 1, 1, 1, 1]),
      weeklyRow(KEYS[2]!, '2022-04-19', [1, 1, 1, 1, 1, 1, 1]), // not a Monday
      [...weeklyRow(KEYS[3]!, '2022-04-18', [1, 1, 1]).slice(0, 9), '[1,1,1,1,1,1]'],
      [...weeklyRow(KEYS[4]!, '2022-04-18', [1, 1, 1, 1, 1, 1, 1]).slice(0, 7), 99, 3, '[1,1,1,1,1,1,1]'],
      ['', 'No key', '', '', '', '2022-04-18T00:00:00-04:00', '2022-04-25T00:00:00-04:00', 7, 3, '[1,1,1,1,1,1,1]'],
    ]);
    const result = await loadDrop({ dataDir, inputs: [drop], month: '2022-04', settings: { ...settings(), maxRejectShare: 0.9 } });
    const file = path.basename(path.join(drop, 'patterns.csv'));
    expect(result.report.products).to.deep.equal({
      weekly: {
        rows_read: 8, rows_loaded: 2, rejected_total: 5, duplicates_dropped: 1, unparseable_values: {},
        rejected: { bad_date_range_start: 1, malformed_placekey: 1, missing_placekey: 1, visits_by_day_not_7: 1, visits_by_day_sum_mismatch: 1 },
      },
    });
    expect(result.report.samples).to.deep.equal([
      { product: 'weekly', file, row: 4, reason: 'malformed_placekey', placekey: '222-222@222-222-222' },
      { product: 'weekly', file, row: 5, reason: 'bad_date_range_start', placekey: KEYS[2] },
      { product: 'weekly', file, row: 6, reason: 'visits_by_day_not_7', placekey: KEYS[3] },
      { product: 'weekly', file, row: 7, reason: 'visits_by_day_sum_mismatch', placekey: KEYS[4] },
      { product: 'weekly', file, row: 8, reason: 'missing_placekey', placekey: null },
    ]);
    expect(await queryFile(result.file, 'SELECT placekey, raw_visit_counts, visits_by_day FROM weekly_patterns ORDER BY placekey')).to.deep.equal([
      { placekey: KEYS[0], raw_visit_counts: 28, visits_by_day: [1, 2, 3, 4, 5, 6, 7] },
      { placekey: KEYS[1], raw_visit_counts: 7, visits_by_day: [1, 1, 1, 1, 1, 1, 1] },
    ]);
  });

  it('fails a drop over the reject share with its report, publishing nothing and leaving the served version as it was', async () => {
    const good = await newDrop();
    await writeCsv(path.join(good, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Good')]);
    const first = await loadDrop({ dataDir, inputs: [good], month: '2022-04', settings: settings() });
    const before = (await readdir(dataDir)).sort();
    const bad = await newDrop();
    await writeCsv(path.join(bad, 'core.csv.gz'), CORE_HEADER, [coreRow(KEYS[1]!, 'Fine'), coreRow('nope', 'Bad'), [...coreRow(KEYS[2]!, 'X').slice(0, 7), 'seven', 'a', 'b']]);
    const err = await loadDrop({ dataDir, inputs: [bad], month: '2022-05', settings: settings() }).then(() => null, (e) => e);
    expect(err.code).to.equal('BAD_DROP');
    expect(err.message).to.equal('66.7% of core rows were rejected, above the 5.0% allowed');
    expect(err.details.report.products.core).to.deep.equal({ rows_read: 3, rows_loaded: 1, rejected_total: 2, duplicates_dropped: 0, unparseable_values: {}, rejected: { malformed_placekey: 1, unparseable_naics_code: 1 } });
    expect(await readPointer(dataDir)).to.equal(first.label);
    expect((await readdir(dataDir)).sort()).to.deep.equal(before);
  });

  it('refuses a file keyed only by safegraph_place_id, naming the reason', async () => {
    const drop = await newDrop();
    await writeCsv(path.join(drop, 'core_poi-part1.csv'), ['safegraph_place_id', 'location_name', 'top_category'], [['sg:abc', 'Old', 'Restaurants']]);
    const err = await loadDrop({ dataDir, inputs: [drop], month: null, settings: settings() }).then(() => null, (e) => e);
    expect([err.code, err.message]).to.deep.equal(['BAD_DROP', 'core_poi-part1.csv: cannot be served by Placekey: keyed only by safegraph_place_id; it has no placekey column']);
    expect(await readPointer(dataDir)).to.equal(null);
  });

  it('carries weeks forward, replaces a week delivered again, and carries core when the drop has none', async () => {
    const d1 = await newDrop();
    await writeCsv(path.join(d1, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'One', '02134')]);
    await writeCsv(path.join(d1, 'patterns.csv'), WEEKLY_HEADER, [weeklyRow(KEYS[0]!, '2022-04-04', [1, 1, 1, 1, 1, 1, 1]), weeklyRow(KEYS[0]!, '2022-04-11', [2, 2, 2, 2, 2, 2, 2])]);
    await loadDrop({ dataDir, inputs: [d1], month: '2022-04', settings: settings() });
    const d2 = await newDrop();
    await writeCsv(path.join(d2, 'patterns.csv.gz'), WEEKLY_HEADER, [weeklyRow(KEYS[0]!, '2022-04-11', [3, 3, 3, 3, 3, 3, 3]), weeklyRow(KEYS[0]!, '2022-04-18', [4, 4, 4, 4, 4, 4, 4])], '\r\n');
    const first = (await readdir(dataDir)).find((n) => n.endsWith('.duckdb'))!.slice(0, -'.duckdb'.length);
    const second = await loadDrop({ dataDir, inputs: [d2], month: null, settings: settings() });
    expect(second.report.weeks_loaded).to.deep.equal(['2022-04-11', '2022-04-18']);
    expect(second.report.weeks_carried_forward).to.equal(1);
    expect(second.report.core_carried_forward).to.equal(true);
    expect(second.report.inherited_files.map((f) => f.label)).to.deep.equal([first]);
    // The version as served: the week delivered again replaced, the other and core inherited.
    expect(await queryVersion(dataDir, second.label, (v) => `SELECT strftime(week_start, '%Y-%m-%d') AS w, raw_visit_counts FROM (${weeklyRowsSql(v, 'week_start, raw_visit_counts')}) ORDER BY w`)).to.deep.equal([
      { w: '2022-04-04', raw_visit_counts: 7 }, { w: '2022-04-11', raw_visit_counts: 21 }, { w: '2022-04-18', raw_visit_counts: 28 }]);
    expect(await queryVersion(dataDir, second.label, (v) => `SELECT placekey, postal_code FROM ${v.tableOf('core')}`)).to.deep.equal([{ placekey: KEYS[0], postal_code: '02134' }]);
    // Nothing inherited is copied: the new file holds the two weeks its drop delivered, and no core.
    expect(await queryFile(second.file, `SELECT strftime(week_start, '%Y-%m-%d') AS w, raw_visit_counts FROM weekly_patterns ORDER BY w`)).to.deep.equal([
      { w: '2022-04-11', raw_visit_counts: 21 }, { w: '2022-04-18', raw_visit_counts: 28 }]);
    expect(await queryFile(second.file, 'SELECT count(*)::INTEGER AS n FROM places_core')).to.deep.equal([{ n: 0 }]);
  });

  it('keeps every week when a drop delivers core only', async () => {
    const d1 = await newDrop();
    await writeCsv(path.join(d1, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'One')]);
    await writeCsv(path.join(d1, 'patterns.csv'), WEEKLY_HEADER, [weeklyRow(KEYS[0]!, '2022-04-04', [1, 1, 1, 1, 1, 1, 1]), weeklyRow(KEYS[0]!, '2022-04-11', [2, 2, 2, 2, 2, 2, 2])]);
    await loadDrop({ dataDir, inputs: [d1], month: '2022-04', settings: settings() });
    const d2 = await newDrop();
    await writeCsv(path.join(d2, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Renamed')]);
    const second = await loadDrop({ dataDir, inputs: [d2], month: '2022-05', settings: settings() });
    expect([second.report.weeks_loaded, second.report.weeks_carried_forward, second.report.core_carried_forward]).to.deep.equal([[], 2, false]);
    expect(await queryVersion(dataDir, second.label, (v) => `SELECT strftime(week_start, '%Y-%m-%d') AS w, raw_visit_counts FROM (${weeklyRowsSql(v, 'week_start, raw_visit_counts')}) ORDER BY w`)).to.deep.equal([
      { w: '2022-04-04', raw_visit_counts: 7 }, { w: '2022-04-11', raw_visit_counts: 14 }]);
    expect(await queryFile(second.file, 'SELECT count(*)::INTEGER AS n FROM weekly_patterns')).to.deep.equal([{ n: 0 }]);
    expect(await queryFile(second.file, 'SELECT weekly_rows::INTEGER AS weekly_rows, weeks_covered::INTEGER AS weeks_covered FROM version_info')).to.deep.equal([{ weekly_rows: 2, weeks_covered: 2 }]);
  });

  it('keeps the newest versions up to the retention count, never the current one, the one before it, or the one served until the publish', async () => {
    const loadVersion = async (name: string) => {
      const d = await newDrop();
      await writeCsv(path.join(d, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, name)]);
      return loadDrop({ dataDir, inputs: [d], month: '2022-04', settings: settings(), retain: 2 });
    };
    const labels: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await loadVersion(`v${i}`);
      labels.push(r.label);
      if (i === 3) expect(r.removedVersions).to.deep.equal([labels[1]]);
    }
    expect((await readdir(dataDir)).filter((n) => n.endsWith('.duckdb')).sort()).to.deep.equal(labels.slice(2).map((l) => `${l}.duckdb`));
    // Pointing back at the older one, then loading, keeps the new current, the one built before
    // it and the one served until then (web processes may still be reading it): three, over 2.
    await rollback(siteOf(dataDir), { previous: true });
    const v4 = await loadVersion('v4');
    expect(v4.removedVersions).to.deep.equal([]);
    expect((await readdir(dataDir)).filter((n) => n.endsWith('.duckdb')).sort()).to.deep.equal([labels[2], labels[3], v4.label].map((l) => `${l}.duckdb`));
    // One publish later it is neither, and goes.
    const v5 = await loadVersion('v5');
    expect(v5.removedVersions).to.deep.equal([labels[2], labels[3]]);
    expect((await readdir(dataDir)).filter((n) => n.endsWith('.duckdb')).sort()).to.deep.equal([v4.label, v5.label].map((l) => `${l}.duckdb`));
  });
});

import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { geometryOf, monthOf, poiOf } from '../../tools/synthetic-places.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const POIS = 150;
const SEED = 7;
const MONTHS = ['2022-02-01', '2022-03-01', '2022-04-01'];
const SELECTION = `m: monthly_patterns(start_date: "2022-02-01", end_date: "2022-04-30") { location_name date_range_start date_range_end raw_visit_counts raw_visitor_counts
  visits_by_day popularity_by_hour popularity_by_day related_same_month_brand visitor_home_cbgs normalized_visits_by_total_visits }
  g: placedata_geometry { polygon_wkt polygon_class enclosed is_synthetic includes_parking_lot wkt_area_sq_meters }`;

/** What the API must answer for POI i, from the generator's own functions. */
function expected(i: number) {
  const p = poiOf(SEED, i);
  const m = MONTHS.flatMap((month, k) => {
    const d = monthOf(SEED, p, month, k);
    return d ? [{
      location_name: p.name, date_range_start: d.date_range_start, date_range_end: d.date_range_end, raw_visit_counts: d.raw_visit_counts,
      raw_visitor_counts: d.raw_visitor_counts, visits_by_day: d.visits_by_day, popularity_by_hour: d.popularity_by_hour, popularity_by_day: d.popularity_by_day,
      related_same_month_brand: d.related_same_month_brand, visitor_home_cbgs: d.visitor_home_cbgs, normalized_visits_by_total_visits: d.normalized_visits_by_total_visits,
    }] : [];
  });
  return { placekey: p.placekey, m, g: geometryOf(SEED, p) };
}

describe('npm run gen --months/--geometry: monthly patterns and geometry consistent with core, deterministic by seed, loadable as CSV.gz and Parquet', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    dir = await makeTempDir('gen-monthly');
  });
  after(async () => {
    await removeDir(dir);
  });

  it('writes the same bytes for the same seed, and monthly rows whose visits_by_day has one value per day, summing to raw_visit_counts', async () => {
    const opts = { pois: POIS, weeks: 1, months: 3, firstMonth: '2022-02', geometry: true, format: 'csv.gz' as const, seed: SEED };
    const a = await generateDrop({ ...opts, out: path.join(dir, 'a') });
    const b = await generateDrop({ ...opts, out: path.join(dir, 'b') });
    expect(a.map((f) => path.basename(f))).to.deep.equal(['core_poi-part1.csv.gz', 'patterns-part1.csv.gz', 'monthly_patterns-part1.csv.gz', 'geometry-part1.csv.gz']);
    for (let k = 0; k < a.length; k++) expect((await readFile(a[k]!)).equals(await readFile(b[k]!)), a[k]).to.equal(true);
    const other = await generateDrop({ ...opts, seed: SEED + 1, out: path.join(dir, 'c') });
    expect((await readFile(a[2]!)).equals(await readFile(other[2]!))).to.equal(false);
    let rows = 0;
    for (let i = 0; i < POIS; i++) {
      for (const month of expected(i).m) {
        const [y, mo] = [Number(month.date_range_start.slice(0, 4)), Number(month.date_range_start.slice(5, 7))];
        expect(month.visits_by_day.length).to.equal(new Date(Date.UTC(y, mo, 0)).getUTCDate());
        expect(month.visits_by_day.reduce((s, v) => s + v, 0)).to.equal(month.raw_visit_counts);
        rows++;
      }
    }
    expect(rows).to.be.greaterThan(POIS * 2.5);
  });

  for (const format of ['csv.gz', 'parquet'] as const) {
    it(`${format}: loads with nothing rejected and serves every month and footprint as generated (DST months keep each end's offset)`, async () => {
      const drop = path.join(dir, `load-${format}`);
      await generateDrop({ pois: POIS, weeks: 1, months: 3, firstMonth: '2022-02', geometry: true, format, seed: SEED, out: drop });
      const config = testConfig(path.join(dir, `data-${format}`));
      const { report } = await loadDrop({ dataDir: config.dataDir, inputs: [drop], month: null, settings: buildSettingsOf(config) });
      const all = Array.from({ length: POIS }, (_, i) => expected(i));
      const monthRows = all.reduce((s, e) => s + e.m.length, 0);
      const geoRows = all.filter((e) => e.g).length;
      expect([report.products.monthly?.rows_loaded, report.products.monthly?.rejected_total, report.products.geometry?.rows_loaded, report.products.geometry?.rejected_total, report.months_loaded])
        .to.deep.equal([monthRows, 0, geoRows, 0, MONTHS]);
      const server = await startServer(config, createLogger('silent', 'test'));
      try {
        const res = await postGraphql(server.url, { query: `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey ${SELECTION} } }`, variables: { k: all.map((e) => e.placekey) } });
        expect(res.body.errors).to.equal(undefined);
        expect(res.body.data.batch_lookup).to.deep.equal(all);
        const march = all.flatMap((e) => e.m).filter((m) => m.date_range_start.startsWith('2022-03') && m.date_range_start.endsWith('-05:00'));
        expect(march.length).to.be.greaterThan(0);
        for (const m of march) expect(m.date_range_end.slice(-6)).to.equal('-04:00');
      } finally {
        await server.close();
      }
    });
  }
});

import { expect } from 'chai';
import path from 'node:path';
import { startServer, type RunningServer } from '../../api/server.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { generateDrop } from '../../tools/generate-drop.ts';
import { addDays, poiOf, weekOf } from '../../tools/synthetic-places.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const SEED = 5;
const POIS = 30;
const WEEKS = 70; // past the width at which the serving tables are built on one thread
const FIRST_WEEK = '2021-01-04';

describe('a version with 70 weeks of history (serving tables built on one thread)', function () {
  this.timeout(120_000);
  let dir: string;
  let server: RunningServer;
  let label: string;

  before(async () => {
    dir = await makeTempDir('wide-history');
    const out = path.join(dir, 'drop');
    await generateDrop({ pois: POIS, weeks: WEEKS, out, format: 'csv.gz', seed: SEED, firstWeek: FIRST_WEEK });
    const config = testConfig(path.join(dir, 'data'));
    label = (await loadDrop({ dataDir: config.dataDir, inputs: [out], month: '2022-04', settings: buildSettingsOf(config) })).label;
    server = await startServer(config, createLogger('silent', 'test'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  it('answers the first, a middle and the last week, spec fields and other delivered columns, as generated', async () => {
    const keys = [0, 7, 29].map((i) => poiOf(SEED, i).placekey);
    for (const index of [0, 35, WEEKS - 1]) {
      const week = addDays(FIRST_WEEK, 7 * index);
      const res = await postGraphql(server.url, {
        query: `query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_weekly_patterns(date: "${week}") {
          date_range_start date_range_end raw_visit_counts raw_visitor_counts visits_by_day visits_by_each_hour median_dwell } } }`,
        variables: { k: keys },
      });
      const expected = [0, 7, 29].map((i) => {
        const w = weekOf(SEED, poiOf(SEED, i), week, index);
        return {
          placekey: poiOf(SEED, i).placekey,
          placedata_weekly_patterns: w && {
            date_range_start: w.date_range_start, date_range_end: w.date_range_end, raw_visit_counts: w.raw_visit_counts,
            raw_visitor_counts: w.raw_visitor_counts, visits_by_day: w.visits_by_day, visits_by_each_hour: w.visits_by_each_hour, median_dwell: w.median_dwell,
          },
        };
      });
      expect(res.body).to.deep.equal({ data: { batch_lookup: expected }, extensions: { row_count: 3, version_date: label } });
    }
  });

  it('lists all 70 weeks in dataset_versions', async () => {
    const res = await postGraphql(server.url, { query: '{ dataset_versions { weeks_covered first_week last_week } }' });
    expect(res.body.data.dataset_versions).to.deep.equal([{ weeks_covered: WEEKS, first_week: FIRST_WEEK, last_week: addDays(FIRST_WEEK, 7 * (WEEKS - 1)) }]);
  });
});

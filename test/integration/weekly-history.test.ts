import { expect } from 'chai';
import type { RunningServer } from '../../api/server.ts';
import { expectedWeekly, type DemoFixture } from '../helpers/demo-fixture.ts';
import { postGraphql, WEEKLY_FIELDS } from '../helpers/graphql-client.ts';
import { demoServer } from '../helpers/demo-server.ts';
import { removeDir } from '../helpers/temp-dir.ts';

describe('weekly history: placedata_weekly_patterns_range and the v2 weekly_patterns', () => {
  let dir: string;
  let fixture: DemoFixture;
  let server: RunningServer;
  let label: string;
  const UNKNOWN = '222-222@5vg-7gq-tvz';
  const WEEKS = ['2022-03-07', '2022-03-14', '2022-03-21', '2022-03-28'];

  before(async () => {
    ({ dir, fixture, label, server } = await demoServer('history'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  const rowsOf = (k: string, weeks: readonly string[]) => weeks.flatMap((w) => fixture.weekly.filter((r) => r['placekey'] === k && r['date_range_start']!.startsWith(w)))
    .map((r) => ({ placekey: k, ...expectedWeekly(r) }));
  /** POIs with data in every week, and one with a gap, so the lists differ in length. */
  const full = () => fixture.core.map((r) => r['placekey']!).filter((k) => rowsOf(k, WEEKS).length === 4);
  const gappy = () => fixture.core.map((r) => r['placekey']!).find((k) => rowsOf(k, WEEKS).length === 2 || rowsOf(k, WEEKS).length === 3)!;
  const query = (field: string, start: string, end: string) => `query($k: [Placekey!]) { batch_lookup(placekeys: $k) {
    placekey ${field}(start_date: "${start}", end_date: "${end}") { placekey ${WEEKLY_FIELDS} } } }`;

  it('returns every week with data overlapping the range, oldest first, under both names; [] for a POI without any', async () => {
    const keys = [full()[0]!, gappy(), UNKNOWN];
    expect(rowsOf(keys[1]!, WEEKS).length).to.be.oneOf([2, 3]);
    for (const field of ['placedata_weekly_patterns_range', 'weekly_patterns']) {
      const res = await postGraphql(server.url, { query: query(field, '2022-03-01', '2022-03-31'), variables: { k: keys } });
      expect(res.body, field).to.deep.equal({
        data: { batch_lookup: keys.map((k) => ({ placekey: k, [field]: rowsOf(k, WEEKS) })) },
        extensions: { row_count: 3, version_date: label },
      });
    }
  });

  it('takes the weeks the days overlap (any day selects its week, both ends included), and [] outside the data', async () => {
    const k = full()[1]!;
    const cases: [string, string, string[]][] = [
      ['2022-03-16', '2022-03-22', ['2022-03-14', '2022-03-21']],
      ['2022-03-13', '2022-03-13', ['2022-03-07']],
      ['2022-03-28', '2022-04-03', ['2022-03-28']],
      ['2022-01-01', '2022-03-06', []],
      ['2022-04-04', '2022-12-31', []],
    ];
    for (const [start, end, weeks] of cases) {
      const res = await postGraphql(server.url, { query: query('weekly_patterns', start, end), variables: { k: [k] } });
      expect(res.body.data, `${start}..${end}`).to.deep.equal({ batch_lookup: [{ placekey: k, weekly_patterns: rowsOf(k, weeks) }] });
    }
  });

  it('allows 53 weeks, refuses 54 with RANGE_TOO_LONG, a start after the end or a bad date with BAD_DATE', async () => {
    const k = full()[0]!;
    const ok = await postGraphql(server.url, { query: query('weekly_patterns', '2021-03-29', '2022-04-03'), variables: { k: [k] } });
    expect(ok.body.data).to.deep.equal({ batch_lookup: [{ placekey: k, weekly_patterns: rowsOf(k, WEEKS) }] });
    const refusals: [string, string, string, string][] = [
      ['2021-03-28', '2022-04-03', 'RANGE_TOO_LONG', 'a date range may cover at most 53 weeks; 2021-03-28 to 2022-04-03 covers 54'],
      ['2022-03-20', '2022-03-19', 'BAD_DATE', 'start_date must not be after end_date; got 2022-03-20 and 2022-03-19'],
      ['2022-02-30', '2022-03-19', 'BAD_DATE', 'date must be a calendar date written YYYY-MM-DD; got "2022-02-30"'],
    ];
    for (const [start, end, code, message] of refusals) {
      const res = await postGraphql(server.url, { query: query('placedata_weekly_patterns_range', start, end), variables: { k: [k] } });
      expect(res.body).to.deep.equal({
        errors: [{ message, locations: [{ line: 1, column: 26 }], path: ['batch_lookup'], extensions: { code } }],
        data: { batch_lookup: null },
        extensions: { row_count: 0, version_date: label },
      });
    }
  });

  it('mixes a range with single weeks and core in one request', async () => {
    const k = full()[2]!;
    const q = `query($k: Placekey!) { lookup(placekey: $k) { placekey
      one: placedata_weekly_patterns(date: "2022-03-08") { raw_visit_counts }
      history: placedata_weekly_patterns_range(start_date: "2022-03-14", end_date: "2022-03-27") { date_range_start raw_visit_counts }
      placedata_core { city } } }`;
    const res = await postGraphql(server.url, { query: q, variables: { k } });
    const pick = (r: { date_range_start: string | undefined; raw_visit_counts: number }) => ({ date_range_start: r.date_range_start, raw_visit_counts: r.raw_visit_counts });
    expect(res.body.data).to.deep.equal({ lookup: {
      placekey: k,
      one: { raw_visit_counts: rowsOf(k, ['2022-03-07'])[0]!.raw_visit_counts },
      history: rowsOf(k, ['2022-03-14', '2022-03-21']).map(pick),
      placedata_core: { city: fixture.core.find((r) => r['placekey'] === k)!['city'] },
    } });
  });
});

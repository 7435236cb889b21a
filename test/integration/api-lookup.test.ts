import { expect } from 'chai';
import type { RunningServer } from '../../api/server.ts';
import { expectedCore, expectedWeekly, type DemoFixture } from '../helpers/demo-fixture.ts';
import { demoServer } from '../helpers/demo-server.ts';
import { CORE_FIELDS, CORE_QUERY, postGraphql, weeklyQuery, WEEKLY_FIELDS } from '../helpers/graphql-client.ts';
import { removeDir } from '../helpers/temp-dir.ts';

describe('batch_lookup over HTTP on the demo drop', () => {
  let dir: string;
  let fixture: DemoFixture;
  let server: RunningServer;
  let label: string;
  const UNKNOWN = '222-222@5vg-7gq-tvz';

  before(async () => {
    ({ dir, fixture, label, server } = await demoServer('api'));
  });

  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  const coreRow = (i: number) => fixture.core[i]!;
  const weeklyRow = (placekey: string, week: string) => fixture.weekly.find((r) => r['placekey'] === placekey && r['date_range_start']!.startsWith(week));

  it('answers the spec core-only query with the whole envelope, in request order, repeats and unknowns included', async () => {
    const keys = [coreRow(0)['placekey']!, UNKNOWN, coreRow(7)['placekey']!, coreRow(0)['placekey']!];
    const res = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: keys } });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      data: {
        batch_lookup: [
          { placekey: keys[0], placedata_core: expectedCore(coreRow(0)) },
          { placekey: UNKNOWN, placedata_core: null },
          { placekey: keys[2], placedata_core: expectedCore(coreRow(7)) },
          { placekey: keys[0], placedata_core: expectedCore(coreRow(0)) },
        ],
      },
      extensions: { row_count: 4, version_date: label },
    });
  });

  it('answers the spec weekly-only query for the week holding any day of it', async () => {
    const withData = fixture.core.map((r) => r['placekey']!).filter((k) => weeklyRow(k, '2022-03-14')).slice(0, 3);
    for (const date of ['2022-03-14', '2022-03-16', '2022-03-20']) {
      const res = await postGraphql(server.url, { query: weeklyQuery(date), variables: { placekeys: withData } });
      expect(res.body, date).to.deep.equal({
        data: { batch_lookup: withData.map((k) => ({ placekey: k, placedata_weekly_patterns: expectedWeekly(weeklyRow(k, '2022-03-14')!) })) },
        extensions: { row_count: 3, version_date: label },
      });
    }
  });

  it('keeps offsets as delivered across a DST change and in every time zone', async () => {
    const rows = fixture.weekly.filter((r) => r['date_range_start']!.startsWith('2022-03-07'));
    const offsets = new Set(rows.map((r) => r['date_range_start']!.slice(19) + ' ' + r['date_range_end']!.slice(19)));
    expect([...offsets].sort()).to.deep.equal(['-05:00 -04:00', '-06:00 -05:00', '-07:00 -07:00', '-08:00 -07:00', '-09:00 -08:00', '-10:00 -10:00']);
    const byOffset = [...offsets].map((o) => rows.find((r) => r['date_range_start']!.slice(19) + ' ' + r['date_range_end']!.slice(19) === o)!);
    const res = await postGraphql(server.url, { query: weeklyQuery('2022-03-07'), variables: { placekeys: byOffset.map((r) => r['placekey']) } });
    expect(res.body.data.batch_lookup).to.deep.equal(byOffset.map((r) => ({ placekey: r['placekey'], placedata_weekly_patterns: expectedWeekly(r) })));
  });

  it('serves the newest week when date is omitted, and null for a week without data', async () => {
    const missing = fixture.core.map((r) => r['placekey']!).find((k) => !weeklyRow(k, '2022-03-28'))!;
    const present = fixture.core.map((r) => r['placekey']!).find((k) => weeklyRow(k, '2022-03-28'))!;
    const query = `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_weekly_patterns { ${WEEKLY_FIELDS} } } }`;
    const res = await postGraphql(server.url, { query, variables: { placekeys: [present, missing] } });
    expect(res.body).to.deep.equal({
      data: { batch_lookup: [
        { placekey: present, placedata_weekly_patterns: expectedWeekly(weeklyRow(present, '2022-03-28')!) },
        { placekey: missing, placedata_weekly_patterns: null },
      ] },
      extensions: { row_count: 2, version_date: label },
    });
    const before = await postGraphql(server.url, { query: weeklyQuery('2021-01-04'), variables: { placekeys: [present] } });
    expect(before.body.data).to.deep.equal({ batch_lookup: [{ placekey: present, placedata_weekly_patterns: null }] });
  });

  it('returns both products, two weeks through aliases, and fragments, with only the selected fields', async () => {
    const k = coreRow(3)['placekey']!;
    const query = `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) {
      placekey ...core
      first: placedata_weekly_patterns(date: "2022-03-07") { raw_visit_counts }
      last: placedata_weekly_patterns(date: "2022-03-28") { ... on WeeklyPatterns { visits_by_day date_range_start } }
    } }
    fragment core on PlaceEntry { placedata_core { city naics_code } }`;
    const res = await postGraphql(server.url, { query, variables: { placekeys: [k] } });
    const w1 = weeklyRow(k, '2022-03-07');
    const w4 = weeklyRow(k, '2022-03-28');
    expect(res.body).to.deep.equal({
      data: { batch_lookup: [{
        placekey: k,
        placedata_core: { city: coreRow(3)['city'], naics_code: Number(coreRow(3)['naics_code']) },
        first: w1 ? { raw_visit_counts: Number(w1['raw_visit_counts']) } : null,
        last: w4 ? { visits_by_day: JSON.parse(w4['visits_by_day']!), date_range_start: w4['date_range_start'] } : null,
      }] },
      extensions: { row_count: 1, version_date: label },
    });
  });

  it('answers an empty list, and an omitted list, with no entries', async () => {
    for (const variables of [{ placekeys: [] }, {}]) {
      const res = await postGraphql(server.url, { query: CORE_QUERY, variables });
      expect(res.body).to.deep.equal({ data: { batch_lookup: [] }, extensions: { row_count: 0, version_date: label } });
    }
  });

  it('keeps postal codes with leading zeros as text', async () => {
    const boston = fixture.core.find((r) => r['postal_code']!.startsWith('0'))!;
    const res = await postGraphql(server.url, { query: CORE_QUERY, variables: { placekeys: [boston['placekey']] } });
    expect(res.body.data.batch_lookup[0].placedata_core.postal_code).to.equal(boston['postal_code']);
    expect(boston['postal_code']).to.match(/^0\d{4}$/);
  });

  it('answers 1000 placekeys (the default limit) in one request', async () => {
    const keys = Array.from({ length: 1000 }, (_, i) => fixture.core[i % fixture.core.length]!['placekey']!);
    const res = await postGraphql(server.url, { query: `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_core { ${CORE_FIELDS} } } }`, variables: { placekeys: keys } });
    expect(res.body.extensions).to.deep.equal({ row_count: 1000, version_date: label });
    expect(res.body.data.batch_lookup.map((e: { placekey: string }) => e.placekey)).to.deep.equal(keys);
    expect(res.body.data.batch_lookup[999].placedata_core).to.deep.equal(expectedCore(fixture.core[999 % fixture.core.length]!));
  });

  it('answers health and readiness without a key', async () => {
    expect(await (await fetch(`${server.url}/healthz`)).json()).to.deep.equal({ status: 'ok' });
    expect(await (await fetch(`${server.url}/readyz`)).json()).to.deep.equal({ status: 'ready', version_date: label });
  });
});

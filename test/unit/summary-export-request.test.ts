import { expect } from 'chai';
import { parseSummaryExport, summaryExportCost } from '../../api/export/summary-export-request.ts';

describe('a summary export\'s request (api/export/summary-export-request.ts)', () => {
  it('reads the body as /v1\'s arguments, with the values to add', () => {
    const ask = parseSummaryExport({
      filter: { region: 'MA', naics_code: 7225 }, placekeys: ['zzw-222@5vg-7gq-5mk'], weeks: { from: '2022-01-03', to: '2022-01-30' },
      group_by: ['brand', 'week', 'brand'], order_by: { value: 'pois', direction: 'ASC' }, values: ['visits_by_day', 'median_dwell'],
    }, { format: 'parquet' }, 1000);
    expect({ ...ask, lists: [...ask.lists], stats: [...ask.stats] }).to.deep.equal({
      format: 'parquet', filter: { region: 'MA', naics_code: 7225 }, placekeys: ['zzw-222@5vg-7gq-5mk'], weeks: { from: '2022-01-03', to: '2022-01-30' },
      groupBy: ['brand', 'week'], order: { value: 'pois', descending: false }, lists: ['visits_by_day'], stats: ['median_dwell'],
    });
    const plain = parseSummaryExport({}, {}, 1000);
    expect({ ...plain, lists: [...plain.lists], stats: [...plain.stats] }).to.deep.equal({
      format: 'csv', filter: null, placekeys: null, weeks: null, groupBy: [], order: { value: null, descending: false }, lists: [], stats: [],
    });
  });

  it('costs what the same summary costs through GraphQL: 100 points a week of its range, one week without one', () => {
    const cost = (weeks: unknown) => summaryExportCost(parseSummaryExport(weeks === undefined ? {} : { weeks }, {}, 1000));
    expect([cost(undefined), cost({ from: '2022-01-03', to: '2022-01-09' }), cost({ from: '2022-01-01', to: '2022-01-30' }), cost({ from: '2020-01-06', to: '2021-12-27' })])
      .to.deep.equal([100, 100, 500, 10_400]); // 2022-01-01 is a Saturday: its week begins 2021-12-27
  });

  it('refuses more Placekeys than the batch limit, and a repeated format', () => {
    const refusal = (body: unknown, query: Record<string, unknown>) => {
      try {
        parseSummaryExport(body, query, 2);
        return null;
      } catch (err) {
        return [(err as { code: string }).code, (err as Error).message];
      }
    };
    expect(refusal({ placekeys: ['zzw-222@5vg-7gq-5mk', 'zzw-222@5vg-7gq-5mk', 'zzw-222@5vg-7gq-5mk'] }, {})).to.deep.equal(['BATCH_TOO_LARGE', 'placekeys may list at most 2 Placekeys; got 3']);
    expect(refusal({}, { format: ['csv', 'csv'] })).to.deep.equal(['BAD_REQUEST', 'format must be csv, ndjson or parquet; got ["csv","csv"]']);
    expect(refusal({}, { region: 'MA' })).to.deep.equal(['BAD_REQUEST', 'Unknown parameter "region": /v1/export/summary takes format']);
  });
});

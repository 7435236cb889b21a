import { expect } from 'chai';
import { productsOf } from '../../ingest/drop/drop-files.ts';
import { AppError } from '../../shared/errors.ts';
import { monthOfDateArg, monthsOfRange } from '../../shared/months.ts';

describe('month rules', () => {
  it('snaps any day of a month to its 1st, and lists the months a range overlaps, oldest first, across years', () => {
    expect(['2022-02-01', '2022-02-28', '2024-02-29', '2021-12-31'].map(monthOfDateArg)).to.deep.equal(['2022-02-01', '2022-02-01', '2024-02-01', '2021-12-01']);
    expect(monthsOfRange('2021-11-30', '2022-02-01')).to.deep.equal(['2021-11-01', '2021-12-01', '2022-01-01', '2022-02-01']);
    expect(monthsOfRange('2022-03-31', '2022-03-31')).to.deep.equal(['2022-03-01']);
    expect(monthsOfRange('2020-01-01', '2022-12-31')).to.have.length(36);
  });

  it('refuses a bad date, a start after the end (BAD_DATE) and more than 36 months (RANGE_TOO_LONG)', () => {
    const refusals: [string, string, string, string][] = [
      ['2022-02-29', '2022-03-01', 'BAD_DATE', 'date must be a calendar date written YYYY-MM-DD; got "2022-02-29"'],
      ['2022-03-02', '2022-03-01', 'BAD_DATE', 'start_date must not be after end_date; got 2022-03-02 and 2022-03-01'],
      ['2019-12-31', '2022-12-01', 'RANGE_TOO_LONG', 'a date range may cover at most 36 months; 2019-12-31 to 2022-12-01 covers 37'],
    ];
    for (const [start, end, code, message] of refusals) {
      expect(() => monthsOfRange(start, end)).to.throw(AppError, message).with.property('code', code);
    }
  });
});

describe('which products a file carries (by header, and the file name for a cut of monthly columns)', () => {
  const cols = (names: string) => new Map(names.split(' ').map((n) => [n, n]));
  const PATTERNS = 'placekey date_range_start date_range_end raw_visit_counts visits_by_day';
  const CORE = 'placekey location_name naics_code top_category';
  it('tells weekly, monthly, core, combined, core+monthly and geometry files apart', () => {
    const cases: [string, string, string][] = [
      ['patterns-part1.csv.gz', `${PATTERNS} related_same_week_brand popularity_by_day`, 'weekly'],
      ['patterns-part1.csv.gz', `${PATTERNS} related_same_month_brand`, 'monthly'],
      ['monthly_patterns-part1.csv.gz', PATTERNS, 'monthly'],
      ['2022-03-patterns.csv', PATTERNS, 'weekly'],
      ['monthly_export.csv', `${PATTERNS} visits_by_each_hour`, 'weekly'],
      ['core_poi-part1.csv.gz', `${CORE} polygon_wkt`, 'core'],
      ['shop.csv', `${CORE} ${PATTERNS}`, 'combined'],
      ['shop.csv', `${CORE} ${PATTERNS} related_same_month_brand`, 'core+monthly'],
      ['geometry.csv', 'placekey polygon_wkt polygon_class', 'geometry'],
    ];
    for (const [name, header, products] of cases) expect(productsOf(name, cols(header)), `${name}: ${header}`).to.equal(products);
  });

  it('refuses a file of no known product, naming what it looked for', () => {
    expect(() => productsOf('x.csv', cols('placekey something'))).to.throw(AppError,
      'x.csv: columns match neither core places (location_name with naics_code, top_category or sub_category), patterns (date_range_start with raw_visit_counts, raw_visitor_counts or visits_by_day) nor geometry (polygon_wkt, polygon_class or wkt_area_sq_meters)');
  });
});

import { expect } from 'chai';
import { parseIsoDate, weekOfDateArg } from '../../shared/weeks.ts';
import { AppError } from '../../shared/errors.ts';

describe('week rules', () => {
  it('snaps any day of a week to its Monday', () => {
    expect(weekOfDateArg('2022-04-18')).to.equal('2022-04-18');
    expect(weekOfDateArg('2022-04-20')).to.equal('2022-04-18');
    expect(weekOfDateArg('2022-04-24')).to.equal('2022-04-18');
    expect(weekOfDateArg('2022-04-25')).to.equal('2022-04-25');
    expect(weekOfDateArg('2021-01-01')).to.equal('2020-12-28');
    expect(weekOfDateArg('2024-03-03')).to.equal('2024-02-26');
  });

  it('refuses anything but a real YYYY-MM-DD date with BAD_DATE', () => {
    for (const bad of ['2022-02-29', '2022-13-01', '2022-4-18', '18/04/2022', '2022-04-18T00:00:00', ' 2022-04-18', '']) {
      expect(parseIsoDate(bad), bad).to.equal(null);
      expect(() => weekOfDateArg(bad)).to.throw(AppError, `date must be a calendar date written YYYY-MM-DD; got ${JSON.stringify(bad)}`)
        .with.property('code', 'BAD_DATE');
    }
    expect(parseIsoDate('2024-02-29')?.toISOString()).to.equal('2024-02-29T00:00:00.000Z');
  });
});

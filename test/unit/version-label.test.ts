import { expect } from 'chai';
import { labelFromFileName, makeLabel, parseLabel } from '../../versions/version-label.ts';

describe('version labels', () => {
  it('names a version by build epoch and release month', () => {
    expect(makeLabel(1650000000, '2022-04')).to.equal('1650000000__2022_04');
    expect(parseLabel('1650000000__2022_04')).to.deep.equal({ label: '1650000000__2022_04', builtAtEpoch: 1650000000, releaseMonth: '2022-04' });
    expect(labelFromFileName('1650000000__2022_04.duckdb')?.label).to.equal('1650000000__2022_04');
  });

  it('refuses what is not a label', () => {
    for (const bad of ['1650000000__2022_13', '1650000000_2022_04', 'x__2022_04', '1650000000__2022_4', '']) expect(parseLabel(bad), bad).to.equal(null);
    expect(labelFromFileName('.building-1-ab.duckdb')).to.equal(null);
    expect(labelFromFileName('1650000000__2022_04.duckdb.wal')).to.equal(null);
    expect(() => makeLabel(1, '2022-4')).to.throw('release month must be YYYY-MM; got "2022-4"');
  });
});

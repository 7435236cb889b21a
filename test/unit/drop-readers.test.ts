import { expect } from 'chai';
import { DROP_READERS, readerFor } from '../../ingest/drop/drop-readers.ts';

describe('drop readers (ingest/drop/drop-readers.ts): a file is read by the reader its name matches', () => {
  it('gives delimited text (maybe gzipped) to the CSV reader, Parquet to its own, and no reader to anything else', () => {
    const names = [
      'core_poi.csv', 'CORE_POI.CSV', 'patterns-part1.csv.gz', 'PATTERNS.CSV.GZ', 'geometry.tsv', 'weekly.txt.gz',
      'core.parquet', 'Core.PARQUET', 'core.parquet.gz', 'notes.md', 'core.csv.zip', 'core.json', 'csv', '.csv.gz.bak',
    ];
    expect(names.map((n) => [n, readerFor(n)?.format ?? null])).to.deep.equal([
      ['core_poi.csv', 'csv'], ['CORE_POI.CSV', 'csv'], ['patterns-part1.csv.gz', 'csv'], ['PATTERNS.CSV.GZ', 'csv'], ['geometry.tsv', 'csv'], ['weekly.txt.gz', 'csv'],
      ['core.parquet', 'parquet'], ['Core.PARQUET', 'parquet'], ['core.parquet.gz', null], ['notes.md', null], ['core.csv.zip', null], ['core.json', null], ['csv', null], ['.csv.gz.bak', null],
    ]);
  });

  it('lists each format once, and no name is matched by two readers', () => {
    expect(DROP_READERS.map((r) => r.format)).to.deep.equal(['parquet', 'csv']);
    for (const name of ['a.csv', 'a.csv.gz', 'a.tsv', 'a.txt', 'a.parquet']) {
      expect(DROP_READERS.filter((r) => r.matches(name)).map((r) => r.format), name).to.have.length(1);
    }
  });
});

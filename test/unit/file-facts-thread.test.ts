import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { CSV_LIMITS } from '../../ingest/drop/csv-header.ts';
import { readFileFacts } from '../../ingest/drop/file-facts-thread.ts';
import { fileFacts, type FileFacts } from '../../ingest/drop/file-facts.ts';
import { AppError } from '../../shared/errors.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

/** Over the size read on a thread of its own (file-facts-thread.ts reads smaller files in place). */
const LARGE = 17 << 20;

/** CSV text of about `bytes` bytes: a header, rows of hex (little for gzip to squeeze), one record over the line limit. */
function csvOf(bytes: number, header = 'placekey,location_name,note'): Buffer {
  const rows: string[] = [header];
  let size = header.length + 1;
  for (let i = 0; size < bytes; i++) {
    const row = i === 3 ? `k${i},"${'x'.repeat(CSV_LIMITS.maxLineBytes)}",long` : `k${i},"${randomBytes(96).toString('hex')}",""""`;
    rows.push(row);
    size += row.length + 1;
  }
  return Buffer.from(rows.join('\n') + '\n');
}

/** Both passes over one file: on a thread (it is large) and in place; each its facts or its refusal. */
async function bothWays(file: string, reading: 'text' | 'csv', gzip: boolean): Promise<[unknown, unknown]> {
  const source = { path: file, readPath: file, bytes: (await stat(file)).size };
  expect(source.bytes).to.be.greaterThan(16 << 20);
  const settle = (p: Promise<FileFacts>) => p.then((facts) => ({ facts }), (err: unknown) => ({ refused: err }));
  return [await settle(readFileFacts(source, reading, gzip)), await settle(fileFacts(source, reading, gzip))];
}

describe('the identity pass on a thread of its own: what it finds and refuses, as in place', () => {
  let dir = '';
  before(async () => {
    dir = await makeTempDir('facts-thread');
  });
  after(() => removeDir(dir));

  it('a large CSV, plain and gzipped: digest, encoding, header, records and the long record alike', async () => {
    const text = csvOf(LARGE);
    await writeFile(path.join(dir, 'core.csv'), text);
    await writeFile(path.join(dir, 'core.csv.gz'), gzipSync(Buffer.concat([text, text, text]), { level: 1 }));
    for (const [name, gzip] of [['core.csv', false], ['core.csv.gz', true]] as const) {
      const [threaded, inPlace] = await bothWays(path.join(dir, name), 'csv', gzip);
      expect(threaded).to.deep.equal(inPlace);
      const { facts } = threaded as { facts: FileFacts };
      expect(facts.encoding).to.equal('utf-8');
      expect(facts.csv!.header).to.deep.equal({ dialect: { delimiter: ',', newline: '\n' }, names: ['placekey', 'location_name', 'note'] });
      expect(facts.csv!.records!.long).to.have.length(gzip ? 3 : 1);
    }
  });

  it('a refused header stays an AppError with its code inside the facts', async () => {
    const file = path.join(dir, 'bad-header.csv');
    await writeFile(file, csvOf(LARGE, Array.from({ length: CSV_LIMITS.maxColumns + 1 }, (_, i) => `c${i}`).join(',')));
    const [threaded, inPlace] = await bothWays(file, 'csv', false);
    const header = (threaded as { facts: FileFacts }).facts.csv!.header;
    expect(header).to.be.instanceOf(AppError);
    expect({ code: (header as AppError).code, message: (header as AppError).message }).to.deep.equal({
      code: 'BAD_DROP',
      message: ((inPlace as { facts: FileFacts }).facts.csv!.header as AppError).message,
    });
    expect((header as AppError).message).to.equal(`bad-header.csv: the header names ${CSV_LIMITS.maxColumns + 1} columns, over the limit of ${CSV_LIMITS.maxColumns}`);
  });

  it('a gzip file cut short is refused with the same AppError', async () => {
    const file = path.join(dir, 'cut.csv.gz');
    const whole = gzipSync(csvOf(LARGE * 2), { level: 1 });
    await writeFile(file, whole.subarray(0, whole.length - 1000));
    const [threaded, inPlace] = await bothWays(file, 'text', true);
    const err = (threaded as { refused: AppError }).refused;
    expect(err).to.be.instanceOf(AppError);
    expect({ code: err.code, message: err.message }).to.deep.equal({ code: 'BAD_DROP', message: 'cut.csv.gz: not a complete gzip file (unexpected end of file)' });
    expect(err.message).to.equal((inPlace as { refused: Error }).refused.message);
  });

  it('a file that is gone is refused naming it', async () => {
    const file = path.join(dir, 'core.csv');
    const source = { path: path.join(dir, 'gone.csv'), readPath: path.join(dir, 'gone.csv'), bytes: (await readFile(file)).length };
    const err = await readFileFacts(source, 'csv', false).then(() => null, (e: unknown) => e as AppError);
    expect(err).to.be.instanceOf(AppError);
    expect(err!.code).to.equal('BAD_DROP');
    expect(err!.message).to.match(/gone\.csv/);
  });
});

import { expect } from 'chai';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { startServer } from '../../api/server.ts';
import { buildInstanceOptions } from '../../ingest/build/build-instance-options.ts';
import { confineLoad } from '../../ingest/build/confine-load.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { createLogger } from '../../shared/logger.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { postGraphql } from '../helpers/graphql-client.ts';
import { writeParquetNamed } from '../helpers/parquet-names.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { poiOf } from '../../tools/synthetic-places.ts';
import { windows1252 } from '../helpers/windows-1252.ts';
import { coreRow, CORE_HEADER, KEYS, writeCsv } from '../helpers/write-csv.ts';

/** Header names made to break out of every quoting context of SQL (all lower-case: the load lower-cases names). */
const HOSTILE = [
  "owner's_note",
  "x', (select content from read_text('/etc/hostname')), 'y",
  'double"quote',
  'back\\slash\\\'',
  'semi;colon; drop table places_core;',
  '-- dash comment',
  '/* block */ comment',
  '"); select 1; --',
  'ünïcødé 名前 🚀',
];

const field = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const line = (values: readonly (string | number)[]) => values.map((v) => field(String(v))).join(',');

describe('hostile and damaged drops: a header is data, a bad row costs one row, the load reads only the drop', function () {
  this.timeout(120_000);
  let dir: string;
  let n = 0;
  const newDrop = async () => {
    const d = path.join(dir, `drop${++n}`);
    await mkdir(d);
    return d;
  };
  const load = (dataDir: string, drop: string) => loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings: buildSettingsOf(testConfig(dataDir)) });
  const refusal = async (drop: string) => {
    const dataDir = path.join(dir, `data${++n}`);
    const err = await load(dataDir, drop).then(() => null, (e: unknown) => e) as { code: string; message: string } | null;
    expect(await readPointer(dataDir)).to.equal(null);
    return err && { code: err.code, message: err.message };
  };

  before(async () => {
    dir = await makeTempDir('hostile');
  });
  after(() => removeDir(dir));

  it('header names that break out of every quoting context load as columns of exactly those names, served as delivered', async () => {
    const drop = await newDrop();
    const values = HOSTILE.map((_, i) => i % 2 ? `'); drop table x; -- ${i}` : `value "${i}" \\ ;`);
    await writeFile(path.join(drop, 'core.csv'), [line([...CORE_HEADER, ...HOSTILE]), line([...coreRow(KEYS[0]!, 'Hostile'), ...values])].join('\n') + '\n');
    const dataDir = path.join(dir, 'hostile-data');
    const { label, report } = await load(dataDir, drop);
    expect(report.products.core).to.deep.include({ rows_read: 1, rows_loaded: 1, rejected_total: 0 });
    const server = await startServer(testConfig(dataDir), createLogger('silent', 'test'));
    try {
      const res = await postGraphql(server.url, { query: 'query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_core { location_name other_columns } } }', variables: { k: [KEYS[0]] } });
      expect(res.body).to.deep.equal({
        data: { batch_lookup: [{ placekey: KEYS[0], placedata_core: { location_name: 'Hostile', other_columns: Object.fromEntries(HOSTILE.map((h, i) => [h, values[i]])) } }] },
        extensions: { row_count: 1, version_date: label },
      });
    } finally {
      await server.close();
    }
    // Nothing else happened: the machine's host name is nowhere in the version file.
    const bytes = await readFile(path.join(dataDir, `${label}.duckdb`));
    expect(bytes.includes(Buffer.from(hostname()))).to.equal(false);
  });

  it('names that cannot be told apart are refused by name: a newline, a NUL, and one column named twice', async () => {
    const cases: [string, string][] = [
      ['bad\nname', 'core.csv: the name of column 11 ("bad\\nname") holds a control character (U+000A); column names must be printable text'],
      ['nul\u0000name', 'core.csv: the name of column 11 ("nul\\u0000name") holds a control character (U+0000); column names must be printable text'],
      [' Location_Name ', 'core.csv: the header names column "location_name" twice (columns 2 and 11; names are compared trimmed and lower-cased)'],
    ];
    for (const [name, message] of cases) {
      const drop = await newDrop();
      await writeFile(path.join(drop, 'core.csv'), [line([...CORE_HEADER, name]), line([...coreRow(KEYS[0]!, 'A'), 'v'])].join('\n') + '\n');
      expect(await refusal(drop)).to.deep.equal({ code: 'BAD_DROP', message });
    }
  });

  it('a Parquet file in a folder named like a hive partition (region=ZZ) serves its own values, not the folder\'s', async () => {
    const drop = await newDrop();
    await mkdir(path.join(drop, 'region=ZZ'));
    await writeParquetNamed(path.join(drop, 'region=ZZ', 'core.parquet'), CORE_HEADER, [coreRow(KEYS[0]!, 'Hive')]);
    const dataDir = path.join(dir, 'hive-data');
    const { label, report } = await load(dataDir, drop);
    expect(report.products.core).to.deep.include({ rows_read: 1, rows_loaded: 1, rejected_total: 0 });
    const server = await startServer(testConfig(dataDir), createLogger('silent', 'test'));
    try {
      const res = await postGraphql(server.url, { query: 'query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placedata_core { location_name region other_columns } } }', variables: { k: [KEYS[0]] } });
      const row = Object.fromEntries(CORE_HEADER.map((h, i) => [h, coreRow(KEYS[0]!, 'Hive')[i]]));
      expect(res.body).to.deep.equal({ data: { batch_lookup: [{ placedata_core: { location_name: 'Hive', region: row['region'], other_columns: {} } }] }, extensions: { row_count: 1, version_date: label } });
    } finally {
      await server.close();
    }
  });

  it('a Parquet file naming a column twice (or twice but for case) is refused as the CSV is, by the names its schema writes; the served version stays', async () => {
    const dataDir = path.join(dir, 'parquet-twice-data');
    const good = await newDrop();
    await writeCsv(path.join(good, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'A')]);
    const served = (await load(dataDir, good)).label;
    const listing = (await readdir(dataDir)).sort();
    const cases: [string[], string, [string, number, number]][] = [
      [[...CORE_HEADER, 'location_name'], 'location_name_1', ['location_name', 2, 11]],
      [[...CORE_HEADER, 'Location_Name'], 'Location_Name_1', ['location_name', 2, 11]],
      [[...CORE_HEADER, ' LOCATION_NAME '], ' LOCATION_NAME ', ['location_name', 2, 11]],
      [[...CORE_HEADER, 'store_note', 'Store_Note'], 'Store_Note_1', ['store_note', 11, 12]],
    ];
    for (const [names, describedAs, [twice, first, second]] of cases) {
      const drop = await newDrop();
      const file = path.join(drop, 'core.parquet');
      await writeParquetNamed(file, names, [[...coreRow(KEYS[0]!, 'A'), ...names.slice(CORE_HEADER.length).map((n) => `value of ${n}`)]]);
      // The file names the column twice; DuckDB reads it renamed (so a check on its names found none).
      const db = await DuckDBInstance.create(':memory:');
      const conn = await db.connect();
      const schema = (await conn.runAndReadAll(`SELECT name FROM parquet_schema(${quoteLiteral(file)}) WHERE num_children IS NULL`)).getRowObjectsJS().map((r) => r['name']);
      const described = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(file)})`)).getRowObjectsJS().map((r) => r['column_name']);
      conn.closeSync();
      db.closeSync();
      expect({ schema, described: described.at(-1) }).to.deep.equal({ schema: names, described: describedAs });
      const err = await load(dataDir, drop).then(() => null, (e: unknown) => e) as { code: string; message: string } | null;
      expect(err && { code: err.code, message: err.message }).to.deep.equal({
        code: 'BAD_DROP', message: `core.parquet: the header names column "${twice}" twice (columns ${first} and ${second}; names are compared trimmed and lower-cased)`,
      });
      expect(await readPointer(dataDir)).to.equal(served);
      expect((await readdir(dataDir)).sort()).to.deep.equal(listing);
    }
  });

  it('input beyond the limits is refused as a bad drop, naming the limit: 5000 columns, a 70 KB header', async () => {
    const wide = await newDrop();
    const names = [...CORE_HEADER, ...Array.from({ length: 4990 }, (_, i) => `extra_${i}`)];
    await writeFile(path.join(wide, 'core.csv'), [line(names), line([...coreRow(KEYS[0]!, 'A'), ...names.slice(10).map(() => '1')])].join('\n') + '\n');
    expect(await refusal(wide)).to.deep.equal({ code: 'BAD_DROP', message: 'core.csv: the header names 5000 columns, over the limit of 1000' });
    const long = await newDrop();
    await writeFile(path.join(long, 'core.csv'), [line([...CORE_HEADER, 'x'.repeat(70_000)]), line([...coreRow(KEYS[0]!, 'A'), '1'])].join('\n') + '\n');
    expect(await refusal(long)).to.deep.equal({ code: 'BAD_DROP', message: 'core.csv: the header line is over 65536 bytes (the limit), or opens a quote it never closes' });
  });

  it('a 1000-column file (at the limit) loads', async () => {
    const drop = await newDrop();
    const names = [...CORE_HEADER, ...Array.from({ length: 990 }, (_, i) => `extra_${i}`)];
    await writeFile(path.join(drop, 'core.csv'), [line(names), ...KEYS.map((k) => line([...coreRow(k, 'A'), ...names.slice(10).map((_, i) => String(i))]))].join('\n') + '\n');
    const { report } = await load(path.join(dir, 'wide-data'), drop);
    expect(report.products.core).to.deep.include({ rows_read: KEYS.length, rows_loaded: KEYS.length, rejected_total: 0 });
  });

  it('damaged rows cost those rows, each listed with its file, line and reason; parts with other line endings load', async () => {
    const good = Array.from({ length: 3000 }, (_, i) => coreRow(KEYS[i % KEYS.length]!.replace(/^(\d{3})/, (m) => m), `Place ${i}`));
    const rows = good.map((r) => line(r));
    const damaged = new Map<number, string>([
      [100, rows[100] + ',one too many'],
      [700, `${KEYS[0]},too,few`],
      [1500, `${KEYS[1]},"x"y,1 Main St,Springfield,MA,01020,US,722511,R,F`],
    ]);
    const text = [line(CORE_HEADER), ...rows.map((r, i) => damaged.get(i) ?? r)];
    const drop = await newDrop();
    // One byte that is not UTF-8 (row 2000, a Windows-1252 é) in a file that is UTF-8 (rows 10-13
    // hold a valid é: four characters to one byte, the least that tells it, ingest/drop/text-encoding.ts).
    for (const i of [10, 11, 12, 13]) text[i + 1] = text[i + 1]!.replace(`Place ${i}`, `Caf\u00e9 ${i}`);
    const bad = Buffer.from(text[2001]!.replace('Place 2000', 'Caf#'));
    bad[bad.indexOf('#')] = 0xe9;
    const body = Buffer.concat([Buffer.from(text.slice(0, 2001).join('\n') + '\n'), bad, Buffer.from('\n' + text.slice(2002).join('\n') + '\n')]);
    await writeFile(path.join(drop, 'core-part1.csv'), body);
    await writeFile(path.join(drop, 'core-part2.csv.gz'), gzipSync([line(CORE_HEADER), line(coreRow(KEYS[5]!, 'Part two'))].join('\r\n') + '\r\n'));
    const { report } = await load(path.join(dir, 'damaged-data'), drop);
    expect(report.rejected_lines).to.deep.equal([
      { file: 'core-part1.csv', line: 102, end_line: 102, reason: 'too_many_fields', products: ['core'] },
      { file: 'core-part1.csv', line: 702, end_line: 702, reason: 'too_few_fields', products: ['core'] },
      { file: 'core-part1.csv', line: 1502, end_line: 1502, reason: 'unterminated_quote', products: ['core'] },
      { file: 'core-part1.csv', line: 2002, end_line: 2002, reason: 'invalid_encoding', products: ['core'] },
    ]);
    expect(report.rejected_lines_total).to.equal(4);
    expect(report.products.core).to.deep.include({
      rows_read: 3001, rejected: { invalid_encoding: 1, too_few_fields: 1, too_many_fields: 1, unterminated_quote: 1 }, rejected_total: 4,
    });
    expect(report.files.map((f) => [path.basename(f.path), f.encoding, f.delimiter, f.newline])).to.deep.equal([
      ['core-part1.csv', 'utf-8-damaged', ',', 'LF'], ['core-part2.csv.gz', 'utf-8', ',', 'CRLF'],
    ]);
  });

  it('an unterminated quote costs the lines up to where its value ends, and the report gives that span (line to end_line)', async () => {
    const key = (i: number) => poiOf(7, i).placekey;
    const row = (i: number, name = `Place ${i}`) => line(coreRow(key(i), name));
    const drop = await newDrop();
    // a.csv: the quote opened on line 3 closes at the quote opening line 6's name, so lines 3-6
    // are one rejected record (DuckDB's copy of it is whole); a quoted newline in a row with a
    // field too many makes lines 8-9 one record.
    await writeFile(path.join(drop, 'a.csv'), [
      line(CORE_HEADER), row(0), `${key(1)},"Unclosed,1 Main St,Springfield,MA,01020,US,722511,R,F`, row(2), row(3), row(4, 'Quoted, name'), row(5),
      `${key(6)},"Two
lines",1 Main St,Springfield,MA,01020,US,722511,R,F,extra`, row(7),
    ].join('\n') + '\n');
    // b.csv.gz (CRLF): a quote opened on line 3 never closes; the 400 lines after it are over
    // the 10,000 bytes DuckDB keeps of a rejected record, so its end is found by following it.
    const tail = Array.from({ length: 400 }, (_, i) => row(100 + i));
    await writeFile(path.join(drop, 'b.csv.gz'), gzipSync([line(CORE_HEADER), row(10), `${key(11)},"Never closed,1 Main St`, ...tail].join('\r\n') + '\r\n'));
    // c.csv (CRLF): the same, short enough for DuckDB's copy, ending without a final newline.
    await writeFile(path.join(drop, 'c.csv'), [line(CORE_HEADER), row(20), row(21), `${key(22)},"Open`, row(23), row(24)].join('\r\n'));
    // d.csv: a quote opened on line 2 closes on line 203 (a quoted name), 200 lines on: over the
    // bytes DuckDB keeps, followed to where DuckDB ends it, the end of line 203.
    const middle = Array.from({ length: 200 }, (_, i) => row(600 + i));
    await writeFile(path.join(drop, 'd.csv'), [line(CORE_HEADER), `${key(30)},"Long open`, ...middle, row(31, 'Quoted, name'), row(32)].join('\n') + '\n');
    const dataDir = path.join(dir, 'unterminated-data');
    const { label, report } = await loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings: { ...buildSettingsOf(testConfig(dataDir)), maxRejectShare: 1 } });
    expect(report.rejected_lines).to.deep.equal([
      { file: 'a.csv', line: 3, end_line: 6, reason: 'unterminated_quote', products: ['core'] },
      { file: 'a.csv', line: 8, end_line: 9, reason: 'too_many_fields', products: ['core'] },
      { file: 'b.csv.gz', line: 3, end_line: 403, reason: 'unterminated_quote', products: ['core'] },
      { file: 'c.csv', line: 4, end_line: 6, reason: 'unterminated_quote', products: ['core'] },
      { file: 'd.csv', line: 2, end_line: 203, reason: 'unterminated_quote', products: ['core'] },
    ]);
    const db = await DuckDBInstance.create(path.join(dataDir, `${label}.duckdb`), { access_mode: 'READ_ONLY' });
    const conn = await db.connect();
    try {
      const rows = (await conn.runAndReadAll('SELECT placekey, location_name FROM places_core ORDER BY placekey')).getRowObjectsJS();
      const kept = [0, 5, 7, 10, 20, 21, 32];
      expect(rows).to.deep.equal(kept.map((i) => ({ placekey: key(i), location_name: `Place ${i}` })).sort((a, b) => (a.placekey < b.placekey ? -1 : 1)));
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });

  it('a line with two quoting errors costs that line, not a row made of its tail (DuckDB\'s parallel reader misreads it; the file is read again on one thread)', async () => {
    const key = (i: number) => poiOf(8, i).placekey;
    // placekey second: the text after this line's second quoting error has a key where the header
    // has placekey and as many fields as the header, which DuckDB's parallel reader loads as a row.
    const header = ['location_name', 'placekey', ...CORE_HEADER.slice(2)];
    const row = (i: number) => line([`Place ${i}`, key(i), ...coreRow(key(i), '').slice(2)]);
    const drop = await newDrop();
    await writeFile(path.join(drop, 'core.csv'), [
      line(header), row(0), `"Joe"s,"Bob"s,${key(9)},1 Main St,Springfield,MA,01020,US,722511,R,F,extra`, row(1).replace('722511', 'abc'),
      `"Open,${key(2)},1 Main St,Springfield,MA,01020,US,722511,R,F`, row(3),
    ].join('\n') + '\n');
    const dataDir = path.join(dir, 'two-quote-errors-data');
    const { label, report } = await loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings: { ...buildSettingsOf(testConfig(dataDir)), maxRejectShare: 1 } });
    expect(report.rejected_lines).to.deep.equal([
      { file: 'core.csv', line: 3, end_line: 3, reason: 'unterminated_quote', products: ['core'] },
      { file: 'core.csv', line: 5, end_line: 6, reason: 'unterminated_quote', products: ['core'] },
    ]);
    // The row rules see the rows read again: the second row staged breaks one (its sample's row is its place among them).
    expect(report.products.core).to.deep.include({ rows_read: 4, rows_loaded: 1, rejected: { unterminated_quote: 2, unparseable_naics_code: 1 }, rejected_total: 3 });
    expect(report.samples).to.deep.equal([{ product: 'core', file: 'core.csv', row: 2, reason: 'unparseable_naics_code', placekey: key(1) }]);
    const db = await DuckDBInstance.create(path.join(dataDir, `${label}.duckdb`), { access_mode: 'READ_ONLY' });
    const conn = await db.connect();
    try {
      const rows = (await conn.runAndReadAll('SELECT placekey, location_name FROM places_core ORDER BY location_name')).getRowObjectsJS();
      expect(rows).to.deep.equal([{ placekey: key(0), location_name: 'Place 0' }]);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });

  it('Windows-1252 and UTF-16 files are converted exactly (the report names the encoding); tab-separated .tsv parts are read', async () => {
    const drop = await newDrop();
    const names = ['Café “Quoted” – €5', 'Straße Ærø', 'Smörgås'];
    const text = (sep: string) => [CORE_HEADER.join(sep), ...names.map((nm, i) => coreRow(KEYS[i]!, nm).join(sep))].join('\r\n') + '\r\n';
    await writeFile(path.join(drop, 'core-1252.csv'), Buffer.from(new Uint8Array([...text(',')].map((ch) => ({ '“': 0x93, '”': 0x94, '–': 0x96, '€': 0x80 } as Record<string, number>)[ch] ?? ch.charCodeAt(0)))));
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text('\t'), 'utf16le')]);
    await writeFile(path.join(drop, 'core-utf16.tsv'), utf16);
    const dataDir = path.join(dir, 'encodings-data');
    const { label, report } = await load(dataDir, drop);
    expect(report.files.map((f) => [path.basename(f.path), f.encoding, f.delimiter])).to.deep.equal([
      ['core-1252.csv', 'windows-1252', ','], ['core-utf16.tsv', 'utf-16le', '\t'],
    ]);
    const db = await DuckDBInstance.create(path.join(dataDir, `${label}.duckdb`), { access_mode: 'READ_ONLY' });
    const conn = await db.connect();
    try {
      const rows = (await conn.runAndReadAll('SELECT location_name FROM places_core ORDER BY location_name')).getRowObjectsJS();
      expect(rows.map((r) => r['location_name'])).to.deep.equal([...names].sort());
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });

  it('a UTF-16 code unit that is not text (a surrogate without its pair) costs its line, as a byte that is not UTF-8 does', async () => {
    const drop = await newDrop();
    const text = [CORE_HEADER.join('\t'), ...['Café 🚀', 'Bad\uD800unit', 'Straße'].map((nm, i) => coreRow(KEYS[i]!, nm).join('\t'))].join('\r\n') + '\r\n';
    // Node writes a lone surrogate in UTF-16 as it is; big-endian by swapping the units.
    await writeFile(path.join(drop, 'core.tsv'), Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]));
    const dataDir = path.join(dir, 'utf16-damaged-data');
    const { label, report } = await loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings: { ...buildSettingsOf(testConfig(dataDir)), maxRejectShare: 1 } });
    expect(report.files.map((f) => [path.basename(f.path), f.encoding])).to.deep.equal([['core.tsv', 'utf-16be']]);
    expect(report.rejected_lines).to.deep.equal([{ file: 'core.tsv', line: 3, end_line: 3, reason: 'invalid_encoding', products: ['core'] }]);
    const db = await DuckDBInstance.create(path.join(dataDir, `${label}.duckdb`), { access_mode: 'READ_ONLY' });
    const conn = await db.connect();
    try {
      const rows = (await conn.runAndReadAll('SELECT placekey, location_name FROM places_core ORDER BY location_name')).getRowObjectsJS();
      expect(rows).to.deep.equal([{ placekey: KEYS[0], location_name: 'Café 🚀' }, { placekey: KEYS[2], location_name: 'Straße' }]);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });

  /** `location_name` of each key as /v1 batch_lookup serves it from `dataDir`'s version (null: no such place). */
  const servedNames = async (dataDir: string, keys: readonly string[]) => {
    const server = await startServer(testConfig(dataDir), createLogger('silent', 'test'));
    try {
      const res = await postGraphql(server.url, { query: 'query($k: [Placekey!]) { batch_lookup(placekeys: $k) { placekey placedata_core { location_name } } }', variables: { k: keys } });
      expect(res.status).to.equal(200);
      return (res.body.data.batch_lookup as { placedata_core: { location_name: string } | null }[]).map((r) => r.placedata_core?.location_name ?? null);
    } finally {
      await server.close();
    }
  };
  const coreCsv = (names: readonly string[], keys: readonly string[] = KEYS) => [CORE_HEADER.join(','), ...names.map((nm, i) => line(coreRow(keys[i]!, nm)))].join('\r\n') + '\r\n';

  it('a Windows-1252 file holding a valid UTF-8 pair by coincidence (É + no-break space, C9 A0) is Windows-1252 from the whole file: nothing rejected, served exactly', async () => {
    const drop = await newDrop();
    const names = ['CAF\u00c9\u00a0DE PARIS', 'Crème Brûlée', 'Straße Ærø', 'Château Noël'];
    const bytes = windows1252(coreCsv(names));
    expect(bytes.includes(Buffer.from([0xc9, 0xa0]))).to.equal(true);
    await writeFile(path.join(drop, 'core.csv'), bytes);
    const dataDir = path.join(dir, 'cafe-data');
    const { report } = await load(dataDir, drop);
    expect(report.files.map((f) => [path.basename(f.path), f.encoding])).to.deep.equal([['core.csv', 'windows-1252']]);
    expect(report.rejected_lines).to.deep.equal([]);
    expect(report.products.core).to.deep.include({ rows_read: 4, rows_loaded: 4, rejected_total: 0 });
    expect(await servedNames(dataDir, KEYS.slice(0, 4))).to.deep.equal(names);
  });

  it('a UTF-8 file with two bytes that are not (its characters 4 to 1 against them) is utf-8-damaged, those lines rejected; a Windows-1252 byte that is no character costs its line', async () => {
    const drop = await newDrop();
    const utf8Names = ['Café Ünïcødé', 'Caf#', 'Smörgåsbord', 'Joe#s Diner', 'Straße Ærø'];
    const utf8 = Buffer.from(coreCsv(utf8Names));
    utf8[utf8.indexOf('#')] = 0xe9; // a Windows-1252 é
    utf8[utf8.indexOf('#')] = 0x92; // a Windows-1252 right quote
    await writeFile(path.join(drop, 'core-a.csv'), utf8);
    const ansiKeys = [0, 1, 2].map((i) => poiOf(9, i).placekey);
    const ansi = windows1252(coreCsv(['Crème', 'Bad#byte', 'Noël'], ansiKeys));
    ansi[ansi.indexOf('#')] = 0x81; // no character in Windows-1252
    await writeFile(path.join(drop, 'core-b.csv'), ansi);
    const dataDir = path.join(dir, 'damaged-encoding-data');
    const { report } = await loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings: { ...buildSettingsOf(testConfig(dataDir)), maxRejectShare: 1 } });
    expect(report.files.map((f) => [path.basename(f.path), f.encoding])).to.deep.equal([['core-a.csv', 'utf-8-damaged'], ['core-b.csv', 'windows-1252']]);
    expect(report.rejected_lines).to.deep.equal([
      { file: 'core-a.csv', line: 3, end_line: 3, reason: 'invalid_encoding', products: ['core'] },
      { file: 'core-a.csv', line: 5, end_line: 5, reason: 'invalid_encoding', products: ['core'] },
      { file: 'core-b.csv', line: 3, end_line: 3, reason: 'invalid_encoding', products: ['core'] },
    ]);
    expect(await servedNames(dataDir, [...KEYS.slice(0, 5), ...ansiKeys])).to.deep.equal(
      ['Café Ünïcødé', null, 'Smörgåsbord', null, 'Straße Ærø', 'Crème', null, 'Noël']);
  });

  it('a file whose evidence is unclear (1 UTF-8 pair against 2 bytes that are not UTF-8) is refused naming both readings, and the served version stays', async () => {
    const dataDir = path.join(dir, 'unclear-data');
    const good = await newDrop();
    await writeCsv(path.join(good, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Served')]);
    const { label } = await load(dataDir, good);
    const drop = await newDrop();
    await writeFile(path.join(drop, 'core.csv'), windows1252(coreCsv(['CAF\u00c9\u00a0DE PARIS', 'Crème', 'Straße'])));
    const err = await load(dataDir, drop).then(() => null, (e: { code: string; message: string }) => ({ code: e.code, message: e.message }));
    expect(err).to.deep.equal({
      code: 'BAD_DROP',
      message: 'core.csv: cannot tell whether the file is UTF-8 or Windows-1252: 1 valid UTF-8 multi-byte character (the first on line 2) against '
        + '2 bytes that are not UTF-8 (the first on line 3), and either reading needs its count to be at least 4 times the other\'s; save the file as UTF-8 and deliver it again',
    });
    expect(await readPointer(dataDir)).to.equal(label);
    expect(await servedNames(dataDir, KEYS.slice(0, 2))).to.deep.equal(['Served', null]);
  });

  it("the load's DuckDB reads only the drop and its work folder: /etc, the keys file and a version file are out of reach", async () => {
    const drop = await newDrop();
    const file = path.join(drop, 'core.csv');
    await writeCsv(file, CORE_HEADER, [coreRow(KEYS[0]!, 'A')]);
    const secret = path.join(dir, 'api-keys.json');
    await writeFile(secret, '{"secret":1}');
    const work = path.join(dir, 'work');
    await mkdir(work);
    const db = await DuckDBInstance.create(path.join(dir, 'confined.duckdb'), buildInstanceOptions({ memoryLimit: '256MB', threads: 1, tempDir: work }));
    const conn = await db.connect();
    const run = (sql: string) => conn.runAndReadAll(sql).then((r) => r.getRowObjectsJS(), (e: Error) => e.message.split('\n')[0]);
    try {
      await confineLoad(conn, [file], work);
      expect(await run(`SELECT count(*)::INTEGER AS n FROM read_csv(${quoteLiteral(file)}, header = true)`)).to.deep.equal([{ n: 1 }]);
      for (const outside of ['/etc/hostname', secret, path.join(dir, 'hostile-data', 'CURRENT')]) {
        expect(await run(`SELECT * FROM read_text(${quoteLiteral(outside)})`)).to.equal(`Permission Error: Cannot access file "${outside}" - file system operations are disabled by configuration`);
      }
      expect(await run(`COPY (SELECT 1) TO ${quoteLiteral(path.join(dir, 'written.csv'))}`)).to.match(/^Permission Error: Cannot access file ".*written\.csv" - file system operations are disabled by configuration$/);
      expect(await run('SET enable_external_access = true')).to.equal('Invalid Input Error: Cannot enable external access while database is running');
      expect(await run("SET allowed_directories = ['/']")).to.equal('Invalid Input Error: Cannot change allowed_directories when enable_external_access is disabled');
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});

import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { constants, createGzip, gzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import type { LoadProgress } from '../../ingest/build/build-version.ts';
import { main as placedata } from '../../ingest/cli/cli.ts';
import { DEMO_DEFAULTS, writeDemoDrop } from '../../ingest/cli/demo-drop.ts';
import { loadDrop } from '../helpers/load-drop.ts';
import { readPointer } from '../../versions/pointer/pointer.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';
import { coreRow, CORE_HEADER, KEYS, weeklyRow, WEEKLY_HEADER, writeCsv } from '../helpers/write-csv.ts';

const csvText = (header: readonly string[], rows: readonly (string | number)[][]) => [header.join(','), ...rows.map((r) => r.join(','))].join('\n') + '\n';
const manyCoreRows = (n: number) => Array.from({ length: n }, (_, i) => coreRow(KEYS[i % KEYS.length]!, `Place ${i}`));

/** A gzip stream flushed after `cutAfter` lines and cut there: DuckDB reads it as a complete, shorter file. */
async function gzipCutAtFlush(text: string, cutAfter: number): Promise<Buffer> {
  const z = createGzip();
  const chunks: Buffer[] = [];
  z.on('data', (d: Buffer) => chunks.push(d));
  const lines = text.split('\n');
  let cut = 0;
  for (const [i, line] of lines.entries()) {
    z.write(line + (i < lines.length - 1 ? '\n' : ''));
    if (i === cutAfter) cut = await new Promise<number>((resolve) => z.flush(constants.Z_FULL_FLUSH, () => resolve(Buffer.concat(chunks).length)));
  }
  await new Promise<void>((resolve) => z.end(resolve));
  return Buffer.concat(chunks).subarray(0, cut);
}

async function parquetOf(csv: string, out: string): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  try {
    const conn = await db.connect();
    await conn.run(`COPY (SELECT * FROM read_csv($csv, all_varchar = true)) TO '${out.replace(/'/g, "''")}' (FORMAT parquet)`, { csv });
    conn.closeSync();
  } finally {
    db.closeSync();
  }
}

/** Deterministic bytes that are neither text nor gzip. */
function garbage(bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < b.length; i++) b[i] = (i * 7919 + 13) % 256;
  return b;
}

describe('corrupt drops: each refused with a clear report, the served version untouched', function () {
  this.timeout(120_000);
  let dir: string;
  let dataDir: string;
  let served: string;
  let servedSha: string;
  let listing: string[];
  let n = 0;
  let refused = 0;
  const settings = () => buildSettingsOf(testConfig(dataDir));
  const sha256 = async (f: string) => createHash('sha256').update(await readFile(f)).digest('hex');
  const newDrop = async () => {
    const d = path.join(dir, `drop${++n}`);
    await mkdir(d);
    return d;
  };

  /** The served version, its pointer and the data folder are exactly as before; no temp file remains. */
  const expectUntouched = async (data = dataDir, files = listing) => {
    expect(await readPointer(data)).to.equal(served);
    expect(await sha256(path.join(data, `${served}.duckdb`))).to.equal(servedSha);
    expect((await readdir(data)).sort()).to.deep.equal(files);
    expect(await readdir(path.join(dataDir, '.tmp'))).to.deep.equal([]);
  };

  /** Loads `drop` and expects it refused with `code` and `message` (exact, or matched when a RegExp). */
  const expectRefused = async (drop: string, code: string, message: string | RegExp, onProgress?: (p: LoadProgress) => void) => {
    const err = await loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings: settings(), onProgress }).then(() => null, (e: unknown) => e);
    refused++;
    expect(err, 'the load succeeded').to.be.an('error');
    const e = err as { code: string; message: string };
    expect(e.code, e.message).to.equal(code);
    if (typeof message === 'string') expect(e.message).to.equal(message);
    else expect(e.message).to.match(message);
    await expectUntouched();
    return err as Error & { code: string; details?: Record<string, any> };
  };

  before(async () => {
    dir = await makeTempDir('corrupt');
    dataDir = path.join(dir, 'data');
    const good = await newDrop();
    await writeCsv(path.join(good, 'core.csv'), CORE_HEADER, KEYS.map((k) => coreRow(k, 'Served')));
    await writeCsv(path.join(good, 'weekly.csv'), WEEKLY_HEADER, KEYS.map((k) => weeklyRow(k, '2022-04-04', [1, 1, 1, 1, 1, 1, 1])));
    served = (await loadDrop({ dataDir, inputs: [good], month: '2022-04', settings: settings() })).label;
    servedSha = await sha256(path.join(dataDir, `${served}.duckdb`));
    listing = (await readdir(dataDir)).sort();
    expect(listing).to.deep.equal(['.tmp', '.verified', `${served}.duckdb`, `${served}.duckdb.facts.json`, `${served}.lookup`, 'CURRENT']);
  });
  after(async () => {
    console.log(`      corrupt drops: ${refused} loads refused; the served version's pointer, sha256 and folder unchanged after each`);
    await removeDir(dir);
  });

  it('a gzip file cut in half', async () => {
    const drop = await newDrop();
    const gz = gzipSync(csvText(CORE_HEADER, manyCoreRows(20_000)));
    await writeFile(path.join(drop, 'core.csv.gz'), gz.subarray(0, gz.length >> 1));
    await expectRefused(drop, 'BAD_DROP', 'core.csv.gz: not a complete gzip file (unexpected end of file)');
  });

  it('a gzip file cut at a block boundary, which DuckDB alone reads as a shorter file', async () => {
    const drop = await newDrop();
    const file = path.join(drop, 'core.csv.gz');
    await writeFile(file, await gzipCutAtFlush(csvText(CORE_HEADER, manyCoreRows(2_000)), 1_000));
    const direct = await DuckDBInstance.create(':memory:');
    const conn = await direct.connect();
    const read = (await conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM read_csv($file, header = true, all_varchar = true)', { file })).getRowObjectsJS();
    conn.closeSync();
    direct.closeSync();
    expect(read).to.deep.equal([{ n: 1_000 }]); // half the rows, and no error: why the loader checks gzip itself
    await expectRefused(drop, 'BAD_DROP', 'core.csv.gz: not a complete gzip file (unexpected end of file)');
  });

  it('a gzip file missing only its trailer (length and CRC)', async () => {
    const drop = await newDrop();
    const gz = gzipSync(csvText(CORE_HEADER, manyCoreRows(6)));
    await writeFile(path.join(drop, 'core.csv.gz'), gz.subarray(0, gz.length - 5));
    await expectRefused(drop, 'BAD_DROP', 'core.csv.gz: not a complete gzip file (unexpected end of file)');
  });

  it('a Parquet file cut in half', async () => {
    const drop = await newDrop();
    const csv = path.join(dir, 'for-parquet.csv');
    await writeCsv(csv, CORE_HEADER, manyCoreRows(500));
    const whole = path.join(dir, 'whole.parquet');
    await parquetOf(csv, whole);
    const bytes = await readFile(whole);
    const file = path.join(drop, 'core.parquet');
    await writeFile(file, bytes.subarray(0, bytes.length >> 1));
    await expectRefused(drop, 'BAD_DROP', `cannot read core.parquet: Invalid Input Error: No magic bytes found at end of file '${file}'`);
  });

  it('binary garbage named .csv, and named .csv.gz', async () => {
    const drop = await newDrop();
    const file = path.join(drop, 'core.csv');
    await writeFile(file, garbage(100_000));
    await expectRefused(drop, 'BAD_DROP', 'core.csv: the header line is not valid UTF-8 text');
    const gzDrop = await newDrop();
    await writeFile(path.join(gzDrop, 'weekly.csv.gz'), garbage(100_000));
    await expectRefused(gzDrop, 'BAD_DROP', 'weekly.csv.gz: not a complete gzip file (incorrect header check)');
  });

  it('headers of no known product, and products missing a required header', async () => {
    const cases: [string, readonly string[], (string | number)[], string][] = [
      ['other.csv', ['id', 'name', 'value'], [1, 'a', 2],
        'other.csv: columns match neither core places (location_name with naics_code, top_category or sub_category), patterns (date_range_start with raw_visit_counts, raw_visitor_counts or visits_by_day) nor geometry (polygon_wkt, polygon_class or wkt_area_sq_meters)'],
      ['core.csv', CORE_HEADER.filter((h) => h !== 'placekey'), coreRow(KEYS[0]!, 'x').slice(1), 'core.csv: cannot be served by Placekey: it has no placekey column'],
      ['weekly.csv', WEEKLY_HEADER.filter((h) => h !== 'date_range_start'), weeklyRow(KEYS[0]!, '2022-04-04', [1, 1, 1, 1, 1, 1, 1]).filter((_, i) => i !== 5),
        'weekly.csv: columns match neither core places (location_name with naics_code, top_category or sub_category), patterns (date_range_start with raw_visit_counts, raw_visitor_counts or visits_by_day) nor geometry (polygon_wkt, polygon_class or wkt_area_sq_meters)'],
      ['weekly.csv', WEEKLY_HEADER.filter((h) => h !== 'placekey'), weeklyRow(KEYS[0]!, '2022-04-04', [1, 1, 1, 1, 1, 1, 1]).slice(1), 'weekly.csv: cannot be served by Placekey: it has no placekey column'],
    ];
    for (const [name, header, row, message] of cases) {
      const drop = await newDrop();
      await writeCsv(path.join(drop, name), header, [row]);
      await expectRefused(drop, 'BAD_DROP', message);
    }
  });

  it('a 10 MB line costs its row: alone it leaves no usable row, among three it is over the reject share', async () => {
    const drop = await newDrop();
    await writeFile(path.join(drop, 'core.csv'), CORE_HEADER.join(',') + '\n' + 'x'.repeat(10 * 1024 * 1024) + '\n');
    const alone = await expectRefused(drop, 'BAD_DROP', 'no usable core row in the drop (1 read, 1 rejected)');
    expect(alone.details?.['report'].rejected_lines).to.deep.equal([{ file: 'core.csv', line: 2, end_line: 2, reason: 'line_too_long', products: ['core'] }]);
    const mixed = await newDrop();
    await writeFile(path.join(mixed, 'core.csv'), csvText(CORE_HEADER, [coreRow(KEYS[0]!, 'Fine'), coreRow(KEYS[1]!, 'y'.repeat(10 * 1024 * 1024)), coreRow(KEYS[2]!, 'Fine')]));
    const among = await expectRefused(mixed, 'BAD_DROP', '33.3% of core rows were rejected, above the 5.0% allowed');
    expect(among.details?.['report'].rejected_lines).to.deep.equal([{ file: 'core.csv', line: 3, end_line: 3, reason: 'line_too_long', products: ['core'] }]);
  });

  it('an empty file (0 bytes), an empty gzip, and header-only files', async () => {
    const empty = await newDrop();
    await writeFile(path.join(empty, 'core.csv'), '');
    await expectRefused(empty, 'BAD_DROP', 'core.csv: the file is empty');
    const emptyGz = await newDrop();
    await writeFile(path.join(emptyGz, 'core.csv.gz'), gzipSync(''));
    await expectRefused(emptyGz, 'BAD_DROP', 'core.csv.gz: the file has no header row');
    const headerOnly = await newDrop();
    await writeFile(path.join(headerOnly, 'core.csv'), CORE_HEADER.join(',') + '\n');
    const err = await expectRefused(headerOnly, 'BAD_DROP', 'no usable core row in the drop (0 read, 0 rejected)');
    expect(err.details?.['report'].products).to.deep.equal({ core: { rows_read: 0, rows_loaded: 0, rejected: {}, rejected_total: 0, duplicates_dropped: 0, unparseable_values: {} } });
    // A good product does not carry a header-only one: the drop is refused as a whole.
    const withGood = await newDrop();
    await writeCsv(path.join(withGood, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Fine')]);
    await writeFile(path.join(withGood, 'weekly.csv.gz'), gzipSync(WEEKLY_HEADER.join(',') + '\n'));
    await expectRefused(withGood, 'BAD_DROP', 'no usable weekly row in the drop (0 read, 0 rejected)');
  });

  it('a file that disappears after its header was read, and one that disappears before', async () => {
    // The loader reports each phase synchronously before starting it: core is staged first, so
    // deleting the weekly file when core staging starts removes it between inspection and staging.
    for (const [phase, percent] of [['stage', 5], ['inspect', 1]] as const) {
      const drop = await newDrop();
      await writeCsv(path.join(drop, 'core.csv'), CORE_HEADER, [coreRow(KEYS[0]!, 'Fine')]);
      const weekly = path.join(drop, 'weekly.csv');
      await writeCsv(weekly, WEEKLY_HEADER, [weeklyRow(KEYS[0]!, '2022-04-04', [1, 1, 1, 1, 1, 1, 1])]);
      const seen: string[] = [];
      await expectRefused(drop, 'BAD_DROP', 'weekly.csv: the file disappeared during the load', (p) => {
        seen.push(`${p.phase} ${p.percent}`);
        if (p.phase === phase && p.percent === percent) unlinkSync(weekly);
      });
      expect(seen, phase).to.deep.equal(phase === 'stage' ? ['inspect 1', 'stage 5', 'stage 15'] : ['inspect 1']);
    }
  });

  it('prints the refusal and exits 2 through `placedata load`', async () => {
    const drop = await newDrop();
    const gz = gzipSync(csvText(CORE_HEADER, manyCoreRows(2_000)));
    await writeFile(path.join(drop, 'core.csv.gz'), gz.subarray(0, gz.length - 100));
    const out: string[] = [];
    const err: string[] = [];
    const code = await placedata(['node', 'placedata', 'load', drop, '--month', '2022-05', '--no-progress'], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, (s) => out.push(s), (s) => err.push(s));
    refused++;
    expect({ code, out, err }).to.deep.equal({ code: 2, out: [], err: ['error BAD_DROP: core.csv.gz: not a complete gzip file (unexpected end of file)'] });
    await expectUntouched();
  });

  describe('full disks (tmpfs mounts; needs root)', () => {
    const mounts: string[] = [];
    const mountTmpfs = (at: string, size: string) => {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at]);
      mounts.push(at);
    };
    before(function () {
      if (process.getuid?.() !== 0) {
        console.log('      skipped: full-disk cases mount a small tmpfs, which needs root');
        this.skip();
      }
    });
    afterEach(() => {
      for (const at of mounts.splice(0)) execFileSync('umount', [at]);
    });

    it('a full temp disk fails with RESOURCE_EXHAUSTED (retried by the queue, not refused as a bad drop), and the drop loads where there is room', async () => {
      const drop = await newDrop();
      await writeDemoDrop(drop, { ...DEMO_DEFAULTS, pois: 30_000 });
      const tempDir = path.join(dir, 'small-temp');
      await mkdir(tempDir);
      mountTmpfs(tempDir, '2m');
      // A memory limit low enough that staging 120k weekly rows must spill to the 2 MB temp disk.
      const small = { ...settings(), memoryLimit: '60MB', threads: 1, tempDir };
      const err = await loadDrop({ dataDir, inputs: [drop], month: '2022-05', settings: small }).then(() => null, (e: unknown) => e) as { code: string; message: string } | null;
      refused++;
      expect(err?.code, err?.message).to.equal('RESOURCE_EXHAUSTED');
      // DuckDB reports it as a block it failed to offload, or as memory it failed to allocate with the spill at its cap.
      const prefix = `the load ran out of temp disk space in ${tempDir} (DUCKDB_TEMP_DIR`;
      expect(err?.message.slice(0, prefix.length)).to.equal(prefix);
      expect(err?.message.slice(prefix.length)).to.match(/^(; [\d.]+ MiB spilled, DuckDB's cap [\d.]+ MiB)?\): Out of Memory Error: (failed to offload data block|failed to allocate data) of size [\d.]+ KiB \([\d.]+ MiB\/[\d.]+ MiB used\)\.?$/);
      expect(await readdir(tempDir)).to.deep.equal([]);
      await expectUntouched();
      // The drop itself is fine: with the default memory limit and temp folder it loads.
      const loaded = await loadDrop({ dataDir: path.join(dir, 'loads-elsewhere'), inputs: [drop], month: '2022-05', settings: settings() });
      expect(loaded.report.products.core?.rows_loaded).to.equal(30_000);
      listing = (await readdir(dataDir)).sort();
      await expectUntouched();
    });

    it('a full data disk fails with RESOURCE_EXHAUSTED, leaving no half-written build', async () => {
      const fullData = path.join(dir, 'small-data');
      await mkdir(fullData);
      mountTmpfs(fullData, '4m');
      const first = await newDrop();
      await writeCsv(path.join(first, 'core.csv'), CORE_HEADER, KEYS.map((k) => coreRow(k, 'Served')));
      const own = { ...settings(), tempDir: path.join(dir, 'data-disk-temp') };
      const kept = (await loadDrop({ dataDir: fullData, inputs: [first], month: '2022-04', settings: own })).label;
      const keptSha = await sha256(path.join(fullData, `${kept}.duckdb`));
      const drop = await newDrop();
      await writeDemoDrop(drop, { ...DEMO_DEFAULTS, pois: 30_000 });
      const err = await loadDrop({ dataDir: fullData, inputs: [drop], month: '2022-05', settings: own }).then(() => null, (e: unknown) => e) as { code: string; message: string } | null;
      refused++;
      expect(err?.code, err?.message).to.equal('RESOURCE_EXHAUSTED');
      expect(err?.message).to.match(/^the load ran out of disk space: .*No space left on device/);
      expect(await readPointer(fullData)).to.equal(kept);
      expect(await sha256(path.join(fullData, `${kept}.duckdb`))).to.equal(keptSha);
      expect((await readdir(fullData)).sort()).to.deep.equal(['.verified', `${kept}.duckdb`, `${kept}.duckdb.facts.json`, `${kept}.lookup`, 'CURRENT']);
    });
  });
});

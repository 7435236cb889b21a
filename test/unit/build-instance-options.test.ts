import { DuckDBInstance } from '@duckdb/node-api';
import { expect } from 'chai';
import { buildInstanceOptions } from '../../ingest/build/build-instance-options.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

describe('buildInstanceOptions', () => {
  it('gives a load\'s instance the operator\'s limits and an allocator that returns freed memory promptly', () => {
    expect(buildInstanceOptions({ memoryLimit: '768MB', threads: null, tempDir: '/d/.tmp' })).to.deep.equal({
      memory_limit: '768MB', temp_directory: '/d/.tmp', allocator_flush_threshold: '32MiB', allocator_background_threads: 'true',
    });
    expect(buildInstanceOptions({ memoryLimit: '2GB', threads: 1, tempDir: '/d/.tmp' })['threads']).to.equal('1');
  });

  it('are settings this DuckDB accepts and applies', async () => {
    const dir = await makeTempDir('build-options');
    const db = await DuckDBInstance.create(':memory:', buildInstanceOptions({ memoryLimit: '512MB', threads: 1, tempDir: dir }));
    try {
      const conn = await db.connect();
      const rows = (await conn.runAndReadAll(`SELECT current_setting('memory_limit') AS m, current_setting('allocator_flush_threshold') AS f,
        current_setting('allocator_background_threads')::VARCHAR AS b, current_setting('threads')::VARCHAR AS t`)).getRowObjectsJS();
      expect(rows).to.deep.equal([{ m: '488.2 MiB', f: '32.0 MiB', b: 'true', t: '1' }]);
      conn.closeSync();
    } finally {
      db.closeSync();
      await removeDir(dir);
    }
  });
});

import { expect } from 'chai';
import { withoutFolders } from '../../shared/load-job-reader.ts';

describe('load-job reader: what the status page shows of a job', () => {
  it('cuts absolute paths to their last part and leaves everything else', () => {
    expect(withoutFolders('BAD_DROP: drop path not found: /srv/drops/2022-05/core.csv')).to.equal('BAD_DROP: drop path not found: core.csv');
    expect(withoutFolders('the load ran out of temp disk space in /data/.tmp (DUCKDB_TEMP_DIR, 3 GB spilled): No space left')).to.equal('the load ran out of temp disk space in .tmp (DUCKDB_TEMP_DIR, 3 GB spilled): No space left');
    expect(withoutFolders("cannot read '/a/b c/x.csv', (/y/z.csv)")).to.equal("cannot read 'b c/x.csv', (z.csv)");
    expect(withoutFolders('core: read 1, loaded 0, rejected 1\n  e.g. core core.csv row 1: malformed_placekey (nope@nope)\nweeks 2022-03/04 and 1/2')).to.equal('core: read 1, loaded 0, rejected 1\n  e.g. core core.csv row 1: malformed_placekey (nope@nope)\nweeks 2022-03/04 and 1/2');
    expect(withoutFolders('/')).to.equal('/');
  });
});

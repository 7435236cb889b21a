import { expect } from 'chai';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { activeDigests, createKey, digestKey, matchesAnyDigest, readKeyFile, revokeKey, roleOf } from '../../shared/key-store.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';

describe('key store', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await makeTempDir('keys');
    file = path.join(dir, 'keys.json');
  });
  afterEach(() => removeDir(dir));

  it('stores only the digest of a new key, in a file only its owner can read', async () => {
    const now = new Date('2026-01-02T03:04:05.000Z');
    const key = await createKey(file, 'analytics', now);
    expect(key).to.match(/^pd_[A-Za-z0-9_-]{43}$/);
    const text = await readFile(file, 'utf8');
    expect(text).not.to.contain(key);
    expect(await readKeyFile(file)).to.deep.equal([{ name: 'analytics', role: 'reader', digest: digestKey(key), created_at: now.toISOString(), revoked_at: null }]);
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
    expect(digestKey('abc')).to.equal('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('records a role: reader by default, operator when asked; a record without a role reads as reader', async () => {
    const now = new Date('2026-01-02T03:04:05.000Z');
    const ops = await createKey(file, 'ops', now, 'operator');
    await createKey(file, 'analyst', now);
    const records = await readKeyFile(file);
    expect(records.map((k) => [k.name, k.role, roleOf(k)])).to.deep.equal([['ops', 'operator', 'operator'], ['analyst', 'reader', 'reader']]);
    expect(records[0]!.digest).to.equal(digestKey(ops));
    await createKey(file, 'x', now, 'admin' as 'operator').then(() => expect.fail('bad role'),
      (e) => expect([e.code, e.message]).to.deep.equal(['BAD_REQUEST', 'role must be one of reader, operator; got "admin"']));
    await writeFile(file, JSON.stringify({ keys: [{ name: 'old', digest: digestKey('k'), created_at: now.toISOString(), revoked_at: null }] }));
    expect((await readKeyFile(file)).map(roleOf)).to.deep.equal(['reader']);
  });

  it('matches a key against digests, and stops matching once revoked', async () => {
    const key = await createKey(file, 'a');
    expect(matchesAnyDigest(key, activeDigests(await readKeyFile(file)))).to.equal(true);
    expect(matchesAnyDigest(key + 'x', activeDigests(await readKeyFile(file)))).to.equal(false);
    await revokeKey(file, 'a');
    expect(matchesAnyDigest(key, activeDigests(await readKeyFile(file)))).to.equal(false);
  });

  it('refuses duplicate names, unknown names and bad names with codes', async () => {
    await createKey(file, 'a');
    await createKey(file, 'a').then(() => expect.fail('created twice'), (e) => expect([e.code, e.message]).to.deep.equal(['KEY_EXISTS', 'an active key named "a" exists']));
    await revokeKey(file, 'b').then(() => expect.fail('revoked'), (e) => expect([e.code, e.message]).to.deep.equal(['KEY_NOT_FOUND', 'no active key named "b"']));
    await createKey(file, '../x').then(() => expect.fail('bad name'), (e) => expect(e.code).to.equal('BAD_REQUEST'));
  });
});

import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadDrop } from '../helpers/load-drop.ts';
import { digestKey } from '../../shared/key-store.ts';
import { demoFixture, type DemoFixture } from '../helpers/demo-fixture.ts';
import { eventually } from '../helpers/eventually.ts';
import { CORE_QUERY } from '../helpers/graphql-client.ts';
import { dumpRedis, expectNoSecrets } from '../helpers/leak-scan.ts';
import { placedata } from '../helpers/placedata-cli.ts';
import { spawnApi, stopProcess, type SpawnedApi } from '../helpers/processes.ts';
import { rawRequest } from '../helpers/raw-http.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { makeTempDir, removeDir } from '../helpers/temp-dir.ts';
import { buildSettingsOf, testConfig } from '../helpers/test-config.ts';

const NO_KEY = { errors: [{ message: 'No API key found in request', extensions: { code: 'UNAUTHENTICATED' } }] };
const BAD_KEY = { errors: [{ message: 'Invalid authentication credentials', extensions: { code: 'UNAUTHENTICATED' } }] };
const CHALLENGE = 'APIKey realm="placedata", header="apikey"';

describe('authentication under hostile keys (spawned api/main.ts, keys from the CLI, rate limits on a private Redis)', function () {
  this.timeout(60_000);
  let dir: string;
  let dataDir: string;
  let fixture: DemoFixture;
  let redis: RedisServer;
  let api: SpawnedApi;
  let key = '';
  let doomed = '';
  const devKey = `pd_test_${randomBytes(16).toString('hex')}`;
  const prefix = `placedata-rl-test-${randomBytes(4).toString('hex')}`;
  /** Every string presented as a key of 8 characters or more: none may be written anywhere. */
  const presented = new Set<string>();
  let cases = 0;

  const body = () => JSON.stringify({ query: CORE_QUERY, variables: { placekeys: [fixture.core[0]!['placekey']!] } });
  /** `secret` false for values that are not keys and may appear elsewhere (a key's digest is in the key file). */
  const lookup = async (headers: Record<string, string>, secret = true) => {
    if (secret) for (const v of Object.values(headers)) if (v.length >= 8) presented.add(v);
    cases++;
    const res = await fetch(`${api.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: body() });
    const text = await res.text();
    return { status: res.status, challenge: res.headers.get('www-authenticate'), body: text === '' ? null : JSON.parse(text) as unknown };
  };
  const raw = async (lines: (string | Buffer)[], secret?: string) => {
    if (secret) presented.add(secret);
    cases++;
    return rawRequest(api.url, 'POST', '/v1/graphql', lines, body());
  };
  const expectRefused = (res: { status: number; challenge: string | null; body: unknown }, expected: unknown, what: string) => {
    expect([res.status, res.challenge, res.body], what).to.deep.equal([401, CHALLENGE, expected]);
  };

  before(async () => {
    dir = await makeTempDir('auth');
    redis = await RedisServer.start();
    fixture = await demoFixture(path.join(dir, 'drop'));
    const config = testConfig(path.join(dir, 'data'));
    dataDir = config.dataDir;
    await loadDrop({ dataDir, inputs: [fixture.dropDir], month: '2022-03', settings: buildSettingsOf(config) });
    key = (await placedata(['keys', 'create', 'partner'], { DATA_DIR: dataDir })).stdout.trim();
    doomed = (await placedata(['keys', 'create', 'leaving'], { DATA_DIR: dataDir })).stdout.trim();
    expect([key, doomed]).to.satisfy((ks: string[]) => ks.every((k) => /^pd_[A-Za-z0-9_-]{43}$/.test(k)));
    presented.add(key).add(doomed).add(devKey);
    api = await spawnApi({
      DATA_DIR: dataDir, REDIS_URL: redis.url, PLACEDATA_API_KEYS: devKey, LOG_LEVEL: 'trace',
      RATE_LIMIT_POINTS: '100000', RATE_LIMIT_PREFIX: prefix, POINTER_POLL_MS: '100',
    });
  });

  after(async () => {
    console.log(`      figures: ${cases} key presentations tried, ${presented.size} distinct key strings scanned for`);
    if (api) await stopProcess(api);
    await redis?.kill();
    if (dir) await removeDir(dir);
  });

  it('the valid keys (from the key store and from the environment) are served', async () => {
    for (const k of [key, devKey]) expect((await lookup({ apikey: k })).status).to.equal(200);
  });

  it('keys of every wrong length and shape: 401 with the challenge', async () => {
    expectRefused(await lookup({ apikey: '' }), NO_KEY, 'empty');
    const wrong: Record<string, string> = {
      'one character': 'x',
      '10,000 characters': 'k'.repeat(10_000),
      'one character short': key.slice(0, -1),
      'one character more': key + 'A',
      'upper-cased': key.toUpperCase(),
      'as a Bearer value': `Bearer ${key}`,
      'inner space': key.slice(0, 10) + ' ' + key.slice(10),
      'two keys in one value': `${key},${devKey}`,
      'SQL-looking': "' OR '1'='1",
    };
    for (const i of [0, 3, 20, key.length - 1]) {
      const swapped = key[i] === 'A' ? 'B' : 'A';
      wrong[`one character changed at ${i}`] = key.slice(0, i) + swapped + key.slice(i + 1);
    }
    for (const [what, value] of Object.entries(wrong)) expectRefused(await lookup({ apikey: value }), BAD_KEY, what);
    for (const digest of [digestKey(key), digestKey(key).slice('sha256:'.length)]) expectRefused(await lookup({ apikey: digest }, false), BAD_KEY, 'a digest instead of the key');
  });

  it('a header too large for the server is 431, not a 5xx', async () => {
    cases++;
    const res = await fetch(`${api.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', apikey: 'k'.repeat(20_000) }, body: body() });
    expect(res.status).to.equal(431);
  });

  it('bytes fetch would not send: whitespace padding is not part of a header value (RFC 9110), non-Latin-1 bytes and lookalikes are refused, control bytes are a 400', async () => {
    for (const padded of [`apikey:    ${key}   `, `apikey:\t${key}\t`]) expect((await raw([padded])).status, JSON.stringify(padded)).to.equal(200);
    const utf8 = await raw([Buffer.concat([Buffer.from('apikey: '), Buffer.from(`${key}é`, 'utf8')])], `${key}é`);
    expect([utf8.status, JSON.parse(utf8.body)]).to.deep.equal([401, BAD_KEY]);
    const lookalike = key.replace(/[a-z]/, 'а'); // a Cyrillic letter in place of the first Latin lower-case one
    const cyrillic = await raw([Buffer.concat([Buffer.from('apikey: '), Buffer.from(lookalike, 'utf8')])], lookalike);
    expect([cyrillic.status, JSON.parse(cyrillic.body)]).to.deep.equal([401, BAD_KEY]);
    const allUnicode = await raw([Buffer.concat([Buffer.from('apikey: '), Buffer.from('ключ-🔑-'.repeat(8), 'utf8')])]);
    expect([allUnicode.status, JSON.parse(allUnicode.body)]).to.deep.equal([401, BAD_KEY]);
    const control = await raw([Buffer.concat([Buffer.from(`apikey: ${key.slice(0, 10)}`), Buffer.from([0]), Buffer.from(key.slice(10))])]);
    expect(control.status).to.equal(400);
  });

  it('the header name in any case is the same header; a repeated apikey header is refused', async () => {
    for (const name of ['APIKEY', 'ApiKey', 'aPiKeY']) expect((await raw([`${name}: ${key}`])).status, name).to.equal(200);
    for (const pair of [[key, 'wrong-key-123'], [key, key]]) {
      const res = await raw(pair.map((v) => `apikey: ${v}`));
      expect([res.status, JSON.parse(res.body)]).to.deep.equal([401, BAD_KEY]);
    }
  });

  it('a key anywhere but the apikey header is ignored: query string, body, Authorization, X-Api-Key', async () => {
    cases += 3;
    const inUrl = await fetch(`${api.url}/v1/graphql?apikey=${key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body() });
    expect([inUrl.status, await inUrl.json()]).to.deep.equal([401, NO_KEY]);
    const inGet = await fetch(`${api.url}/v1/graphql?query=${encodeURIComponent('{ __typename }')}&apikey=${key}`);
    expect([inGet.status, await inGet.json()]).to.deep.equal([401, NO_KEY]);
    const inBody = await fetch(`${api.url}/v1/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }', apikey: key }) });
    expect([inBody.status, await inBody.json()]).to.deep.equal([401, NO_KEY]);
    const elsewhere: Record<string, string>[] = [{ authorization: `Bearer ${key}` }, { authorization: key }, { authorization: `ApiKey ${key}` }, { 'x-api-key': key }];
    for (const headers of elsewhere) {
      expectRefused(await lookup(headers), NO_KEY, JSON.stringify(Object.keys(headers)));
    }
  });

  it('a key revoked with `placedata keys revoke` is refused by the running API, the others still work', async () => {
    expect((await lookup({ apikey: doomed })).status).to.equal(200);
    expect((await placedata(['keys', 'revoke', 'leaving'], { DATA_DIR: dataDir })).stdout).to.equal('revoked leaving\n');
    await eventually(async () => expectRefused(await lookup({ apikey: doomed }), BAD_KEY, 'revoked'));
    expect((await lookup({ apikey: key })).status).to.equal(200);
  });

  it('after all of it, no presented key is in the API log, in Redis, or in the key file (which holds digests)', async () => {
    expect(await stopProcess(api)).to.equal(0);
    const log = api.output();
    expect(log).to.contain('"msg":"request"');
    const keyFile = await readFile(path.join(dataDir, 'api-keys.json'), 'utf8');
    expect(keyFile).to.contain(digestKey(key)).and.to.contain(digestKey(doomed));
    const stored = await dumpRedis(redis.url);
    expect(stored).to.contain(`${prefix}:${digestKey(key).slice('sha256:'.length)}`);
    expectNoSecrets({ 'API log': log, Redis: stored, 'key file': keyFile }, [...presented]);
  });
});

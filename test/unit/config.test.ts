import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { availableParallelism, hostname } from 'node:os';
import { defaultLoadQueue, loadConfig } from '../../shared/config.ts';

describe('loadConfig', () => {
  it('fills defaults and resolves folders against the working directory', () => {
    const c = loadConfig({}, '/srv/app');
    expect({ port: c.port, dataDir: c.dataDir, keysFile: c.keysFile, maxBatch: c.maxBatch, devApiKeys: c.devApiKeys, tempDir: c.duckdbTempDir, share: c.maxRejectShare })
      .to.deep.equal({ port: 3000, dataDir: '/srv/app/datasets', keysFile: '/srv/app/datasets/api-keys.json', maxBatch: 1000, devApiKeys: [], tempDir: '/srv/app/datasets/.tmp', share: 0.05 });
    expect(Object.isFrozen(c)).to.equal(true);
  });

  it('turns rate limits on by default (60000 Placekeys per 60 s per key, shared through REDIS_URL), and off with 0', () => {
    const c = loadConfig({});
    expect([c.rateLimitPoints, c.rateLimitWindowSeconds, c.rateLimitPrefix, c.redisUrl, c.maxRootFields])
      .to.deep.equal([60_000, 60, 'placedata-rl', 'redis://127.0.0.1:6379', 10]);
    expect(loadConfig({ RATE_LIMIT_POINTS: '0' }).rateLimitPoints).to.equal(0);
  });

  it('gives served versions API_MEMORY_LIMIT, falling back to DUCKDB_MEMORY_LIMIT, then 1GB; loads DUCKDB_MEMORY_LIMIT, then 768MB', () => {
    expect([loadConfig({}).apiMemoryLimit, loadConfig({ DUCKDB_MEMORY_LIMIT: '2GB' }).apiMemoryLimit, loadConfig({ DUCKDB_MEMORY_LIMIT: '2GB', API_MEMORY_LIMIT: '6GB' }).apiMemoryLimit, loadConfig({ API_MEMORY_LIMIT: '6GB' }).duckdbMemoryLimit, loadConfig({}).duckdbMemoryLimit])
      .to.deep.equal(['1GB', '2GB', '6GB', '768MB', '768MB']);
    expect(() => loadConfig({ API_MEMORY_LIMIT: 'lots' })).to.throw('API_MEMORY_LIMIT must be a size such as 512MB or 2GB; got "lots"');
  });

  it('reads look-ups from the files\' look-up stores by default; LOOKUP_STORES=false turns them off', () => {
    expect([loadConfig({}).lookupStores, loadConfig({ LOOKUP_STORES: 'false' }).lookupStores])
      .to.deep.equal([true, false]);
    expect(() => loadConfig({ LOOKUP_STORES: 'no' })).to.throw('LOOKUP_STORES must be true or false; got "no"');
  });

  it('leaves metrics open and the worker\'s metrics server off by default; takes a token and a port', () => {
    expect([loadConfig({}).metricsToken, loadConfig({}).workerMetricsPort, loadConfig({ WORKER_METRICS_PORT: '0' }).workerMetricsPort])
      .to.deep.equal([null, null, null]);
    const c = loadConfig({ METRICS_TOKEN: 'scrape-token-0123456789', WORKER_METRICS_PORT: '9464' });
    expect([c.metricsToken, c.workerMetricsPort]).to.deep.equal(['scrape-token-0123456789', 9464]);
  });

  it('reads the cache\'s budget (CACHE_MAX_BYTES, bytes or a size with a unit) and a request\'s wait for a file (CACHE_FETCH_WAIT_SECONDS)', () => {
    const c = loadConfig({});
    expect([c.cacheMaxBytes, c.cacheFetchWaitSeconds]).to.deep.equal([20 * 1024 ** 3, 30]);
    expect(['21474836480', '20GiB', '50GB', '1.5 TiB', '512mib', '4096'].map((v) => loadConfig({ CACHE_MAX_BYTES: v }).cacheMaxBytes))
      .to.deep.equal([21474836480, 21474836480, 50e9, 1.5 * 1024 ** 4, 512 * 1024 ** 2, 4096]);
    expect(loadConfig({ CACHE_FETCH_WAIT_SECONDS: '0' }).cacheFetchWaitSeconds).to.equal(0);
    for (const bad of ['lots', '-1', '0', '20 GB per disk', '1e9', '0.5']) {
      expect(() => loadConfig({ CACHE_MAX_BYTES: bad })).to.throw(`CACHE_MAX_BYTES must be a size in bytes, such as 21474836480 or 20GiB; got "${bad}"`);
    }
    expect(() => loadConfig({ CACHE_FETCH_WAIT_SECONDS: '3601' })).to.throw('CACHE_FETCH_WAIT_SECONDS must be an integer from 0 to 3600; got "3601"');
  });

  it('reads VERSION_STORE: none by default (one machine), a directory other than DATA_DIR, or s3:// with its S3_* and AWS_* settings', () => {
    const c = loadConfig({}, '/srv/app');
    expect([c.versionStore, c.redisPrefix, c.cacheGraceSeconds, c.stageTimeoutSeconds]).to.deep.equal([null, 'placedata', 600, 300]);
    expect(loadConfig({ VERSION_STORE: 'shared/versions' }, '/srv/app').versionStore).to.deep.equal({ kind: 'directory', dir: '/srv/app/shared/versions' });
    expect(loadConfig({ VERSION_STORE: 'file:///mnt/v' }, '/srv/app').versionStore).to.deep.equal({ kind: 'directory', dir: '/mnt/v' });
    expect(loadConfig({ VERSION_STORE: 's3://my-bucket/place/data/', AWS_REGION: 'eu-west-1' }).versionStore).to.deep.equal({
      kind: 's3', bucket: 'my-bucket', prefix: 'place/data', endpoint: null, region: 'eu-west-1', forcePathStyle: false, credentials: null,
    });
    expect(loadConfig({ VERSION_STORE: 's3://versions', S3_ENDPOINT: 'http://minio:9000', AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret' }).versionStore).to.deep.equal({
      kind: 's3', bucket: 'versions', prefix: '', endpoint: 'http://minio:9000', region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'id', secretAccessKey: 'secret' },
    });
  });

  it('keeps CORS off, compresses answers of 1024 bytes and more, and keeps 8 MiB of persisted queries by default; each can be set', () => {
    const d = loadConfig({});
    expect([d.corsOrigins, d.compression, d.compressionMinBytes, d.persistedQueryCacheBytes]).to.deep.equal([[], true, 1024, 8_388_608]);
    const c = loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173', COMPRESSION: 'false', COMPRESSION_MIN_BYTES: '0', PERSISTED_QUERY_CACHE_BYTES: '0' });
    expect([c.corsOrigins, c.compression, c.compressionMinBytes, c.persistedQueryCacheBytes]).to.deep.equal([['https://app.example.com', 'http://localhost:5173'], false, 0, 0]);
    expect(Object.isFrozen(c.corsOrigins)).to.equal(true);
  });

  it('splits development keys and trims them', () => {
    expect(loadConfig({ PLACEDATA_API_KEYS: ' a, b ,,c' }).devApiKeys).to.deep.equal(['a', 'b', 'c']);
    expect(loadConfig({ PLACEDATA_OPERATOR_KEYS: 'op1, op2' }).devOperatorKeys).to.deep.equal(['op1', 'op2']);
  });

  it('runs summaries on every core at idle priority on Linux (SUMMARY_THREADS, SUMMARY_PRIORITY), the cores but one elsewhere; each can be set', () => {
    const cores = availableParallelism();
    expect(loadConfig({})).to.include({ summaryThreads: process.platform === 'linux' ? cores : Math.max(1, cores - 1), summaryPriority: 'idle' });
    expect(loadConfig({ SUMMARY_THREADS: '0', SUMMARY_PRIORITY: '19' })).to.include({ summaryThreads: 0, summaryPriority: 19 });
    expect(loadConfig({ SUMMARY_PRIORITY: '0' })).to.include({ summaryPriority: 0 });
    expect(loadConfig({ SUMMARY_PRIORITY: 'idle' })).to.include({ summaryPriority: 'idle' });
  });

  it('refuses bad values with the variable named', () => {
    const cases: [Record<string, string>, string][] = [
      [{ PORT: 'http' }, 'PORT must be an integer from 0 to 65535; got "http"'],
      [{ MAX_BATCH: '0' }, 'MAX_BATCH must be an integer from 1 to 100000; got "0"'],
      [{ MAX_REJECT_SHARE: '5%' }, 'MAX_REJECT_SHARE must be a number from 0 to 1; got "5%"'],
      [{ DUCKDB_MEMORY_LIMIT: 'lots' }, 'DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 2GB; got "lots"'],
      [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "loud"'],
      [{ RATE_LIMIT_POINTS: '-1' }, 'RATE_LIMIT_POINTS must be an integer from 0 to 1000000000; got "-1"'],
      [{ RATE_LIMIT_WINDOW_SECONDS: '0' }, 'RATE_LIMIT_WINDOW_SECONDS must be an integer from 1 to 86400; got "0"'],
      [{ RATE_LIMIT_PREFIX: 'rl:{x}' }, 'RATE_LIMIT_PREFIX must be letters, digits, ".", "_" or "-"; got "rl:{x}"'],
      [{ MAX_ROOT_FIELDS: '0' }, 'MAX_ROOT_FIELDS must be an integer from 1 to 1000; got "0"'],
      [{ WORKER_METRICS_PORT: '70000' }, 'WORKER_METRICS_PORT must be an integer from 0 to 65535; got "70000"'],
      // A token is a secret: the message does not repeat it.
      [{ METRICS_TOKEN: 'short' }, 'METRICS_TOKEN must be 16 to 256 printable ASCII characters without spaces'],
      [{ VERSION_STORE: 's3://B/x' }, 'VERSION_STORE must be s3://<bucket>/<prefix> with a valid bucket name; got "s3://B/x"'],
      [{ VERSION_STORE: './datasets' }, 'VERSION_STORE must be a folder other than DATA_DIR (DATA_DIR is then the local cache); got "./datasets"'],
      [{ VERSION_STORE: 's3://b-1', S3_ENDPOINT: 'minio:9000' }, 'S3_ENDPOINT must be an http(s) URL; got "minio:9000"'],
      [{ VERSION_STORE: 's3://b-1', AWS_ACCESS_KEY_ID: 'id' }, 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together'],
      [{ VERSION_STORE: 's3://b-1', S3_FORCE_PATH_STYLE: 'yes' }, 'S3_FORCE_PATH_STYLE must be true or false; got "yes"'],
      [{ REDIS_PREFIX: 'a b' }, 'REDIS_PREFIX must be letters, digits, ".", "_" or "-"; got "a b"'],
      [{ CORS_ORIGINS: 'https://app.example.com/' }, 'CORS_ORIGINS must be a comma-separated list of origins such as https://app.example.com (scheme, host and port only); got "https://app.example.com/"'],
      [{ CORS_ORIGINS: '*' }, 'CORS_ORIGINS must be a comma-separated list of origins such as https://app.example.com (scheme, host and port only); got "*"'],
      [{ COMPRESSION: 'gzip' }, 'COMPRESSION must be true or false; got "gzip"'],
      [{ COMPRESSION_MIN_BYTES: '1k' }, 'COMPRESSION_MIN_BYTES must be an integer from 0 to 1073741824; got "1k"'],
      [{ PERSISTED_QUERY_CACHE_BYTES: '-5' }, 'PERSISTED_QUERY_CACHE_BYTES must be an integer from 0 to 1073741824; got "-5"'],
      [{ SUMMARY_PRIORITY: '20' }, 'SUMMARY_PRIORITY must be idle or an integer from 0 to 19; got "20"'],
      [{ SUMMARY_PRIORITY: 'low' }, 'SUMMARY_PRIORITY must be idle or an integer from 0 to 19; got "low"'],
    ];
    for (const [env, message] of cases) expect(() => loadConfig(env)).to.throw(message).with.property('code', 'CONFIG_INVALID');
  });
});

describe('the default load queue: one per site, so two copies on one Redis never share it by accident', () => {
  it('names the queue after the version store, else this host\'s DATA_DIR; LOAD_QUEUE overrides', () => {
    const sha = (site: string) => `placedata-loads-${createHash('sha256').update(site).digest('hex').slice(0, 12)}`;
    expect(loadConfig({}, '/srv/app').loadQueue).to.equal(sha(`dir:${hostname()}:/srv/app/datasets`));
    expect(loadConfig({ DATA_DIR: '/srv/demo' }).loadQueue).to.equal(sha(`dir:${hostname()}:/srv/demo`));
    // Every machine of a shared store loads into the same site, whatever its local cache folder.
    expect([loadConfig({ VERSION_STORE: '/mnt/store', DATA_DIR: '/a' }).loadQueue, loadConfig({ VERSION_STORE: '/mnt/store', DATA_DIR: '/b' }).loadQueue])
      .to.deep.equal([sha('store:/mnt/store'), sha('store:/mnt/store')]);
    expect(loadConfig({ VERSION_STORE: 's3://bucket/prefix' }).loadQueue).to.equal(sha('s3:/bucket/prefix'));
    expect(defaultLoadQueue(null, '/x', 'host-a')).to.not.equal(defaultLoadQueue(null, '/x', 'host-b'));
    expect(loadConfig({ LOAD_QUEUE: 'mine' }).loadQueue).to.equal('mine');
  });
});

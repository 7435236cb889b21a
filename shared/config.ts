import { createHash } from 'node:crypto';
import { availableParallelism, hostname } from 'node:os';
import path from 'node:path';
import { AppError, ErrorCodes } from './errors.ts';
import { DEFAULT_SUMMARY_PRIORITY, type LowPriority } from './low-priority-threads.ts';
import { DEFAULT_GUARDS, type GuardThresholds } from './guard-thresholds.ts';

/** Where version files are shared between machines (VERSION_STORE); see docs/operations.md "Running at scale". */
/** Where the store is and how to reach it (from VERSION_STORE and the S3_* / AWS_* settings). */
export interface S3StoreSettings {
  readonly bucket: string;
  /** Key prefix without a trailing slash ('' for the bucket's root). */
  readonly prefix: string;
  /** For S3-compatible servers (MinIO, R2, ...); null for AWS itself. */
  readonly endpoint: string | null;
  readonly region: string;
  readonly forcePathStyle: boolean;
  /** Null: the SDK's default chain (instance roles, shared config files). */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string } | null;
}

export type VersionStoreSetting =
  | { readonly kind: 'directory'; readonly dir: string }
  | ({ readonly kind: 's3' } & S3StoreSettings);

/** Everything either process needs from its environment, validated once at start-up. */
export interface Config {
  /** HTTP port of the API (PORT, default 3000; 0 picks a free port). */
  readonly port: number;
  /** Address the API binds (HOST, default 0.0.0.0). */
  readonly host: string;
  /** Folder holding version files and the CURRENT pointer (DATA_DIR, default ./datasets). */
  readonly dataDir: string;
  /** JSON file holding API key digests (KEYS_FILE, default <DATA_DIR>/api-keys.json). */
  readonly keysFile: string;
  /** Extra API keys for development and tests (PLACEDATA_API_KEYS, comma-separated). Never logged. */
  readonly devApiKeys: readonly string[];
  /** Development keys with the `operator` role (PLACEDATA_OPERATOR_KEYS, comma-separated); PLACEDATA_API_KEYS are readers. Never logged. */
  readonly devOperatorKeys: readonly string[];
  /** Most Placekeys one request may ask for (MAX_BATCH, default 1000). */
  readonly maxBatch: number;
  /** Largest request body in bytes (MAX_BODY_BYTES, default 262144). */
  readonly maxBodyBytes: number;
  /** Deepest selection nesting, introspection excluded (MAX_QUERY_DEPTH, default 6). */
  readonly maxQueryDepth: number;
  /** Most aliased fields in one document (MAX_ALIASES, default 30). */
  readonly maxAliases: number;
  /** Most lexical tokens in one document (MAX_TOKENS, default 5000). */
  readonly maxTokens: number;
  /** Most root fields (distinct response keys, introspection excluded) in one operation (MAX_ROOT_FIELDS, default 10). */
  readonly maxRootFields: number;
  /** Placekeys one API key may ask for per window; 0 turns rate limiting off (RATE_LIMIT_POINTS, default 60000). */
  readonly rateLimitPoints: number;
  /** Length of a rate-limit window in seconds (RATE_LIMIT_WINDOW_SECONDS, default 60). */
  readonly rateLimitWindowSeconds: number;
  /** Prefix of the rate-limit counters in Redis (RATE_LIMIT_PREFIX, default placedata-rl). */
  readonly rateLimitPrefix: string;
  /** Bulk exports one API process streams at once; more are refused with 503 (EXPORT_CONCURRENCY, default 2). */
  readonly exportConcurrency: number;
  /** Rate-limit points one bulk export costs, whatever its size (EXPORT_COST, default 1000: a full batch_lookup's). */
  readonly exportCost: number;
  /** How long a bulk export waits for a client that reads nothing before cutting it off (EXPORT_STALL_MS, default 60000). */
  readonly exportStallMs: number;
  /** Summaries (`patterns_summary`) one API process runs at once; more are refused with SUMMARIES_BUSY (SUMMARY_CONCURRENCY, default 2). */
  readonly summaryConcurrency: number;
  /** How long a summary may run before it is stopped with SUMMARY_TIMEOUT (SUMMARY_TIMEOUT_MS, default 10000). */
  readonly summaryTimeoutMs: number;
  /**
   * Threads of each served version's summary instance, at the priority SUMMARY_PRIORITY
   * (SUMMARY_THREADS, default the cores on Linux, where a thread's priority is its own; elsewhere
   * the cores but one, at least 1); 0: summaries run on the served instance with its threads.
   */
  readonly summaryThreads: number;
  /**
   * Priority of the summary instances' threads on Linux (SUMMARY_PRIORITY): `idle` (the default,
   * SCHED_IDLE: they run only on a core nothing else of the machine wants, and a look-up's thread
   * takes it from them at once), or a nice value 0 to 19 (at 10 about a tenth of a core a look-up
   * also wants; 0 leaves them at the process's priority).
   */
  readonly summaryPriority: LowPriority;
  /** Most queries one bulk match upload (`POST /v1/export/match`) may hold (MATCH_UPLOAD_MAX_QUERIES, default 50000); its body may hold 1 KiB a query. */
  readonly matchUploadMaxQueries: number;
  /** DuckDB connections per served version (API_CONNECTIONS, default 4). */
  readonly apiConnections: number;
  /** Most Placekeys one coalesced look-up query binds (API_COALESCE_KEYS, default 1000; 1 turns coalescing off). */
  readonly apiCoalesceKeys: number;
  /**
   * Whether the web process reads look-ups of core and weeks from the look-up store built beside
   * each file at ingest (`<label>.lookup`, lmdb) instead of running a DuckDB statement
   * (LOOKUP_STORES, default true; false: every look-up is a DuckDB statement).
   */
  readonly lookupStores: boolean;
  /**
   * Threads that read look-up stores beside the web process's main thread
   * (LOOKUP_STORE_THREADS, default 1; 0: the main thread reads every store). A look-up that reads
   * several files' stores (a week of an older drop) reads all but one of them there, meanwhile.
   */
  readonly lookupStoreThreads: number;
  /**
   * The main thread's event-loop utilisation (over about 50 ms) from which every look-up store
   * read goes to the read threads (LOOKUP_STORE_SATURATION, default 0.9; 0: always, 1: never).
   */
  readonly lookupStoreSaturation: number;
  /** How often the API re-reads the pointer, besides watching it (POINTER_POLL_MS, default 1000). */
  readonly pointerPollMs: number;
  /** How long SIGTERM waits for requests in flight (SHUTDOWN_GRACE_MS, default 10000). */
  readonly shutdownGraceMs: number;
  /**
   * DuckDB memory_limit of loads and of the worker's and CLI's other uses (DUCKDB_MEMORY_LIMIT,
   * default 768MB). A load's process peaks at about this plus 0.9 GB (the JSON documents and file
   * buffers DuckDB allocates outside its pool, and Node): at 768MB a 1M-POI x 4-week load peaked
   * at 1.63 GB in 171 s, against 1.77 GB in 174 s at 1GB (one side-by-side; 2.02 GB in a bench
   * run at 1GB): docs/operations.md, Memory.
   */
  readonly duckdbMemoryLimit: string;
  /**
   * DuckDB memory_limit of the web process's served versions (API_MEMORY_LIMIT, default
   * DUCKDB_MEMORY_LIMIT when that is set, else 1GB): look-ups stay fast while the key, core and one week's columns fit it,
   * about 1 GB per million POIs (docs/operations.md), while a worker needs no more than its default.
   */
  readonly apiMemoryLimit: string;
  /** DuckDB threads (DUCKDB_THREADS, default: DuckDB's own choice). */
  readonly duckdbThreads: number | null;
  /** DuckDB spill directory for ingest, and where the API writes a Parquet export before sending it (DUCKDB_TEMP_DIR, default <DATA_DIR>/.tmp). */
  readonly duckdbTempDir: string;
  /** Share of rows a load may reject before it fails (MAX_REJECT_SHARE, default 0.05). */
  readonly maxRejectShare: number;
  /**
   * Whether a load's look-up store holds every document a look-up reads (LOOKUP_STORE_EXTRAS, default
   * on): the delivered columns beyond the spec's, monthly patterns and geometry too, not only the
   * spec's core and weeks. Off, the store is about a fifth of the size and look-ups of those read
   * DuckDB's typed tables, tens of times slower (docs/operations.md, LOOKUP_STORE_EXTRAS).
   */
  readonly lookupStoreExtras: boolean;
  /** pino level (LOG_LEVEL, default info). */
  readonly logLevel: string;
  /** LOG_FORMAT: `json` (JSON lines), `pretty` (readable lines), or `auto` (default): pretty when stdout is a terminal. */
  readonly logFormat: 'auto' | 'json' | 'pretty';
  /** Redis for the load queue and the shared rate-limit counters (REDIS_URL, default redis://127.0.0.1:6379). */
  readonly redisUrl: string;
  /**
   * BullMQ queue name for loads (LOAD_QUEUE; default `placedata-loads-<site>`, the site being the
   * version store, or this host's DATA_DIR: see defaultLoadQueue).
   */
  readonly loadQueue: string;
  /** Versions kept; the current one, the one built before it and the one served until the last publish are never deleted (RETAIN_VERSIONS, default 5). */
  readonly retainVersions: number;
  /**
   * The publish guards' thresholds (GUARD_MAX_POI_DROP, GUARD_MIN_VANISHED_ROWS,
   * GUARD_MAX_NULL_RISE, GUARD_MIN_WEEK_VISITS), or null when PUBLISH_GUARDS=false turns them off
   * (default on): docs/operations.md, Publish guards.
   */
  readonly publishGuards: GuardThresholds | null;
  /** Tries per load job for transient failures (LOAD_ATTEMPTS, default 5). */
  readonly loadAttempts: number;
  /** How long a worker's job lock lasts without renewal; a killed worker's job is retried after it (WORKER_LOCK_MS, default 30000). */
  readonly workerLockMs: number;
  /** How many times a job may be found abandoned by a dead worker before it fails (WORKER_MAX_STALLS, default 10). */
  readonly workerMaxStalls: number;
  /**
   * Bearer token that `/metrics` (web) and the worker's metrics port require (METRICS_TOKEN);
   * null (unset): metrics are open, for an internal network. Never logged.
   */
  readonly metricsToken: string | null;
  /** Port of the worker's own `/metrics` (WORKER_METRICS_PORT); null (unset or 0): no metrics server. */
  readonly workerMetricsPort: number | null;
  /**
   * The shared version store (VERSION_STORE: a directory path or `s3://bucket/prefix`); null
   * (the default) for one machine, where DATA_DIR holds the versions and the CURRENT file is the
   * pointer. When set, DATA_DIR is this machine's local cache and the pointer lives in Redis.
   */
  readonly versionStore: VersionStoreSetting | null;
  /** Prefix of the Redis pointer, its announcement channel and the publish lock (REDIS_PREFIX, default placedata). */
  readonly redisPrefix: string;
  /** A cached version neither current nor previous is deleted once unused this long (CACHE_GRACE_SECONDS, default 600). */
  readonly cacheGraceSeconds: number;
  /**
   * Bytes a machine's cache of stored files (DATA_DIR with VERSION_STORE) may take (CACHE_MAX_BYTES:
   * bytes, or a size such as 20GiB; default 20GiB): past it, files no process reads are evicted,
   * least recently used first. Ignored on one machine (DATA_DIR is then the store).
   */
  readonly cacheMaxBytes: number;
  /** How long a request waits for a file of its version not yet on the machine, in seconds (CACHE_FETCH_WAIT_SECONDS, default 30). */
  readonly cacheFetchWaitSeconds: number;
  /**
   * Origins whose pages may call the API from a browser (CORS_ORIGINS, comma-separated, e.g.
   * `https://app.example.com`); empty (the default): no cross-origin access.
   */
  readonly corsOrigins: readonly string[];
  /** Whether answers are compressed (gzip, br) for clients that accept it (COMPRESSION, default true). */
  readonly compression: boolean;
  /** Smallest answer compressed, in bytes (COMPRESSION_MIN_BYTES, default 1024); exports are always compressed when asked. */
  readonly compressionMinBytes: number;
  /** Query text kept for automatic persisted queries, in bytes, per process (PERSISTED_QUERY_CACHE_BYTES, default 8388608; 0: off). */
  readonly persistedQueryCacheBytes: number;
  /** How long a publish waits for every web process to stage (download) a new version before moving the pointer anyway (STAGE_TIMEOUT_SECONDS, default 300). */
  readonly stageTimeoutSeconds: number;
}

type Env = Readonly<Record<string, string | undefined>>;

function invalid(name: string, value: string, expected: string): AppError {
  return new AppError(ErrorCodes.CONFIG_INVALID, `${name} must be ${expected}; got "${value}"`);
}

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw invalid(name, raw, `an integer from ${min} to ${max}`);
  const value = Number(raw);
  if (value < min || value > max) throw invalid(name, raw, `an integer from ${min} to ${max}`);
  return value;
}

/** A thread priority: `idle`, or a nice value 0 to 19. */
function priorityVar(env: Env, name: string, fallback: LowPriority): LowPriority {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'idle') return 'idle';
  if (!/^\d+$/.test(raw) || Number(raw) > 19) throw invalid(name, raw, 'idle or an integer from 0 to 19');
  return Number(raw);
}

/** Default of CACHE_MAX_BYTES: 20 GiB. */
export const DEFAULT_CACHE_MAX_BYTES = 20 * 1024 ** 3;

const UNITS: Readonly<Record<string, number>> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/** A size in bytes: an integer, or a number with a unit (KB, MB, GB, TB, KiB, MiB, GiB, TiB). */
function bytesVar(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(raw.trim());
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined || Number(m[1]) * unit < 1) throw invalid(name, raw, 'a size in bytes, such as 21474836480 or 20GiB');
  return Math.floor(Number(m[1]) * unit);
}

function shareVar(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || value > 1) throw invalid(name, raw, 'a number from 0 to 1');
  return value;
}

function memoryVar(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(raw)) throw invalid(name, raw, 'a size such as 512MB or 2GB');
  return raw;
}

function nameVar(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(raw)) throw invalid(name, raw, 'letters, digits, ".", "_" or "-"');
  return raw;
}

/** A secret: checked for shape, never echoed in the error (it might be a real token with a typo). */
function tokenVar(env: Env, name: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  if (!/^[\x21-\x7e]{16,256}$/.test(raw)) throw new AppError(ErrorCodes.CONFIG_INVALID, `${name} must be 16 to 256 printable ASCII characters without spaces`);
  return raw;
}

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw invalid(name, raw, 'true or false');
  return raw === 'true';
}

/** VERSION_STORE and, for s3://, the S3_* and AWS_* settings that reach the bucket. */
function versionStoreVar(env: Env, cwd: string, dataDir: string): VersionStoreSetting | null {
  const raw = env['VERSION_STORE'];
  if (raw === undefined || raw === '') return null;
  if (raw.startsWith('s3://')) {
    const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(raw);
    if (!m) throw invalid('VERSION_STORE', raw, 's3://<bucket>/<prefix> with a valid bucket name');
    const prefix = (m[2] ?? '').replace(/\/+$/, '');
    const endpoint = env['S3_ENDPOINT'] || null;
    if (endpoint !== null && !/^https?:\/\/[^\s]+$/.test(endpoint)) throw invalid('S3_ENDPOINT', endpoint, 'an http(s) URL');
    const accessKeyId = env['AWS_ACCESS_KEY_ID'] || '';
    const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'] || '';
    if ((accessKeyId === '') !== (secretAccessKey === '')) {
      throw new AppError(ErrorCodes.CONFIG_INVALID, 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together');
    }
    const sessionToken = env['AWS_SESSION_TOKEN'] || undefined;
    return {
      kind: 's3', bucket: m[1]!, prefix, endpoint,
      region: env['S3_REGION'] || env['AWS_REGION'] || 'us-east-1',
      // S3-compatible servers on a plain host name need path-style addressing; AWS prefers virtual hosts.
      forcePathStyle: boolVar(env, 'S3_FORCE_PATH_STYLE', endpoint !== null),
      credentials: accessKeyId ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } : null,
    };
  }
  const dir = path.resolve(cwd, raw.startsWith('file://') ? new URL(raw).pathname : raw);
  if (dir === dataDir) throw invalid('VERSION_STORE', raw, 'a folder other than DATA_DIR (DATA_DIR is then the local cache)');
  return { kind: 'directory', dir };
}

/**
 * The load queue of one site: `placedata-loads-` and 12 hex digits of the site's identity, the
 * shared version store where there is one (every machine of the site loads into it), else this
 * host's DATA_DIR. Two copies of the service on one Redis (a demo and a real folder, two teams)
 * then never take each other's loads, which a shared default name let them do.
 */
export function defaultLoadQueue(store: VersionStoreSetting | null, dataDir: string, host: string): string {
  const site = store === null ? `dir:${host}:${dataDir}`
    : store.kind === 'directory' ? `store:${store.dir}` : `s3:${store.endpoint ?? ''}/${store.bucket}/${store.prefix}`;
  return `placedata-loads-${createHash('sha256').update(site).digest('hex').slice(0, 12)}`;
}

/** Browser origins: scheme, host and port only (`https://app.example.com:8443`), as the Origin header carries them. */
function originsVar(env: Env, name: string): readonly string[] {
  const origins = listVar(env, name);
  const bad = origins.find((o) => !/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/.test(o));
  if (bad !== undefined) throw invalid(name, bad, 'a comma-separated list of origins such as https://app.example.com (scheme, host and port only)');
  return origins;
}

function listVar(env: Env, name: string): readonly string[] {
  return Object.freeze((env[name] ?? '').split(',').map((k) => k.trim()).filter((k) => k !== ''));
}

/**
 * The environment of the bundled demo (`npm start`, `placedata demo`): the same, with DATA_DIR set
 * to DEMO_DIR (default ./demo-data) and no VERSION_STORE, so that the demo never lives where
 * real drops are loaded (DATA_DIR, default ./datasets) nor in a shared store: a real load must not
 * inherit the demo's weeks or be compared with it.
 */
export function demoEnv(env: Env): Env {
  const { VERSION_STORE: _store, ...rest } = env;
  return { ...rest, DATA_DIR: env['DEMO_DIR'] || DEFAULT_DEMO_DIR };
}

/** Where the demo lives unless DEMO_DIR says otherwise. */
export const DEFAULT_DEMO_DIR = './demo-data';

function enumVar<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw)) throw invalid(name, raw, `one of ${values.join(', ')}`);
  return raw as T;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * The only reader of the environment: entry points call it once and pass the frozen result down.
 * @throws AppError CONFIG_INVALID naming the variable and what it must be.
 */
export function loadConfig(env: Env, cwd: string = process.cwd()): Config {
  const dataDir = path.resolve(cwd, env['DATA_DIR'] || './datasets');
  const logLevel = env['LOG_LEVEL'] || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw invalid('LOG_LEVEL', logLevel, `one of ${LOG_LEVELS.join(', ')}`);
  const threads = env['DUCKDB_THREADS'];
  const versionStore = versionStoreVar(env, cwd, dataDir);
  return Object.freeze({
    port: intVar(env, 'PORT', 3000, 0, 65535),
    host: env['HOST'] || '0.0.0.0',
    dataDir,
    keysFile: path.resolve(cwd, env['KEYS_FILE'] || path.join(dataDir, 'api-keys.json')),
    devApiKeys: listVar(env, 'PLACEDATA_API_KEYS'),
    devOperatorKeys: listVar(env, 'PLACEDATA_OPERATOR_KEYS'),
    maxBatch: intVar(env, 'MAX_BATCH', 1000, 1, 100_000),
    maxBodyBytes: intVar(env, 'MAX_BODY_BYTES', 262_144, 1024, 64 * 1024 * 1024),
    maxQueryDepth: intVar(env, 'MAX_QUERY_DEPTH', 6, 2, 100),
    maxAliases: intVar(env, 'MAX_ALIASES', 30, 0, 10_000),
    maxTokens: intVar(env, 'MAX_TOKENS', 5000, 50, 1_000_000),
    maxRootFields: intVar(env, 'MAX_ROOT_FIELDS', 10, 1, 1000),
    rateLimitPoints: intVar(env, 'RATE_LIMIT_POINTS', 60_000, 0, 1_000_000_000),
    rateLimitWindowSeconds: intVar(env, 'RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400),
    rateLimitPrefix: nameVar(env, 'RATE_LIMIT_PREFIX', 'placedata-rl'),
    exportConcurrency: intVar(env, 'EXPORT_CONCURRENCY', 2, 1, 64),
    exportCost: intVar(env, 'EXPORT_COST', 1000, 1, 1_000_000_000),
    exportStallMs: intVar(env, 'EXPORT_STALL_MS', 60_000, 100, 3_600_000),
    summaryConcurrency: intVar(env, 'SUMMARY_CONCURRENCY', 2, 1, 64),
    summaryTimeoutMs: intVar(env, 'SUMMARY_TIMEOUT_MS', 10_000, 100, 3_600_000),
    summaryThreads: intVar(env, 'SUMMARY_THREADS', process.platform === 'linux' ? availableParallelism() : Math.max(1, availableParallelism() - 1), 0, 1024),
    summaryPriority: priorityVar(env, 'SUMMARY_PRIORITY', DEFAULT_SUMMARY_PRIORITY),
    matchUploadMaxQueries: intVar(env, 'MATCH_UPLOAD_MAX_QUERIES', 50_000, 1, 1_000_000),
    apiConnections: intVar(env, 'API_CONNECTIONS', 4, 1, 64),
    apiCoalesceKeys: intVar(env, 'API_COALESCE_KEYS', 1000, 1, 10_000),
    lookupStores: boolVar(env, 'LOOKUP_STORES', true),
    lookupStoreThreads: intVar(env, 'LOOKUP_STORE_THREADS', 1, 0, 16),
    lookupStoreSaturation: shareVar(env, 'LOOKUP_STORE_SATURATION', 0.9),
    pointerPollMs: intVar(env, 'POINTER_POLL_MS', 1000, 50, 60_000),
    shutdownGraceMs: intVar(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    duckdbMemoryLimit: memoryVar(env, 'DUCKDB_MEMORY_LIMIT', '768MB'),
    apiMemoryLimit: memoryVar(env, 'API_MEMORY_LIMIT', memoryVar(env, 'DUCKDB_MEMORY_LIMIT', '1GB')),
    duckdbThreads: threads === undefined || threads === '' ? null : intVar(env, 'DUCKDB_THREADS', 1, 1, 256),
    duckdbTempDir: path.resolve(cwd, env['DUCKDB_TEMP_DIR'] || path.join(dataDir, '.tmp')),
    maxRejectShare: shareVar(env, 'MAX_REJECT_SHARE', 0.05),
    lookupStoreExtras: boolVar(env, 'LOOKUP_STORE_EXTRAS', true),
    logLevel,
    logFormat: enumVar(env, 'LOG_FORMAT', ['auto', 'json', 'pretty'] as const, 'auto'),
    redisUrl: env['REDIS_URL'] || 'redis://127.0.0.1:6379',
    loadQueue: nameVar(env, 'LOAD_QUEUE', defaultLoadQueue(versionStore, dataDir, hostname())),
    retainVersions: intVar(env, 'RETAIN_VERSIONS', 5, 2, 10_000),
    publishGuards: boolVar(env, 'PUBLISH_GUARDS', true) ? {
      maxPoiDrop: shareVar(env, 'GUARD_MAX_POI_DROP', DEFAULT_GUARDS.maxPoiDrop),
      minVanishedRows: intVar(env, 'GUARD_MIN_VANISHED_ROWS', DEFAULT_GUARDS.minVanishedRows, 1, 1_000_000_000),
      maxNullRise: shareVar(env, 'GUARD_MAX_NULL_RISE', DEFAULT_GUARDS.maxNullRise),
      minWeekVisits: shareVar(env, 'GUARD_MIN_WEEK_VISITS', DEFAULT_GUARDS.minWeekVisits),
    } : null,
    loadAttempts: intVar(env, 'LOAD_ATTEMPTS', 5, 1, 100),
    workerLockMs: intVar(env, 'WORKER_LOCK_MS', 30_000, 500, 3_600_000),
    workerMaxStalls: intVar(env, 'WORKER_MAX_STALLS', 10, 0, 1000),
    metricsToken: tokenVar(env, 'METRICS_TOKEN'),
    workerMetricsPort: intVar(env, 'WORKER_METRICS_PORT', 0, 0, 65535) || null,
    versionStore,
    redisPrefix: nameVar(env, 'REDIS_PREFIX', 'placedata'),
    cacheGraceSeconds: intVar(env, 'CACHE_GRACE_SECONDS', 600, 0, 30 * 86_400),
    cacheMaxBytes: bytesVar(env, 'CACHE_MAX_BYTES', DEFAULT_CACHE_MAX_BYTES),
    cacheFetchWaitSeconds: intVar(env, 'CACHE_FETCH_WAIT_SECONDS', 30, 0, 3600),
    stageTimeoutSeconds: intVar(env, 'STAGE_TIMEOUT_SECONDS', 300, 0, 86_400),
    corsOrigins: originsVar(env, 'CORS_ORIGINS'),
    compression: boolVar(env, 'COMPRESSION', true),
    compressionMinBytes: intVar(env, 'COMPRESSION_MIN_BYTES', 1024, 0, 1_073_741_824),
    persistedQueryCacheBytes: intVar(env, 'PERSISTED_QUERY_CACHE_BYTES', 8_388_608, 0, 1_073_741_824),
  });
}

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { metricsText } from '../../shared/process-metrics.ts';
import { parseLabel } from '../../versions/version-label.ts';
import { readLoadFigures, type ProductFigures } from '../versions/load-figures.ts';
import type { RequestRecord } from './request-observer.ts';
import type { VersionCatalog } from '../versions/version-catalog.ts';
import type { ServedVersions } from '../versions/served-versions.ts';

/** Seconds: look-ups take milliseconds; the top buckets catch exports and stalls. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Placekeys per batch_lookup request, up to MAX_BATCH's default and past it. */
const BATCH_BUCKETS = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 5000];
/** Operations whose rows are places (entries, search results, exported rows), counted as Placekeys served. */
const PLACE_OPERATIONS: ReadonlySet<string> = new Set(['batch_lookup', 'lookup', 'search', 'export']);

/**
 * The web process's metrics (docs/operations.md, Metrics), in a registry of its own so that
 * several apps in one process (tests) never mix counts. Every label is a bounded set: operation,
 * outcome, error code, product; never a key, a Placekey or query text.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'operation' | 'outcome' | 'code'>;
  readonly #duration: Histogram<'operation' | 'outcome'>;
  readonly #batch: Histogram;
  readonly #served: Counter<'operation'>;
  readonly #rateLimited: Counter<'operation'>;

  constructor(store: ServedVersions, catalog: VersionCatalog) {
    const registers = [this.registry];
    this.#requests = new Counter({ name: 'placedata_requests_total', help: 'API requests by operation, outcome and error code (none when served)', labelNames: ['operation', 'outcome', 'code'], registers });
    this.#duration = new Histogram({ name: 'placedata_request_duration_seconds', help: 'Time from a request\'s arrival to the end of its response', labelNames: ['operation', 'outcome'], buckets: DURATION_BUCKETS, registers });
    this.#batch = new Histogram({ name: 'placedata_batch_lookup_placekeys', help: 'Placekeys asked for by each batch_lookup request whose body was read, whatever its outcome', buckets: BATCH_BUCKETS, registers });
    this.#served = new Counter({ name: 'placedata_placekeys_served_total', help: 'Places returned by batch_lookup, lookup and search requests (extensions.row_count) and rows streamed by exports', labelNames: ['operation'], registers });
    this.#rateLimited = new Counter({ name: 'placedata_rate_limited_total', help: 'Requests refused by the per-key rate limit (429 RATE_LIMITED)', labelNames: ['operation'], registers });
    new Gauge({
      name: 'placedata_version_info', help: 'The version in service (value 1), by label and release month', labelNames: ['version', 'release_month'], registers,
      collect() {
        this.reset();
        const label = store.current && parseLabel(store.current.label);
        if (label) this.set({ version: label.label, release_month: label.releaseMonth }, 1);
      },
    });
    new Gauge({
      name: 'placedata_version_age_seconds', help: 'Seconds since the version in service was built (from its label), at scrape time', registers,
      collect() {
        this.reset();
        const label = store.current && parseLabel(store.current.label);
        if (label) this.set(Date.now() / 1000 - label.builtAtEpoch);
      },
    });
    new Gauge({
      name: 'placedata_version_lookup_path', help: 'Where look-ups of core and weeks of the version in service are read from (value 1): the look-up stores of its files, or DuckDB (LOOKUP_STORES=false, a file without a store, or a store that failed)', labelNames: ['path'], registers,
      collect() {
        this.reset();
        if (store.current) this.set({ path: store.current.lookupPath }, 1);
      },
    });
    new Gauge({
      name: 'placedata_unavailable_files', help: 'Inherited files of the version in service that are missing or damaged on this machine, by reason (missing, checksum_mismatch): requests needing what they hold are refused with DATA_UNAVAILABLE (/readyz names them)', labelNames: ['reason'], registers,
      collect() {
        this.reset();
        for (const reason of ['missing', 'checksum_mismatch'] as const) this.set({ reason }, store.current?.unavailable.filter((u) => u.reason === reason).length ?? 0);
      },
    });
    new Gauge({
      name: 'placedata_lookup_store_failures', help: 'Look-up stores this process stopped trusting since it started: left out at a version\'s open (damaged, missing) or failing a read in service; each sends that file\'s look-ups to DuckDB', registers,
      collect() {
        this.set(store.storeFailures);
      },
    });
    new Gauge({
      name: 'placedata_lookup_store_thread_reads', help: 'Look-up store reads made on the read threads (LOOKUP_STORE_THREADS) since the process started: a look-up reading several files\' stores reads all but one there, one of a single file and 64 keys or more half its keys', registers,
      collect() {
        this.set(store.storeThreadReads);
      },
    });
    this.#cache(store);
    this.#versionFacts(store, catalog);
  }

  /** The machine's cache (with a version store only: on one machine nothing is fetched). */
  #cache(store: ServedVersions): void {
    const registers = [this.registry];
    let state: ReturnType<ServedVersions['cacheState']> | null = null;
    // One reading of the cache serves the gauges of one scrape.
    const read = () => (state ??= store.cacheState().finally(() => setImmediate(() => (state = null))));
    new Gauge({
      name: 'placedata_cache_bytes', help: 'The machine\'s cache of stored files (VERSION_STORE): bytes held now, and the budget (CACHE_MAX_BYTES)', labelNames: ['of'], registers,
      async collect() {
        this.reset();
        const c = await read();
        if (c) {
          this.set({ of: 'held' }, c.bytes);
          this.set({ of: 'budget' }, c.maxBytes);
        }
      },
    });
    new Gauge({
      name: 'placedata_version_files', help: 'Files of the version in service (VERSION_STORE): open here, or absent (fetched when a request first needs them)', labelNames: ['state'], registers,
      async collect() {
        this.reset();
        const c = await read();
        if (c) {
          this.set({ state: 'open' }, c.filesOpen);
          this.set({ state: 'absent' }, c.filesAbsent);
        }
      },
    });
    new Gauge({
      name: 'placedata_cache_events', help: 'What this process did with the cache since it started (VERSION_STORE): files fetched, evicted (over the budget), fetched in the background (prefetch); requests that waited for a file, and those answered 503 DATA_FETCHING (timeout)', labelNames: ['kind'], registers,
      async collect() {
        this.reset();
        const c = await read();
        if (c) {
          for (const [kind, n] of [['fetch', c.fetches], ['eviction', c.evictions], ['prefetch', c.prefetched], ['wait', c.waits], ['timeout', c.timeouts]] as const) this.set({ kind }, n);
        }
      },
    });
  }

  /** Rows and weeks of the version in service, and the versions retained, from the version files (read once per version). */
  #versionFacts(store: ServedVersions, catalog: VersionCatalog): void {
    const registers = [this.registry];
    let listing: ReturnType<VersionCatalog['list']> | null = null;
    // One listing serves the three gauges of one scrape.
    const list = () => (listing ??= catalog.list().catch(() => []).finally(() => setImmediate(() => (listing = null))));
    new Gauge({
      name: 'placedata_version_rows', help: 'Rows of the version in service, by product (core: POIs; weekly: POI-weeks)', labelNames: ['product'], registers,
      async collect() {
        this.reset();
        const current = (await list()).find((v) => v.label === store.current?.label);
        // The version in service is always cached on this machine, so its facts are known.
        if (current?.core_rows != null) this.set({ product: 'core' }, current.core_rows);
        if (current?.weekly_rows != null) this.set({ product: 'weekly' }, current.weekly_rows);
      },
    });
    new Gauge({
      name: 'placedata_version_weeks', help: 'Weeks of patterns the version in service covers', registers,
      async collect() {
        this.reset();
        const current = (await list()).find((v) => v.label === store.current?.label);
        if (current?.weeks_covered != null) this.set(current.weeks_covered);
      },
    });
    // A version file never changes: its load's figures are read once per label (the last one kept).
    let figures: { label: string; figures: Promise<Record<string, ProductFigures> | null> } | null = null;
    new Gauge({
      name: 'placedata_version_load_rows', help: 'What the load that built the version in service did to each delivered product\'s rows (read, loaded, rejected, duplicates)',
      labelNames: ['product', 'kind'], registers,
      async collect() {
        this.reset();
        const current = store.current;
        if (!current) return;
        if (figures?.label !== current.label) figures = { label: current.label, figures: readLoadFigures(current.file) };
        for (const [product, f] of Object.entries((await figures.figures) ?? {})) {
          for (const kind of ['read', 'loaded', 'rejected', 'duplicates'] as const) this.set({ product, kind }, f[kind]);
        }
      },
    });
    new Gauge({
      name: 'placedata_versions_retained', help: 'Version files retained in the data folder', registers,
      async collect() {
        this.set((await list()).length);
      },
    });
  }

  /** Counts one finished API request. */
  observe(r: RequestRecord): void {
    if (r.operation === null) return;
    this.#requests.inc({ operation: r.operation, outcome: r.outcome, code: r.code });
    this.#duration.observe({ operation: r.operation, outcome: r.outcome }, r.ms / 1000);
    if (r.operation === 'batch_lookup') this.#batch.observe(r.placekeys);
    if (PLACE_OPERATIONS.has(r.operation) && r.rows !== null) this.#served.inc({ operation: r.operation }, r.rows);
    if (r.outcome === 'rate_limited') this.#rateLimited.inc({ operation: r.operation });
  }

  /** The text exposition: the process's default metrics, then these. */
  text(): Promise<string> {
    return metricsText([this.registry]);
  }
}

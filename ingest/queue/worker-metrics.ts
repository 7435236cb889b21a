import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { metricsText } from '../../shared/process-metrics.ts';
import type { LoadReport } from '../drop/load-report.ts';

/** How a job attempt ended: published, found already published, failed for good, or failed to be retried. */
export type JobOutcome = 'completed' | 'already_loaded' | 'failed' | 'retry';

/** Seconds: demo loads take seconds, a licence's drop tens of minutes. */
const JOB_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200];

const QUEUE_COUNT_WAIT_MS = 1000;

/** BullMQ job states counted at scrape time. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;

/**
 * The worker's metrics (docs/operations.md, Metrics): job outcomes and durations, rows read,
 * loaded and rejected per product, the queue's job counts. Labels are bounded sets (outcome,
 * error code, product, reject reason, job state); never a job id, path or Placekey.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly #jobs: Counter<'outcome' | 'code'>;
  readonly #duration: Histogram<'outcome'>;
  readonly #read: Counter<'product'>;
  readonly #loaded: Counter<'product'>;
  readonly #rejected: Counter<'product' | 'reason'>;
  readonly #lastCompleted: Gauge;
  readonly #inProgress: Gauge;

  /** `queueCounts` gives the queue's job counts by state when scraped (null: not known, e.g. Redis away). */
  constructor(queueCounts: () => Promise<Record<string, number> | null>) {
    const registers = [this.registry];
    this.#jobs = new Counter({ name: 'placedata_ingest_jobs_total', help: 'Load job attempts run by this worker, by outcome and error code (none when published)', labelNames: ['outcome', 'code'], registers });
    this.#duration = new Histogram({ name: 'placedata_ingest_job_duration_seconds', help: 'Duration of load job attempts by outcome', labelNames: ['outcome'], buckets: JOB_BUCKETS, registers });
    this.#read = new Counter({ name: 'placedata_ingest_rows_read_total', help: 'Rows read by loads that produced a report (published or refused), by product', labelNames: ['product'], registers });
    this.#loaded = new Counter({ name: 'placedata_ingest_rows_loaded_total', help: 'Rows loaded into published versions, by product', labelNames: ['product'], registers });
    this.#rejected = new Counter({ name: 'placedata_ingest_rows_rejected_total', help: 'Rows rejected by loads that produced a report (published or refused), by product and reason', labelNames: ['product', 'reason'], registers });
    this.#lastCompleted = new Gauge({ name: 'placedata_ingest_last_completed_timestamp_seconds', help: 'When this worker last published a version (Unix seconds)', registers });
    this.#inProgress = new Gauge({ name: 'placedata_ingest_job_in_progress', help: '1 while this worker runs a load', registers });
    new Gauge({
      name: 'placedata_ingest_queue_jobs', help: 'Jobs in the load queue by state, at scrape time', labelNames: ['state'], registers,
      async collect() {
        this.reset();
        // Redis away: BullMQ queues commands until it returns, so a scrape waits at most a second.
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), QUEUE_COUNT_WAIT_MS)));
        const counts = await Promise.race([queueCounts().catch(() => null), late]).finally(() => clearTimeout(timer));
        for (const state of QUEUE_STATES) if (counts) this.set({ state }, counts[state] ?? 0);
      },
    });
  }

  started(): void {
    this.#inProgress.set(1);
  }

  /** Counts one finished attempt; `report` when the load produced one, `published` when it made a version. */
  finished(outcome: JobOutcome, code: string, seconds: number, report: LoadReport | null, published: boolean): void {
    this.#inProgress.set(0);
    this.#jobs.inc({ outcome, code });
    this.#duration.observe({ outcome }, seconds);
    if (outcome === 'completed') this.#lastCompleted.set(Date.now() / 1000);
    for (const [product, r] of Object.entries(report?.products ?? {})) {
      this.#read.inc({ product }, r.rows_read);
      if (published) this.#loaded.inc({ product }, r.rows_loaded);
      for (const [reason, count] of Object.entries(r.rejected)) this.#rejected.inc({ product, reason }, count ?? 0);
    }
  }

  text(): Promise<string> {
    return metricsText([this.registry]);
  }
}

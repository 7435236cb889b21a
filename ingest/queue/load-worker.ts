import { UnrecoverableError, Worker, type ConnectionOptions } from 'bullmq';
import { isAppError, ErrorCodes } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import type { BuildSettings, LoadProgress } from '../build/build-version.ts';
import { formatReport, type LoadReport } from '../drop/load-report.ts';
import { loadDrop } from '../publish/load-drop.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import type { LoadJob, LoadJobData, LoadJobResult } from './load-queue.ts';
import type { WorkerMetrics } from './worker-metrics.ts';
import type { GuardThresholds } from '../../shared/guard-thresholds.ts';
import type { HeldReason } from '../../shared/held-state.ts';

export interface WorkerSettings {
  readonly connection: ConnectionOptions;
  readonly queueName: string;
  /** Where versions are published: one machine's DATA_DIR, or the shared store (VERSION_STORE). */
  readonly site: VersionSite;
  readonly build: BuildSettings;
  readonly retain: number;
  readonly lockMs: number;
  readonly maxStalls: number;
  /** The publish guards' thresholds (null: off); a job enqueued with --force skips them. */
  readonly guards?: GuardThresholds | null;
}

/** Errors that will fail the same way on every try: the job fails at once, with the report. */
const PERMANENT = new Set<string>([ErrorCodes.BAD_DROP, ErrorCodes.OLDER_RELEASE, ErrorCodes.DEMO_DATA, ErrorCodes.VERSION_INVALID]);

function failure(err: unknown): Error {
  if (isAppError(err) && PERMANENT.has(err.code)) {
    const report = err.details?.['report'] as LoadReport | undefined;
    return new UnrecoverableError(`${err.code}: ${err.message}${report ? '\n' + formatReport(report) : ''}`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/** Per product: rows read, loaded, rejected and dropped as duplicates (counts only, for the log). */
function rowsOf(report: LoadReport | undefined): Record<string, { read: number; loaded: number; rejected: number; duplicates: number }> | undefined {
  if (!report) return undefined;
  return Object.fromEntries(Object.entries(report.products).map(([product, r]) => [product,
    { read: r.rows_read, loaded: r.rows_loaded, rejected: r.rejected_total, duplicates: r.duplicates_dropped }]));
}

/**
 * One JSON log line per job event (`event`: active, progress at each new phase, completed,
 * failed, stalled), and the worker's metrics. Job ids are drop content ids; job data holds
 * paths, never a secret.
 */
function jobEvents(job: LoadJob, log: Logger, metrics: WorkerMetrics | null) {
  const started = Date.now();
  const attempt = job.attemptsMade + 1;
  const attempts = job.opts.attempts ?? 1;
  let phase = '';
  metrics?.started();
  log.info({ event: 'active', job_id: job.id, attempt, attempts, files: job.data.files.length, waited_ms: started - job.timestamp }, 'load started');
  return {
    progress: (p: LoadProgress) => {
      if (p.phase === phase) return;
      phase = p.phase;
      log.info({ event: 'progress', job_id: job.id, phase: p.phase, percent: p.percent, rows: p.rows }, 'load progress');
    },
    completed: (label: string, alreadyLoaded: boolean, report: LoadReport, removed: number, held: readonly HeldReason[] | null) => {
      const ms = Date.now() - started;
      metrics?.finished(alreadyLoaded ? 'already_loaded' : 'completed', 'none', ms / 1000, alreadyLoaded ? null : report, !alreadyLoaded);
      if (held) log.warn({ event: 'completed', job_id: job.id, label, held: held.map((h) => h.guard), duration_ms: ms, rows: alreadyLoaded ? undefined : rowsOf(report) }, 'load held by the publish guards');
      else log.info({ event: 'completed', job_id: job.id, label, already_loaded: alreadyLoaded, duration_ms: ms, rows: alreadyLoaded ? undefined : rowsOf(report), removed_versions: removed }, 'load published');
    },
    failed: (err: unknown) => {
      const ms = Date.now() - started;
      const code = isAppError(err) ? err.code : 'INTERNAL';
      const willRetry = !PERMANENT.has(code) && attempt < attempts;
      const report = isAppError(err) ? err.details?.['report'] as LoadReport | undefined : undefined;
      metrics?.finished(willRetry ? 'retry' : 'failed', code, ms / 1000, report ?? null, false);
      log.warn({ event: 'failed', job_id: job.id, attempt, code, will_retry: willRetry, duration_ms: ms, rows: rowsOf(report), err: (err as Error).message.split('\n')[0] }, 'load failed');
    },
  };
}

/**
 * Processes loads one at a time. Transient failures (Redis, disk, a crash) are retried with
 * backoff by BullMQ; a bad drop fails without retry. A worker killed mid-load leaves only a temp
 * file (removed by the next load) and a job whose lock lapses, which is then retried.
 */
export function createLoadWorker(settings: WorkerSettings, log: Logger, metrics: WorkerMetrics | null = null): Worker<LoadJobData, LoadJobResult> {
  const processJob = async (job: LoadJob): Promise<LoadJobResult> => {
    const events = jobEvents(job, log, metrics);
    try {
      const options = {
        inputs: job.data.inputs, enqueued: true, month: job.data.month, settings: settings.build,
        retain: settings.retain, expectedDropId: job.data.dropId, guards: job.data.force ? null : settings.guards ?? null,
        allowOlder: job.data.allowOlder === true, replaceDemo: job.data.replaceDemo === true,
        onProgress: (p: LoadProgress) => {
          events.progress(p);
          void job.updateProgress({ ...p }).catch(() => undefined);
        },
      };
      const result = await loadDrop(options, settings.site);
      events.completed(result.label, result.alreadyLoaded, result.report, result.removedVersions.length, result.held);
      // A held version is the job's success: the hold is recorded (store and result), nothing to retry.
      return { label: result.label, alreadyLoaded: result.alreadyLoaded, removedVersions: result.removedVersions, summary: formatReport(result.report), ...(result.held ? { held: result.held } : {}) };
    } catch (err) {
      events.failed(err);
      throw failure(err);
    }
  };
  const worker = new Worker<LoadJobData, LoadJobResult>(settings.queueName, processJob, {
    connection: settings.connection,
    concurrency: 1,
    lockDuration: settings.lockMs,
    stalledInterval: settings.lockMs,
    maxStalledCount: settings.maxStalls,
  });
  // A job whose worker died (its lock lapsed): found by a live worker, which runs it again.
  worker.on('stalled', (jobId) => log.warn({ event: 'stalled', job_id: jobId }, 'load stalled'));
  return worker;
}

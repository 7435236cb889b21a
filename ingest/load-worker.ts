import { UnrecoverableError, Worker, type ConnectionOptions } from 'bullmq';
import { isAppError, ErrorCodes } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { BuildSettings, LoadProgress } from './build-version.ts';
import { formatReport, type LoadReport } from './load-report.ts';
import { loadDrop } from './load-drop.ts';
import { loadDropShared } from './load-drop-shared.ts';
import type { SharedVersions } from './shared-versions.ts';
import type { LoadJob, LoadJobData, LoadJobResult } from './load-queue.ts';

export interface WorkerSettings {
  readonly connection: ConnectionOptions;
  readonly queueName: string;
  readonly dataDir: string;
  readonly build: BuildSettings;
  readonly retain: number;
  readonly lockMs: number;
  readonly maxStalls: number;
  /** Versions shared between machines (VERSION_STORE set); null: DATA_DIR and its CURRENT file. */
  readonly shared?: SharedVersions | null;
}

/** Errors that will fail the same way on every try: the job fails at once, with the report. */
const PERMANENT = new Set<string>([ErrorCodes.BAD_DROP, ErrorCodes.VERSION_INVALID]);

function failure(err: unknown): Error {
  if (isAppError(err) && PERMANENT.has(err.code)) {
    const report = err.details?.['report'] as LoadReport | undefined;
    return new UnrecoverableError(`${err.code}: ${err.message}${report ? '\n' + formatReport(report) : ''}`);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Processes loads one at a time. Transient failures (Redis, disk, a crash) are retried with
 * backoff by BullMQ; a bad drop fails without retry. A worker killed mid-load leaves only a temp
 * file (removed by the next load) and a job whose lock lapses, which is then retried.
 */
export function createLoadWorker(settings: WorkerSettings, log: Logger): Worker<LoadJobData, LoadJobResult> {
  const processJob = async (job: LoadJob): Promise<LoadJobResult> => {
    log.info({ job_id: job.id, attempt: job.attemptsMade + 1, files: job.data.files.length }, 'load started');
    try {
      const options = {
        dataDir: settings.dataDir, inputs: job.data.inputs, month: job.data.month, settings: settings.build,
        retain: settings.retain, expectedDropId: job.data.dropId,
        onProgress: (p: LoadProgress) => void job.updateProgress({ ...p }).catch(() => undefined),
      };
      const result = settings.shared ? await loadDropShared(options, settings.shared) : await loadDrop(options);
      log.info({ job_id: job.id, label: result.label, already_loaded: result.alreadyLoaded }, 'load published');
      return { label: result.label, alreadyLoaded: result.alreadyLoaded, removedVersions: result.removedVersions, summary: formatReport(result.report) };
    } catch (err) {
      log.warn({ job_id: job.id, err: (err as Error).message.split('\n')[0] }, 'load failed');
      throw failure(err);
    }
  };
  return new Worker<LoadJobData, LoadJobResult>(settings.queueName, processJob, {
    connection: settings.connection,
    concurrency: 1,
    lockDuration: settings.lockMs,
    stalledInterval: settings.lockMs,
    maxStalledCount: settings.maxStalls,
  });
}

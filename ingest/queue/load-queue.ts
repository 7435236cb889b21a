import type { HeldReason } from '../../shared/held-state.ts';
import { Queue, type ConnectionOptions, type Job } from 'bullmq';
import type { DropFileDigest } from '../drop/drop-id.ts';
import { ErrorCodes } from '../../shared/errors.ts';

/**
 * What a load job carries: where the drop is and what it must contain. Never a secret: job data
 * is stored in Redis in clear.
 */
export interface LoadJobData {
  readonly inputs: readonly string[];
  readonly month: string | null;
  readonly dropId: string;
  readonly files: readonly DropFileDigest[];
  /** Enqueued with --force: published without the publish guards. */
  readonly force?: boolean;
  /** Enqueued with --allow-older: published even when its release month is older than the version in service's. */
  readonly allowOlder?: boolean;
  /** Enqueued with --replace-demo: where the demo is in service, published in its place (the demo versions deleted). */
  readonly replaceDemo?: boolean;
}

/** What a finished load job returns (kept in Redis with the job). */
export interface LoadJobResult {
  readonly label: string;
  readonly alreadyLoaded: boolean;
  readonly removedVersions: readonly string[];
  readonly summary: string;
  /** The publish guards it breached when the version was held instead of published (absent or null: published). */
  readonly held?: readonly HeldReason[] | null;
}

export type LoadJob = Job<LoadJobData, LoadJobResult>;

export const LOAD_JOB_NAME = 'load-drop';

export interface QueueSettings {
  readonly connection: ConnectionOptions;
  readonly name: string;
  readonly attempts: number;
}

export function createLoadQueue(settings: QueueSettings): Queue<LoadJobData, LoadJobResult> {
  return new Queue<LoadJobData, LoadJobResult>(settings.name, {
    connection: settings.connection,
    defaultJobOptions: {
      attempts: settings.attempts,
      backoff: { type: 'exponential', delay: 2000 },
      // Finished jobs stay for a month, so enqueuing the same drop again in that time is a no-op.
      removeOnComplete: { age: 30 * 86_400, count: 1000 },
      removeOnFail: { age: 30 * 86_400, count: 1000 },
    },
  });
}

/**
 * Adds a load whose job id is the drop's content id: a second enqueue of the same drop returns
 * the existing job instead of loading it again. Except a job refused as an older release
 * (OLDER_RELEASE) when the drop is enqueued again with --allow-older (or refused because the demo
 * was in service, DEMO_DATA, enqueued again with --replace-demo): the operator decided what
 * the refusal asked for, so a new job replaces it. Without the flag the refusal stands (a
 * restarted `watch` re-offering an inbox's old folders does not build them again).
 */
export async function enqueueLoad(queue: Queue<LoadJobData, LoadJobResult>, data: LoadJobData): Promise<{ job: LoadJob; created: boolean }> {
  const existing = await queue.getJob(data.dropId);
  const decided = (data.allowOlder === true && await refusedFor(existing, ErrorCodes.OLDER_RELEASE)) || (data.replaceDemo === true && await refusedFor(existing, ErrorCodes.DEMO_DATA));
  if (existing && !decided) return { job: existing, created: false };
  await existing?.remove();
  const job = await queue.add(LOAD_JOB_NAME, data, { jobId: data.dropId });
  return { job, created: true };
}

/** Whether a job failed for good with `code` (its release was older than the one in service, or the demo was in service). */
async function refusedFor(job: LoadJob | undefined, code: string): Promise<boolean> {
  return job !== undefined && job.failedReason?.startsWith(`${code}:`) === true && (await job.getState()) === 'failed';
}

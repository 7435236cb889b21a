import { QueueEvents, type ConnectionOptions, type Queue } from 'bullmq';
import type { Progress } from './cli-progress.ts';
import type { LoadJobData, LoadJobResult } from '../queue/load-queue.ts';

export type JobOutcome = { state: 'completed'; result: LoadJobResult } | { state: 'failed'; reason: string };

/**
 * Follows one job to its end, passing each progress report (phase, percent, rows) to
 * `onProgress`. Resolves with the result or the failure reason.
 */
export async function waitForJob(queue: Queue<LoadJobData, LoadJobResult>, connection: ConnectionOptions, jobId: string,
  onProgress: (p: Progress) => void): Promise<JobOutcome> {
  const events = new QueueEvents(queue.name, { connection });
  const show = onProgress;
  try {
    await events.waitUntilReady();
    const outcome = new Promise<JobOutcome>((resolve) => {
      events.on('progress', ({ jobId: id, data }) => { if (id === jobId) show(data as Progress); });
      events.on('completed', ({ jobId: id, returnvalue }) => {
        if (id === jobId) resolve({ state: 'completed', result: (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as LoadJobResult });
      });
      events.on('failed', ({ jobId: id, failedReason }) => { if (id === jobId) resolve({ state: 'failed', reason: failedReason }); });
    });
    // The job may have ended before we started listening.
    const job = await queue.getJob(jobId);
    const state = await job?.getState();
    if (job && state === 'completed') return { state: 'completed', result: job.returnvalue };
    // A retried job is 'delayed' or 'waiting', not 'failed': 'failed' is final.
    if (job && state === 'failed') return { state: 'failed', reason: job.failedReason };
    return await outcome;
  } finally {
    await events.close();
  }
}

import { QueueEvents, type ConnectionOptions, type Queue } from 'bullmq';
import cliProgress from 'cli-progress';
import type { LoadJobData, LoadJobResult } from './load-queue.ts';

export type JobOutcome = { state: 'completed'; result: LoadJobResult } | { state: 'failed'; reason: string };

interface Progress { phase?: string; percent?: number; rows?: number }

/**
 * Follows one job to its end, drawing a progress bar (phase, rows, percent) when `tty` is set,
 * else one line per phase. Resolves with the result or the failure reason.
 */
export async function waitForJob(queue: Queue<LoadJobData, LoadJobResult>, connection: ConnectionOptions, jobId: string,
  out: (line: string) => void, tty: boolean): Promise<JobOutcome> {
  const events = new QueueEvents(queue.name, { connection });
  const bar = tty ? new cliProgress.SingleBar({ format: 'load [{bar}] {percent}% | {phase} | {rows} rows', hideCursor: true }, cliProgress.Presets.shades_classic) : null;
  let lastPhase = '';
  const show = (p: Progress) => {
    if (bar) bar.update(Math.round(p.percent ?? 0), { phase: p.phase ?? '', rows: p.rows ?? 0 });
    else if (p.phase && p.phase !== lastPhase) out(`${p.phase} ${Math.round(p.percent ?? 0)}%${p.rows ? ` (${p.rows} rows)` : ''}`);
    lastPhase = p.phase ?? lastPhase;
  };
  try {
    await events.waitUntilReady();
    bar?.start(100, 0, { phase: 'queued', rows: 0 });
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
    bar?.stop();
    await events.close();
  }
}

import type { HeldReason } from './held-state.ts';
import path from 'node:path';
import { Queue, type Job, type QueueGetters } from 'bullmq';
import { redisConnection } from './redis-connection.ts';

/**
 * One load job as the status page shows it. Read from what the worker keeps in Redis
 * (ingest/queue/load-queue.ts: job data and result; ingest/queue/load-worker.ts: progress), field by field
 * and defensively: Redis content is not ours to trust, and a job enqueued by another version of
 * the worker may lack a field.
 */
export interface LoadJobView {
  readonly id: string;
  /** BullMQ state: waiting, active, delayed (a retry is due), completed, failed, ... */
  readonly state: string;
  /** The worker's last progress report: phase (inspect, stage, check, write, verify, publish, done), percent, rows. */
  readonly progress: { readonly phase: string | null; readonly percent: number; readonly rows: number | null } | null;
  readonly attempts: number;
  /** The drop's release month as enqueued (null: from the data) and its files' names (not their folders). */
  readonly month: string | null;
  readonly files: readonly string[];
  readonly enqueued_at: string;
  readonly started_at: string | null;
  readonly finished_at: string | null;
  readonly duration_ms: number | null;
  /** A finished load's report: the version it built (or found built), versions retention removed, the row summary. */
  readonly result: {
    readonly label: string; readonly already_loaded: boolean; readonly removed_versions: readonly string[]; readonly summary: string;
    /** Present when the publish guards held the version: the guards it breached. */
    readonly held?: readonly HeldReason[];
  } | null;
  /** Why the job failed (the load report's first lines), or null. Paths are cut to file names (withoutFolders). */
  readonly reason: string | null;
}

export interface LoadJobReaderOptions {
  readonly redisUrl: string;
  readonly queueName: string;
  /** How long a read may wait for Redis before the status says the queue cannot be read. */
  readonly timeoutMs?: number;
}

const STATES = ['active', 'waiting', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const;

/**
 * The newest `limit` jobs of every state, newest first (by enqueue time). BullMQ's `getJobs`
 * applies its range to each state on its own (up to `limit` of each), so the newest of those are
 * taken here: `placedata jobs --limit 1` once printed two.
 */
export async function newestJobs<J extends Job>(queue: QueueGetters<J>, limit: number): Promise<J[]> {
  const jobs = (await queue.getJobs([...STATES], 0, limit - 1, false)).filter((j): j is J => Boolean(j));
  return jobs.sort((a, b) => b.timestamp - a.timestamp).slice(0, limit);
}

/**
 * `text` with every absolute path cut to its last part (`drop path not found: /srv/drops/x` ->
 * `... x`). The status page is open to reader keys, which need not learn the servers' folders;
 * operators find whole paths in `placedata jobs` and the worker's log.
 */
export function withoutFolders(text: string): string {
  return text.replace(/(?<=^|[\s'"(=,])(?:\/[^\s/'"(),]+)*\/([^\s/'"(),]+)/g, '$1');
}

const iso = (ms: number | undefined | null): string | null => (typeof ms === 'number' && ms > 0 ? new Date(ms).toISOString() : null);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function viewProgress(p: unknown): LoadJobView['progress'] {
  if (typeof p === 'number') return { phase: null, percent: p, rows: null };
  if (typeof p !== 'object' || p === null) return null;
  const o = p as Record<string, unknown>;
  return { phase: text(o['phase']), percent: num(o['percent']) ?? 0, rows: num(o['rows']) };
}

function viewResult(r: unknown): LoadJobView['result'] {
  if (typeof r !== 'object' || r === null) return null;
  const o = r as Record<string, unknown>;
  const label = text(o['label']);
  if (label === null) return null;
  return {
    label, already_loaded: o['alreadyLoaded'] === true,
    removed_versions: Array.isArray(o['removedVersions']) ? o['removedVersions'].filter((v): v is string => typeof v === 'string') : [],
    summary: withoutFolders(text(o['summary']) ?? ''),
    ...(Array.isArray(o['held']) && o['held'].length ? { held: o['held'].filter((h): h is HeldReason => typeof h === 'object' && h !== null && typeof h.guard === 'string' && typeof h.message === 'string') } : {}),
  };
}

async function view(job: Job): Promise<LoadJobView> {
  const data = (typeof job.data === 'object' && job.data !== null ? job.data : {}) as Record<string, unknown>;
  const inputs = Array.isArray(data['inputs']) ? data['inputs'].filter((v): v is string => typeof v === 'string') : [];
  const files = Array.isArray(data['files'])
    ? data['files'].map((f) => text((f as Record<string, unknown> | null)?.['path'])).filter((v): v is string => v !== null)
    : inputs;
  return {
    id: String(job.id), state: await job.getState(), progress: viewProgress(job.progress), attempts: job.attemptsMade,
    month: text(data['month']), files: files.map((f) => path.basename(f)),
    enqueued_at: iso(job.timestamp) ?? new Date(0).toISOString(), started_at: iso(job.processedOn), finished_at: iso(job.finishedOn),
    duration_ms: job.finishedOn && job.processedOn ? job.finishedOn - job.processedOn : null,
    result: viewResult(job.returnvalue),
    // The worker puts the load report in the reason; its first lines say what went wrong.
    reason: job.failedReason ? withoutFolders(job.failedReason.split('\n').slice(0, 6).join('\n')) : null,
  };
}

/**
 * Reads the load queue for the web process's status page: the newest jobs of every state. It
 * connects on first use and never writes. A Redis that does not answer makes `recent` fail
 * within `timeoutMs` rather than hold the request.
 */
export class LoadJobReader {
  readonly #options: LoadJobReaderOptions;
  #queue: Queue | null = null;

  constructor(options: LoadJobReaderOptions) {
    this.#options = options;
  }

  get queueName(): string {
    return this.#options.queueName;
  }

  #open(): Queue {
    // enableOfflineQueue: false fails a command at once while Redis is away instead of queueing
    // it: the page says the queue cannot be read and polls again.
    if (this.#queue) return this.#queue;
    this.#queue = new Queue(this.#options.queueName, {
      connection: { ...redisConnection(this.#options.redisUrl), enableOfflineQueue: false, connectTimeout: 2000 },
    });
    // Connection errors surface through `recent`; the 'error' event needs a listener or Node throws.
    this.#queue.on('error', () => undefined);
    return this.#queue;
  }

  /** The newest `limit` jobs (by enqueue time), newest first. */
  async recent(limit: number): Promise<LoadJobView[]> {
    const queue = this.#open();
    const timeoutMs = this.#options.timeoutMs ?? 2000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the load queue did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([(async () => {
        await queue.waitUntilReady();
        return Promise.all((await newestJobs(queue, limit)).map(view));
      })(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    const queue = this.#queue;
    this.#queue = null;
    if (queue) await queue.close().catch(() => undefined);
  }
}

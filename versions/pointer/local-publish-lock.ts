import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import type { PublishLock } from './publish-lock.ts';

/** How long a holder may go without renewing before another process takes its lock as abandoned. */
const STALE_MS = 30_000;

/**
 * Serialises publishing among the processes of one machine (workers, `placedata load`, the status
 * page's rollback): a lock directory in DATA_DIR by `proper-lockfile`, renewed while held and
 * taken over once its holder stops renewing (a killed process). The many-machine form is the
 * Redis lock (versions/pointer/redis-publish-lock.ts); both are the same `PublishLock` to the pipeline.
 */
export class LocalPublishLock implements PublishLock {
  readonly #dir: string;

  constructor(dataDir: string) {
    this.#dir = dataDir;
  }

  async using<T>(work: () => Promise<T>): Promise<T> {
    await mkdir(this.#dir, { recursive: true });
    const release = await lockfile.lock(this.#dir, {
      lockfilePath: path.join(this.#dir, '.publish.lock'), stale: STALE_MS, realpath: false,
      retries: { forever: true, minTimeout: 50, maxTimeout: 500, factor: 1.5 },
    });
    try {
      return await work();
    } finally {
      await release().catch(() => undefined);
    }
  }
}

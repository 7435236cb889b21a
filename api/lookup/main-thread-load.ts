import { performance } from 'node:perf_hooks';

/** How long a measure of the event loop's utilisation lasts before the next is taken. */
const WINDOW_MS = 50;

/**
 * Idle time since the previous look-up from which this thread is not saturated, whatever its
 * utilisation: it waited for work (at concurrency 1 it waits for the client's next request
 * between every two look-ups, about 0.1-0.2 ms here, while its utilisation can read 0.9).
 */
const IDLE_GAP_MS = 0.05;

/**
 * Whether this thread's event loop is saturated: it has not been idle since the previous
 * look-up asked, and its utilisation (the share of time it was not waiting for events,
 * `performance.eventLoopUtilization`) over the last window of about 50 ms is at or above
 * `threshold`. Read once per look-up; the utilisation is measured once per window.
 */
export class MainThreadLoad {
  readonly #threshold: number;
  #mark = performance.eventLoopUtilization();
  #markedAt = performance.now();
  #saturated = false;
  #idle = this.#mark.idle;

  /** `threshold`: 0 to 1 (0: always saturated; 1: never). */
  constructor(threshold: number) {
    this.#threshold = threshold;
  }

  get saturated(): boolean {
    if (this.#threshold <= 0) return true;
    if (this.#threshold >= 1) return false;
    const now = performance.now();
    const mark = performance.eventLoopUtilization();
    const waited = mark.idle - this.#idle >= IDLE_GAP_MS;
    this.#idle = mark.idle;
    if (now - this.#markedAt >= WINDOW_MS) {
      this.#saturated = performance.eventLoopUtilization(mark, this.#mark).utilization >= this.#threshold;
      this.#mark = mark;
      this.#markedAt = now;
    }
    return this.#saturated && !waited;
  }
}

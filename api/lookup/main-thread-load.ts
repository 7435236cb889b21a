import { performance } from 'node:perf_hooks';

/** How long a measure of the event loop's utilisation lasts before the next is taken. */
const WINDOW_MS = 50;

/**
 * Whether this thread's event loop is saturated: its utilisation (the share of time it was not
 * waiting for events, `performance.eventLoopUtilization`) over the last window of about 50 ms at
 * or above `threshold`. Read on every look-up; measured once per window.
 */
export class MainThreadLoad {
  readonly #threshold: number;
  #mark = performance.eventLoopUtilization();
  #markedAt = performance.now();
  #saturated = false;

  /** `threshold`: 0 to 1 (0: always saturated; 1: never). */
  constructor(threshold: number) {
    this.#threshold = threshold;
  }

  get saturated(): boolean {
    if (this.#threshold <= 0) return true;
    if (this.#threshold >= 1) return false;
    const now = performance.now();
    if (now - this.#markedAt >= WINDOW_MS) {
      const mark = performance.eventLoopUtilization();
      this.#saturated = performance.eventLoopUtilization(mark, this.#mark).utilization >= this.#threshold;
      this.#mark = mark;
      this.#markedAt = now;
    }
    return this.#saturated;
  }
}

import { channel } from 'node:diagnostics_channel';

/**
 * Where a request's steps begin, published on the diagnostics channel `placedata.step` for a
 * step timer to read (bench/lookup-steps.ts: one request at a time, so the marks' order is the
 * request's). With no subscriber a mark costs one property read: the hot path keeps them.
 */

/** The channel's name, for a subscriber. */
export const STEP_CHANNEL = 'placedata.step';
const steps = channel(STEP_CHANNEL);

/** Marks the start of `step` (a name the step timer prints). */
export function markStep(step: string): void {
  if (steps.hasSubscribers) steps.publish(step);
}

/**
 * A read thread's part of a look-up (api/lookup/store-read-threads.ts), in milliseconds on one
 * clock for every thread (`performance.timeOrigin + performance.now()`): when the main thread
 * posted it, when the read thread took it up, when that thread had read and packed the documents
 * and when the main thread had them back. A read thread's work runs beside the main thread's
 * steps, so it is published apart from them, on `placedata.read-thread`.
 */
export interface ThreadRead {
  readonly posted: number;
  readonly received: number;
  readonly read: number;
  readonly settled: number;
}

/** The read threads' channel's name, for a subscriber. */
export const THREAD_READ_CHANNEL = 'placedata.read-thread';
const threadReads = channel(THREAD_READ_CHANNEL);

/** Whether a step timer listens to read threads' timelines: only then are a look-up's times taken. */
export function threadReadsTraced(): boolean {
  return threadReads.hasSubscribers;
}

/** Publishes a read thread's timeline (taken because threadReadsTraced said so). */
export function markThreadRead(timeline: ThreadRead): void {
  threadReads.publish(timeline);
}

/** Now, on the clock every thread of the process shares (ThreadRead). */
export function sharedNow(): number {
  return performance.timeOrigin + performance.now();
}

import { channel } from 'node:diagnostics_channel';

/**
 * Where a request's steps begin, published on the diagnostics channel `placedata.step` for a
 * step timer to read (bench/lookup-steps.ts: one request at a time, so the marks' order is the
 * request's). With no subscriber a mark costs one property read: the hot path keeps them.
 */
const steps = channel('placedata.step');

/** Marks the start of `step` (a name the step timer prints). */
export function markStep(step: string): void {
  if (steps.hasSubscribers) steps.publish(step);
}

/** The channel's name, for a subscriber. */
export const STEP_CHANNEL = 'placedata.step';

/** Why a version is held, as recorded: the publish guards it breached (ingest/publish/publish-guards.ts). */
export interface HeldReason {
  readonly guard: string;
  readonly message: string;
}

/** A held version's state in its record: built and stored, not published until an operator says so. */
export interface HeldState {
  /** When the load held it (ISO 8601). */
  readonly at: string;
  /** The version it was compared with (the one served when it was built). */
  readonly compared_with: string | null;
  readonly reasons: readonly HeldReason[];
}

/** A held state as recorded, or null when absent or not of this shape. */
export function parseHeld(value: unknown): HeldState | null {
  if (value === undefined || value === null) return null;
  // A hold this release cannot read still holds: serving a version someone held would be worse.
  const unreadable: HeldState = { at: '', compared_with: null, reasons: [{ guard: 'unreadable', message: 'held; the hold was recorded in a form this release cannot read' }] };
  if (typeof value !== 'object') return unreadable;
  const v = value as Record<string, unknown>;
  if (typeof v['at'] !== 'string' || !(v['compared_with'] === null || typeof v['compared_with'] === 'string') || !Array.isArray(v['reasons'])) return unreadable;
  const reasons = v['reasons'].filter((r): r is HeldReason => typeof r === 'object' && r !== null
    && typeof (r as HeldReason).guard === 'string' && typeof (r as HeldReason).message === 'string');
  if (reasons.length !== v['reasons'].length) return unreadable;
  return { at: v['at'], compared_with: v['compared_with'] as string | null, reasons };
}

/**
 * The guards of a hold, each once with how often it fired (`category_vanished x26`), in the
 * order first seen: a month that lost 26 categories is one reason, not 26 lines.
 */
export function groupedGuards(reasons: readonly HeldReason[]): string[] {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r.guard, (counts.get(r.guard) ?? 0) + 1);
  return [...counts].map(([guard, n]) => (n === 1 ? guard : `${guard} x${n}`));
}

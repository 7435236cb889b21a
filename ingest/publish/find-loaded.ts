import type { HeldReason } from '../../shared/held-state.ts';
import type { VersionSite } from '../../versions/version-site.ts';

/** A retained version already built from a drop, and what was done about it. */
export interface AlreadyLoaded {
  readonly label: string;
  /** Whether the pointer was moved to it now: its publish had stopped between its record and the pointer. */
  readonly completed: boolean;
  /** The version served afterwards. */
  readonly current: string | null;
  /** Why it is held, when it was held by the publish guards (and is still): nothing was published. */
  readonly held: readonly HeldReason[] | null;
}

/**
 * For a queued load (a retry, or the same drop enqueued again after Redis lost its job history):
 * the newest retained version built from this drop, if any. It never moves what is served
 * backwards: the pointer moves to it only when it was built on the version served now, which is
 * a publish that stopped after recording the version and before moving the pointer (a worker
 * killed in between). Otherwise it says where things are and changes nothing. Runs under the
 * publish lock.
 */
export async function findLoaded(site: VersionSite, dropId: string): Promise<AlreadyLoaded | null> {
  const versions = await site.store.list();
  for (const v of [...versions].reverse()) {
    const record = await site.store.record(v.label);
    if (record?.dropId !== dropId) continue;
    const current = await site.pointer.read();
    // A held version waits for an operator: a retry or a second enqueue never publishes it.
    if (record.held) return { label: v.label, completed: false, current, held: record.held.reasons };
    if (current !== v.label && record.base === current) {
      await site.stage?.(v.label);
      if (await site.pointer.swap(current, v.label)) return { label: v.label, completed: true, current: v.label, held: null };
    }
    return { label: v.label, completed: false, current, held: null };
  }
  return null;
}

import { AppError, ErrorCodes } from './errors.ts';
import type { PublishLock } from './publish-lock.ts';
import { rollbackTarget, type RollbackTarget } from './rollback-target.ts';
import type { VersionFileStore } from './version-file-store.ts';
import type { VersionPointer } from './version-pointer.ts';

/** What a rollback on many machines needs; `stage` waits until every web process has the target cached (shared/web-fleet.ts). */
export interface SharedRollbackDeps {
  readonly store: VersionFileStore;
  readonly pointer: VersionPointer;
  readonly lock: PublishLock;
  readonly stage?: (label: string) => Promise<void>;
}

/**
 * Rollback when versions are shared between machines: the Redis pointer moves (compare-and-set,
 * under the publish lock, announced to every web process) to a version fully stored in the
 * store: `label`, or with `previous` the one built just before the current one. Each web process
 * has it staged (downloaded and verified) before the pointer moves; one that cannot keeps its version.
 * The one rollback for many machines, as shared/rollback.ts is for one: the CLI and the status
 * page's button both call it when VERSION_STORE is set.
 * @throws AppError VERSION_NOT_FOUND
 */
export async function rollbackShared(shared: SharedRollbackDeps, target: RollbackTarget): Promise<{ from: string | null; to: string }> {
  return shared.lock.using(async () => {
    const versions = await shared.store.list();
    const current = await shared.pointer.read();
    const to = rollbackTarget(versions.map((v) => v.label), current, target);
    if ((await shared.store.facts(to)) === null) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `no retained version ${JSON.stringify(target.label ?? '')}`);
    await shared.stage?.(to);
    if (!(await shared.pointer.swap(current, to))) throw new Error('the pointer moved during the rollback; try again');
    return { from: current, to };
  });
}

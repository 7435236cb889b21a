import { AppError, ErrorCodes } from '../shared/errors.ts';
import { rollbackTarget, type RollbackTarget } from './rollback-target.ts';
import { retainAfter, type RetentionPlan } from './retention/retention.ts';
import type { VersionSite } from './version-site.ts';

/**
 * Points the service at a retained version: `label`, or with `previous` the version built just
 * before the current one. The one way the pointer is moved back, for the CLI (`placedata
 * rollback`) and the status page alike, on one machine and on many: under the publish lock, the
 * target's files (its own and every file it inherits from) must all be stored; on one machine they
 * are proved against their published sha256 before the pointer moves, on many each web process
 * stages (downloads and proves) them first. Nothing is copied: a rollback is a pointer move.
 * Then retention with `keep` (RETAIN_VERSIONS), which never expires the target, the version built
 * before it, nor the one served until now.
 * @throws AppError VERSION_NOT_FOUND (no such retained version), VERSION_INVALID (a file is gone or damaged)
 */
export async function rollback(site: VersionSite, target: RollbackTarget, keep?: number): Promise<{ from: string | null; to: string; retention: RetentionPlan }> {
  return site.lock.using(async () => {
    const versions = await site.store.list();
    const current = await site.pointer.read();
    // Held versions were never published: --previous passes over them, and naming one is refused.
    const held = new Set<string>();
    for (const v of versions) if ((await site.store.record(v.label))?.held) held.add(v.label);
    if (target.label !== undefined && held.has(target.label)) {
      throw new AppError(ErrorCodes.VERSION_HELD, `version ${target.label} is held by the publish guards; publish it with \`placedata publish ${target.label}\``);
    }
    const to = rollbackTarget(versions.map((v) => v.label).filter((l) => !held.has(l)), current, target);
    const record = await site.store.record(to);
    if (!record) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `no retained version ${JSON.stringify(to)}`);
    const stored = new Set((await site.store.files()).map((f) => f.label));
    const missing = record.files.filter((f) => !stored.has(f.label)).map((f) => f.label);
    if (missing.length) throw new AppError(ErrorCodes.VERSION_INVALID, `version ${to} inherits from files that are no longer stored: ${missing.join(', ')}`);
    if (site.cache.local) {
      for (const f of [{ label: to, sha256: record.sha256 }, ...record.files]) await site.cache.ensure(f.label, f.sha256);
    }
    await site.stage?.(to);
    if (!(await site.pointer.swap(current, to))) throw new Error('the pointer moved during the rollback; try again');
    return { from: current, to, retention: await retainAfter(site, keep, current) };
  });
}

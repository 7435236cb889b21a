import { mkdir } from 'node:fs/promises';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { fileSha256 } from '../shared/file-sha256.ts';
import { makeLabel, assertReleaseMonth } from '../shared/version-label.ts';
import { buildVersion } from './build-version.ts';
import { identifyDrop, type DropIdentity } from './drop-id.ts';
import { listVersions } from './list-versions.ts';
import { resourceError } from './load-failure.ts';
import type { LoadOptions, LoadResult } from './load-drop.ts';
import { verifyBuiltFile } from '../shared/verify-built-file.ts';
import { readVersionInfo } from '../shared/version-info.ts';
import { retentionVictims } from './retention.ts';
import type { SharedVersions } from './shared-versions.ts';
import { buildTempPath, cleanStaleBuilds, removeBuildFiles } from './temp-files.ts';

/** Builds tried before giving up for this attempt (BullMQ retries the job later). */
const MAX_REBUILDS = 5;

/** The published version built from this drop, if any (a retry after a crash between publish and acknowledgement). */
async function findStored(shared: SharedVersions, drop: DropIdentity, memoryLimit: string): Promise<LoadResult | null> {
  const stored = await shared.store.list();
  for (const v of [...stored].reverse()) {
    if ((await shared.store.facts(v.label))?.dropId !== drop.id) continue;
    // As with one machine (load-drop.ts): the retried job makes its version current; it may
    // have been stored by an attempt that died before moving the pointer.
    await shared.lock.using(async () => {
      const current = await shared.pointer.read();
      if (current !== v.label) await shared.pointer.swap(current, v.label);
    });
    const file = await shared.cache.ensure(v.label);
    const summary = (await listVersions(shared.cache.dir, memoryLimit)).find((s) => s.label === v.label)!;
    return { label: v.label, file, report: summary.report, dropId: drop.id, alreadyLoaded: true, removedVersions: [] };
  }
  return null;
}

/**
 * The whole load when versions are shared between machines. Build locally from the version the
 * pointer names (downloaded into the cache if this machine has no copy), verify, then under the
 * publish lock: if the pointer still names that base, upload the file with its sha256, move the
 * pointer by compare-and-set (which announces it), and apply retention to the store. If another
 * load (or a rollback) moved the pointer while this one was building, the build is thrown away
 * and done again from the new base, so carry-forward always starts from the latest published
 * version and two loads never publish conflicting versions. Nothing is announced before it is
 * fully stored.
 */
export async function loadDropShared(opts: LoadOptions, shared: SharedVersions): Promise<LoadResult> {
  if (opts.month !== null) assertReleaseMonth(opts.month);
  const progress = opts.onProgress ?? (() => undefined);
  const dir = shared.cache.dir;
  await mkdir(dir, { recursive: true });
  await cleanStaleBuilds(dir, opts.settings.tempDir);
  const drop = await identifyDrop(opts.inputs, opts.month);
  if (opts.expectedDropId !== undefined) {
    if (drop.id !== opts.expectedDropId) throw new AppError(ErrorCodes.BAD_DROP, 'the drop\'s files changed after it was enqueued; enqueue it again');
    const loaded = await findStored(shared, drop, opts.settings.memoryLimit);
    if (loaded) return loaded;
  }
  for (let build = 1; build <= MAX_REBUILDS; build++) {
    const base = await shared.pointer.read();
    const baseFile = base ? await shared.cache.ensure(base) : null;
    const builtAt = (opts.now ?? (() => new Date()))();
    // Labels must be unique and increasing even when two loads finish within one second.
    const lastEpoch = (await shared.store.list()).reduce((max, v) => Math.max(max, v.builtAtEpoch), 0);
    const epoch = Math.max(Math.floor(builtAt.getTime() / 1000), lastEpoch + 1);
    const temp = buildTempPath(dir);
    try {
      const { label, report } = await buildVersion({
        targetFile: temp, month: opts.month, builtAt, drop, onProgress: progress, previousFile: baseFile,
        labelFor: (month) => makeLabel(epoch, month),
      }, opts.settings);
      progress({ phase: 'verify', percent: 90 });
      await verifyBuiltFile(temp, label, opts.settings.memoryLimit);
      const sha256 = await fileSha256(temp);
      // Recorded with the file so every web process lists the version's facts without downloading it.
      const info = await readVersionInfo(temp, opts.settings.memoryLimit);
      progress({ phase: 'publish', percent: 95 });
      const published = await shared.lock.using(async () => {
        if ((await shared.pointer.read()) !== base) return null;
        if ((await shared.store.facts(label)) !== null) return null; // a concurrent load took this label
        await shared.store.put(label, temp, { sha256, dropId: drop.id, info });
        await shared.stage?.(label);
        if (!(await shared.pointer.swap(base, label))) {
          // Moved after the check (a rollback does not take the lock): this file is not published.
          await shared.store.remove(label);
          return null;
        }
        const stored = await shared.store.list();
        const removed: string[] = [];
        if (opts.retain) {
          for (const v of retentionVictims(stored, label, opts.retain, base)) {
            await shared.store.remove(v.label);
            removed.push(v.label);
          }
        }
        return removed;
      });
      if (published === null) {
        progress({ phase: 'stage', percent: 0 });
        continue; // the base changed while building: build again from the new one
      }
      const file = await shared.cache.adopt(label, temp);
      await shared.cache.prune([label, base], shared.cacheGraceMs);
      progress({ phase: 'done', percent: 100 });
      return { label, file, report, dropId: drop.id, alreadyLoaded: false, removedVersions: published };
    } catch (err) {
      throw resourceError(err, opts.settings) ?? err;
    } finally {
      await removeBuildFiles(temp);
    }
  }
  // Transient (other loads kept publishing first): BullMQ retries the job with backoff.
  throw new Error(`the published version changed during each of ${MAX_REBUILDS} builds; will retry`);
}

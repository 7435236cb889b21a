import { mkdir } from 'node:fs/promises';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { readPointer, writePointer } from '../shared/pointer.ts';
import { makeLabel, assertReleaseMonth } from '../shared/version-label.ts';
import { listVersionFiles, versionFilePath } from '../shared/version-files.ts';
import { buildVersion, type BuildSettings, type LoadProgress } from './build-version.ts';
import { identifyDrop } from './drop-id.ts';
import { listVersions } from './list-versions.ts';
import { resourceError } from './load-failure.ts';
import type { LoadReport } from './load-report.ts';
import { publishVersion } from './publish-version.ts';
import { verifyBuiltFile } from '../shared/verify-built-file.ts';
import { applyRetention } from './retention.ts';
import { buildTempPath, cleanStaleBuilds, removeBuildFiles } from './temp-files.ts';

export interface LoadOptions {
  readonly dataDir: string;
  readonly inputs: readonly string[];
  readonly month: string | null;
  readonly settings: BuildSettings;
  /** Make the new version current (default true). */
  readonly makeCurrent?: boolean;
  /** Versions to keep after publishing (default: keep all). */
  readonly retain?: number;
  /**
   * For queued loads: the drop id the job was enqueued with. The load fails if the files changed
   * since, and if a retained version was already built from this drop (a retry after a crash
   * between publish and acknowledgement) it is made current instead of being built twice.
   */
  readonly expectedDropId?: string;
  readonly onProgress?: (progress: LoadProgress) => void;
  readonly now?: () => Date;
}

export interface LoadResult {
  readonly label: string;
  readonly file: string;
  readonly report: LoadReport;
  readonly dropId: string;
  /** True when an earlier attempt had already built this drop's version. */
  readonly alreadyLoaded: boolean;
  readonly removedVersions: readonly string[];
}

async function findLoaded(dataDir: string, dropId: string, memoryLimit: string): Promise<LoadResult | null> {
  const found = (await listVersions(dataDir, memoryLimit)).find((v) => v.drop_id === dropId);
  if (!found) return null;
  if (!found.current) await writePointer(dataDir, found.label);
  return { label: found.label, file: versionFilePath(dataDir, found.label), report: found.report, dropId, alreadyLoaded: true, removedVersions: [] };
}

/**
 * The whole load, inline: build under a temp name, verify, publish, switch the pointer. Whatever
 * fails, the version being served is untouched: nothing is renamed or pointed at until the new
 * file has been checkpointed, closed and verified.
 */
export async function loadDrop(opts: LoadOptions): Promise<LoadResult> {
  if (opts.month !== null) assertReleaseMonth(opts.month);
  const progress = opts.onProgress ?? (() => undefined);
  await mkdir(opts.dataDir, { recursive: true });
  await cleanStaleBuilds(opts.dataDir, opts.settings.tempDir);
  const drop = await identifyDrop(opts.inputs, opts.month);
  if (opts.expectedDropId !== undefined) {
    if (drop.id !== opts.expectedDropId) throw new AppError(ErrorCodes.BAD_DROP, 'the drop\'s files changed after it was enqueued; enqueue it again');
    const loaded = await findLoaded(opts.dataDir, drop.id, opts.settings.memoryLimit);
    if (loaded) return loaded;
  }
  const builtAt = (opts.now ?? (() => new Date()))();
  const versions = await listVersionFiles(opts.dataDir);
  const current = await readPointer(opts.dataDir);
  if (current && !versions.some((v) => v.label === current)) {
    throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `the pointer names ${current}, but its file is missing`);
  }
  // Labels must be unique and increasing even when two loads finish within one second.
  const lastEpoch = versions.reduce((max, v) => Math.max(max, v.builtAtEpoch), 0);
  const epoch = Math.max(Math.floor(builtAt.getTime() / 1000), lastEpoch + 1);
  const temp = buildTempPath(opts.dataDir);
  try {
    const { label, report } = await buildVersion({
      targetFile: temp, month: opts.month, builtAt, drop, onProgress: progress,
      previousFile: current ? versionFilePath(opts.dataDir, current) : null,
      labelFor: (month) => makeLabel(epoch, month),
    }, opts.settings);
    progress({ phase: 'verify', percent: 90 });
    await verifyBuiltFile(temp, label, opts.settings.memoryLimit);
    progress({ phase: 'publish', percent: 95 });
    const file = await publishVersion(opts.dataDir, temp, label, opts.makeCurrent ?? true);
    const removedVersions = opts.retain ? await applyRetention(opts.dataDir, opts.retain, current) : [];
    progress({ phase: 'done', percent: 100 });
    return { label, file, report, dropId: drop.id, alreadyLoaded: false, removedVersions };
  } catch (err) {
    throw resourceError(err, opts.settings) ?? err;
  } finally {
    await removeBuildFiles(temp);
  }
}

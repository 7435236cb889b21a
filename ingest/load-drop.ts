import { mkdir } from 'node:fs/promises';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { readPointer } from '../shared/pointer.ts';
import { makeLabel, assertReleaseMonth } from '../shared/version-label.ts';
import { listVersionFiles, versionFilePath } from '../shared/version-files.ts';
import { buildVersion, type BuildSettings } from './build-version.ts';
import type { LoadReport } from './load-report.ts';
import { publishVersion, verifyBuiltFile } from './publish-version.ts';
import { buildTempPath, cleanStaleBuilds, removeBuildFiles } from './temp-files.ts';

export interface LoadOptions {
  readonly dataDir: string;
  readonly inputs: readonly string[];
  readonly month: string | null;
  readonly settings: BuildSettings;
  /** Make the new version current (default true). */
  readonly makeCurrent?: boolean;
  readonly now?: () => Date;
}

export interface LoadResult {
  readonly label: string;
  readonly file: string;
  readonly report: LoadReport;
}

/**
 * The whole load, inline: build under a temp name, verify, publish, switch the pointer. Whatever
 * fails, the version being served is untouched: nothing is renamed or pointed at until the new
 * file has been checkpointed, closed and verified.
 */
export async function loadDrop(opts: LoadOptions): Promise<LoadResult> {
  if (opts.month !== null) assertReleaseMonth(opts.month);
  await mkdir(opts.dataDir, { recursive: true });
  await cleanStaleBuilds(opts.dataDir);
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
      targetFile: temp, inputs: opts.inputs, month: opts.month, builtAt,
      previousFile: current ? versionFilePath(opts.dataDir, current) : null,
      labelFor: (month) => makeLabel(epoch, month),
    }, opts.settings);
    await verifyBuiltFile(temp, label, opts.settings.memoryLimit);
    const file = await publishVersion(opts.dataDir, temp, label, opts.makeCurrent ?? true);
    return { label, file, report };
  } finally {
    await removeBuildFiles(temp);
  }
}

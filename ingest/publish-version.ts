import { link, open, unlink } from 'node:fs/promises';
import { fsyncDir } from '../shared/atomic-write.ts';
import { AppError, ErrorCodes } from '../shared/errors.ts';
import { writePointer } from '../shared/pointer.ts';
import { versionFilePath } from '../shared/version-files.ts';

async function fsyncFile(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Gives a verified build its final name and makes it current: fsync, link to
 * `<label>.duckdb` (which fails rather than overwrite an existing version), drop the temp name,
 * fsync the folder, then switch the pointer atomically.
 */
export async function publishVersion(dataDir: string, builtFile: string, label: string, makeCurrent: boolean): Promise<string> {
  const finalFile = versionFilePath(dataDir, label);
  await fsyncFile(builtFile);
  try {
    await link(builtFile, finalFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new AppError(ErrorCodes.VERSION_INVALID, `version ${label} exists already`);
    throw err;
  }
  await unlink(builtFile);
  await fsyncDir(dataDir);
  if (makeCurrent) await writePointer(dataDir, label);
  return finalFile;
}

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../shared/atomic-write.ts';
import { parseLabel } from '../version-label.ts';
import { AppError, ErrorCodes } from '../../shared/errors.ts';

/** The pointer file: one line, the label of the version being served. */
export const POINTER_FILE = 'CURRENT';

export function pointerPath(dataDir: string): string {
  return path.join(dataDir, POINTER_FILE);
}

/** The label the pointer names, or null when there is no pointer yet. */
export async function readPointer(dataDir: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(pointerPath(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const label = text.trim();
  if (!parseLabel(label)) throw new AppError(ErrorCodes.VERSION_INVALID, `pointer ${pointerPath(dataDir)} does not hold a version label`);
  return label;
}

/** Points the service at `label`, atomically (temp file, fsync, rename, fsync dir). */
export async function writePointer(dataDir: string, label: string): Promise<void> {
  if (!parseLabel(label)) throw new AppError(ErrorCodes.VERSION_INVALID, `not a version label: ${JSON.stringify(label)}`);
  await writeFileAtomic(pointerPath(dataDir), label + '\n');
}

import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileNameOf, labelFromFileName, type VersionLabel } from './version-label.ts';

export interface VersionFile extends VersionLabel {
  readonly file: string;
  readonly bytes: number;
}

/** The version files in `dataDir`, oldest build first. Temp and hidden files are not versions. */
export async function listVersionFiles(dataDir: string): Promise<VersionFile[]> {
  let names: string[];
  try {
    names = await readdir(dataDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const found: VersionFile[] = [];
  for (const name of names) {
    const parsed = labelFromFileName(name);
    if (!parsed) continue;
    const file = path.join(dataDir, name);
    found.push({ ...parsed, file, bytes: (await stat(file)).size });
  }
  return found.sort((a, b) => a.builtAtEpoch - b.builtAtEpoch || a.label.localeCompare(b.label));
}

export function versionFilePath(dataDir: string, label: string): string {
  return path.join(dataDir, fileNameOf(label));
}

/** A file's look-up store sits beside it: `<label>.lookup` for `<label>.duckdb` (any `.duckdb` name, builds included). */
export function lookupStorePath(duckdbFile: string): string {
  return duckdbFile.replace(/\.duckdb$/, '') + LOOKUP_SUFFIX;
}

/** The name ending of look-up stores; lmdb may keep `<store>-lock` beside an open one. */
export const LOOKUP_SUFFIX = '.lookup';

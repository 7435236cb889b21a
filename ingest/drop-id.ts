import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { resolveDropPaths } from './drop-files.ts';
import { sha256File } from './file-hash.ts';

export interface DropFileDigest {
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
}

export interface DropIdentity {
  /** `drop-<hex>`: the same files with the same content and month always give the same id. */
  readonly id: string;
  readonly files: readonly DropFileDigest[];
}

/**
 * Identifies a drop by its content: each file's name, size and SHA-256, and the release month.
 * Enqueuing the same drop twice gives the same job id, so it is loaded once.
 */
export async function identifyDrop(inputs: readonly string[], month: string | null): Promise<DropIdentity> {
  const files: DropFileDigest[] = [];
  for (const file of await resolveDropPaths(inputs)) {
    files.push({ path: file, bytes: (await stat(file)).size, sha256: await sha256File(file) });
  }
  const hash = createHash('sha256').update(`month=${month ?? ''}\n`);
  for (const f of [...files].sort((a, b) => a.sha256.localeCompare(b.sha256))) hash.update(`${path.basename(f.path)}\t${f.bytes}\t${f.sha256}\n`);
  return { id: 'drop-' + hash.digest('hex').slice(0, 40), files };
}

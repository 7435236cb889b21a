import { readPointer, writePointer } from './pointer.ts';
import { rollbackTarget, type RollbackTarget } from './rollback-target.ts';
import { listVersionFiles } from './version-files.ts';
import { verifyBuiltFile } from './verify-built-file.ts';

/**
 * Points the service at a retained version: `label`, or with `previous` the version built just
 * before the current one. The target is verified before the pointer moves. The one way the
 * pointer is moved back, for the CLI (`placedata rollback`) and the API (`POST /v1/admin/rollback`)
 * alike, so a change of where the pointer lives changes both.
 * @throws AppError VERSION_NOT_FOUND
 */
export async function rollback(dataDir: string, target: RollbackTarget, memoryLimit: string): Promise<{ from: string | null; to: string }> {
  const versions = await listVersionFiles(dataDir);
  const current = await readPointer(dataDir);
  const to = rollbackTarget(versions.map((v) => v.label), current, target);
  await verifyBuiltFile(versions.find((v) => v.label === to)!.file, to, memoryLimit);
  await writePointer(dataDir, to);
  return { from: current, to };
}

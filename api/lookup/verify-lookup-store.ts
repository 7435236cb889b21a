import { stat } from 'node:fs/promises';
import { fileSha256 } from '../../shared/file-sha256.ts';
import { LookupStoreDamaged } from '../../versions/lookup-store/lookup-store-damaged.ts';

/** What the build recorded of a store file (ingest's BuiltLookupStore). */
export interface RecordedStore {
  readonly bytes: number;
  readonly sha256: string;
}

/**
 * The whole-file check of a look-up store before it takes traffic: its size and sha256 against
 * those recorded when it was built. It catches what the per-read checks cannot: damage to lmdb's
 * own structure (a node's size, a page header), which kills the process when a read meets it
 * (test/integration/lookup-store.test.ts). It also leaves the file in the page cache.
 * Reads the whole file (about 1 s per GB here); cache the result per machine by file identity.
 * @throws LookupStoreDamaged when either differs; a missing file, ENOENT.
 */
export async function verifyLookupStore(file: string, recorded: RecordedStore): Promise<void> {
  const bytes = (await stat(file)).size;
  if (bytes !== recorded.bytes) throw new LookupStoreDamaged(file, `it is ${bytes} bytes, built ${recorded.bytes}`);
  const sha256 = await fileSha256(file);
  if (sha256 !== recorded.sha256) throw new LookupStoreDamaged(file, `its sha256 is ${sha256}, built ${recorded.sha256}`);
}

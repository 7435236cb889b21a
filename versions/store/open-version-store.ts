import type { VersionStoreSetting } from '../../shared/config.ts';
import { DirectoryVersionStore } from './directory-version-store.ts';
import { S3VersionStore } from './s3-version-store.ts';
import type { VersionFileStore } from './version-file-store.ts';

/** The store VERSION_STORE names. */
export function openVersionFileStore(setting: VersionStoreSetting): VersionFileStore {
  return setting.kind === 's3' ? new S3VersionStore(setting) : new DirectoryVersionStore(setting.dir);
}

import type { VersionInfo } from './version-info.ts';
import type { VersionLabel } from './version-label.ts';

/** One version file held by a store, fully stored (its checksum is recorded). */
export interface StoredVersion extends VersionLabel {
  readonly bytes: number;
}

/** What a store records beside a version file. */
export interface StoredFacts {
  /** SHA-256 (hex) of the whole file, checked by every process that downloads it. */
  readonly sha256: string;
  /** Content identity of the drop it was built from (a retried job finds its own version by it). */
  readonly dropId: string;
  /**
   * The file's `version_info`, recorded at publish so machines without the file can list its
   * facts. Absent for versions stored by an older release (they are listed from the file).
   */
  readonly info?: VersionInfo;
}

/**
 * Where the version files of a deployment live when processes run on several machines: a shared
 * directory or S3-compatible object storage. Files are immutable once stored; a label is stored
 * at most once. Processes never read from the store directly: they download a version into
 * their local cache (shared/version-cache.ts) and verify its checksum first.
 */
export interface VersionFileStore {
  /** For logs: where the store is, without credentials. */
  readonly description: string;
  /** The fully stored versions, oldest build first. */
  list(): Promise<StoredVersion[]>;
  /**
   * Stores a finished local file under `label` with its facts. When it returns, the file and its
   * checksum are durably stored (and only then may the version be announced).
   * @throws AppError VERSION_INVALID when `label` is stored already.
   */
  put(label: string, localFile: string, facts: StoredFacts): Promise<void>;
  /** The facts recorded with a stored version, or null when it is not (fully) stored. */
  facts(label: string): Promise<StoredFacts | null>;
  /**
   * Writes the stored file to `destFile` (created; the caller renames it into place) and returns
   * its facts. The caller verifies the checksum.
   * @throws AppError VERSION_NOT_FOUND when the label is not stored.
   */
  download(label: string, destFile: string): Promise<StoredFacts>;
  /** Deletes a stored version (its checksum first, so a half-deleted version is never listed). */
  remove(label: string): Promise<void>;
  close(): Promise<void>;
}

import type { VersionLabel } from '../version-label.ts';
import type { VersionRecord } from '../version-record.ts';

/**
 * The parts a stored file may have: its DuckDB file (`<label>.duckdb`), and its look-up store
 * (`<label>.lookup`, an lmdb file built beside it at ingest; none for an older release's file).
 */
export type FilePart = 'data' | 'lookup';

/** One file held by a store, by the label of the version that built it. */
export interface StoredFile extends VersionLabel {
  readonly bytes: number;
}

/**
 * Where the immutable files of a deployment live, and the records that make some of them
 * versions: DATA_DIR itself on one machine, a shared directory or S3-compatible object storage
 * for many. A file is stored once under its label and never changed; it may outlive its version
 * (its record expired by retention) while a retained version still inherits from it. Processes
 * serve from a local copy (the folder itself on one machine, a verified download on many).
 */
export interface VersionFileStore {
  /** For logs: where the store is, without credentials. */
  readonly description: string;
  /** The versions: files with a record, oldest build first. */
  list(): Promise<StoredFile[]>;
  /** Every stored file, version or not, oldest build first. */
  files(): Promise<StoredFile[]>;
  /** The record of a version, or null when there is no such version (never published, or expired). */
  record(label: string): Promise<VersionRecord | null>;
  /**
   * Stores a finished local file under `label` as that label's `part` (default its DuckDB file).
   * When it returns the file is durably stored (not yet a version: that takes its record).
   * @throws AppError VERSION_INVALID when that part of that label is stored already.
   */
  putFile(label: string, localFile: string, part?: FilePart): Promise<void>;
  /** Makes a stored file a version: writes its record, durably. */
  putRecord(label: string, record: VersionRecord): Promise<void>;
  /**
   * Writes a stored file's `part` to `destFile` (created; the caller checks the sha256 it
   * expects and renames it into place), and gives the SHA-256 (hex) of the bytes written,
   * computed as they were written (a multi-GB file is not read a second time to be proved).
   * @throws AppError VERSION_NOT_FOUND when no file has that label (or that part).
   */
  download(label: string, destFile: string, part?: FilePart): Promise<string>;
  /** Expires a version: deletes its record (its file stays until nothing references it). */
  removeRecord(label: string): Promise<void>;
  /** Deletes a stored file, every part of it (its record first, if it still has one). */
  removeFile(label: string): Promise<void>;
  close(): Promise<void>;
}

/** A part's name ending: `<label><suffix>`. */
export const PART_SUFFIX: Readonly<Record<FilePart, string>> = { data: '.duckdb', lookup: '.lookup' };

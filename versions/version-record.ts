import type { FileRef, StoreDigest } from './version-manifest.ts';
import { parseVersionInfo, type VersionInfo } from './version-info.ts';
import { parseQualityProfile, type QualityProfile } from './quality-profile.ts';
import { parseHeld, type HeldState } from '../shared/held-state.ts';

/**
 * What a store records of a published version, beside its file: the version exists (can be
 * served, listed, rolled back to) exactly while its record does. Written after the file, removed
 * before it. The file's own manifest names the same references; the record repeats them so that
 * retention and listing never need to open (or download) a file.
 */
export interface VersionRecord {
  /** SHA-256 (hex) of the version's own file, checked before any process serves it. */
  readonly sha256: string;
  /** Size of the version's own file. */
  readonly bytes: number;
  /** The own file's look-up store (`<label>.lookup`), or null for a file built without one. */
  readonly lookup: StoreDigest | null;
  /** Content identity of the drop it was built from (a retried job finds its own version by it). */
  readonly dropId: string;
  /** The version it was built on (null: the first, or a whole copy from an older release). */
  readonly base: string | null;
  /** The earlier files it inherits partitions from, with the sha256 each must have. */
  readonly files: readonly FileRef[];
  /** Its `version_info`, so machines without the file can list its facts. */
  readonly info?: VersionInfo;
  /** Its quality profile (versions/quality-profile.ts); absent for a version of an older release. */
  readonly profile?: QualityProfile;
  /**
   * Present while the version is held: built and stored but never served because its profile
   * breached a publish guard; an operator publishes it (the field goes) or discards it.
   */
  readonly held?: HeldState;
  /**
   * True for a version of the bundled demo (`placedata demo`): a real drop's load refuses to
   * build on it (ingest/publish/demo-versions.ts).
   */
  readonly demo?: true;
}

/** A record's name beside its file in a directory or bucket: `<label>.duckdb.facts.json`. */
export const RECORD_SUFFIX = '.facts.json';

const HEX64 = /^[0-9a-f]{64}$/;

/** A store digest as recorded (null when absent or not of this shape). */
function storeDigestOf(value: unknown): StoreDigest | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (!Number.isSafeInteger(v['bytes']) || typeof v['sha256'] !== 'string' || !HEX64.test(v['sha256']) || typeof v['headSha256'] !== 'string' || !HEX64.test(v['headSha256'])) return null;
  return { bytes: v['bytes'] as number, sha256: v['sha256'], headSha256: v['headSha256'] };
}

function fileRefOf(value: unknown): FileRef | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v['label'] !== 'string' || typeof v['sha256'] !== 'string' || !HEX64.test(v['sha256']) || !Number.isSafeInteger(v['bytes'])) return null;
  return { label: v['label'], sha256: v['sha256'], bytes: v['bytes'] as number, lookup: storeDigestOf(v['lookup']) };
}

/**
 * A record as stored (JSON written by another process, maybe of an older release, which wrote no
 * `bytes`, `base` or `files`: a whole copy), or null when it is not of this shape.
 */
export function parseVersionRecord(value: unknown, bytesIfAbsent: number): VersionRecord | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v['sha256'] !== 'string' || !HEX64.test(v['sha256'])) return null;
  const files = Array.isArray(v['files']) ? v['files'].map(fileRefOf) : [];
  if (files.some((f) => f === null)) return null;
  const info = parseVersionInfo(v['info']);
  const profile = parseQualityProfile(v['profile']);
  const held = parseHeld(v['held']);
  return {
    sha256: v['sha256'], bytes: Number.isSafeInteger(v['bytes']) ? v['bytes'] as number : bytesIfAbsent, lookup: storeDigestOf(v['lookup']),
    dropId: typeof v['dropId'] === 'string' ? v['dropId'] : '', base: typeof v['base'] === 'string' ? v['base'] : null,
    files: files as FileRef[], ...(info ? { info } : {}),
    ...(profile ? { profile } : {}), ...(held ? { held } : {}), ...(v['demo'] === true ? { demo: true as const } : {}),
  };
}

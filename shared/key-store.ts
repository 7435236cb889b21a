import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from './atomic-write.ts';
import { AppError, ErrorCodes } from './errors.ts';

/**
 * API keys, stored only as SHA-256 digests in a JSON file (mode 0600). A raw key exists once:
 * in the output of `placedata keys create`. Keys are long random strings, so an unsalted fast
 * hash is enough: there is nothing to brute-force.
 */
/**
 * What a key may do. `reader`: the API's data and the status page. `operator`: also the
 * operator-only endpoints (rollback). Key files written before roles existed have no `role`;
 * their keys read as `reader`.
 */
export type KeyRole = 'reader' | 'operator';

export const KEY_ROLES: readonly KeyRole[] = ['reader', 'operator'];

export interface KeyRecord {
  readonly name: string;
  /** Absent in key files written before roles existed: read as `reader` (see `roleOf`). */
  readonly role?: KeyRole;
  /** `sha256:<hex>` */
  readonly digest: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
}

interface KeyFile {
  readonly keys: readonly KeyRecord[];
}

/** The role of a stored key; anything but `operator` (an old record without a role) is a reader. */
export function roleOf(record: KeyRecord): KeyRole {
  return record.role === 'operator' ? 'operator' : 'reader';
}

/** @throws AppError BAD_REQUEST when `value` is not a role. */
export function parseRole(value: string): KeyRole {
  if ((KEY_ROLES as readonly string[]).includes(value)) return value as KeyRole;
  throw new AppError(ErrorCodes.BAD_REQUEST, `role must be one of ${KEY_ROLES.join(', ')}; got ${JSON.stringify(value)}`);
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function digestKey(rawKey: string): string {
  return 'sha256:' + createHash('sha256').update(rawKey, 'utf8').digest('hex');
}

/** A stored digest with its bytes, decoded once: what a presented key's SHA-256 is compared with. */
export interface PreparedDigest {
  readonly digest: string;
  readonly bytes: Buffer;
}

/** Digests (`sha256:<hex>`) with their bytes, for findDigest. */
export function prepareDigests(digests: readonly string[]): PreparedDigest[] {
  return digests.map((digest) => ({ digest, bytes: Buffer.from(digest.slice('sha256:'.length), 'hex') }));
}

/**
 * The digest among `digests` that `rawKey` matches, or null. Every digest is compared, in
 * constant time, so the time taken says nothing about which key (if any) was close. The key is
 * hashed once and the digests were decoded beforehand: this runs for every request.
 */
export function findDigest(rawKey: string, digests: readonly PreparedDigest[]): string | null {
  const presented = hash('sha256', rawKey, 'buffer');
  let found: string | null = null;
  for (const { digest, bytes } of digests) {
    if (bytes.length === presented.length && timingSafeEqual(bytes, presented)) found = digest;
  }
  return found;
}

/** True when `rawKey` matches one of `digests` (see `findDigest`). */
export function matchesAnyDigest(rawKey: string, digests: readonly string[]): boolean {
  return findDigest(rawKey, prepareDigests(digests)) !== null;
}

export async function readKeyFile(file: string): Promise<readonly KeyRecord[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const parsed = JSON.parse(text) as KeyFile;
  if (!parsed || !Array.isArray(parsed.keys)) throw new AppError(ErrorCodes.CONFIG_INVALID, `key file ${file} is not a key store`);
  return parsed.keys;
}

/** Modification time of the key file in ms, or 0 when it does not exist (for cheap reloads). */
export async function keyFileStamp(file: string): Promise<number> {
  try {
    return (await stat(file)).mtimeMs;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}

async function writeKeyFile(file: string, keys: readonly KeyRecord[]): Promise<void> {
  // `keys create` may come before any load has made the data folder.
  await mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, JSON.stringify({ keys }, null, 2) + '\n', 0o600);
}

/**
 * Creates a key named `name` with `role` and returns the raw key, which is not stored anywhere.
 * @throws AppError KEY_EXISTS when an active key already has that name.
 */
export async function createKey(file: string, name: string, now: Date = new Date(), role: KeyRole = 'reader'): Promise<string> {
  if (!NAME_RE.test(name)) throw new AppError(ErrorCodes.BAD_REQUEST, 'key name must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit');
  const keys = await readKeyFile(file);
  if (keys.some((k) => k.name === name && k.revoked_at === null)) throw new AppError(ErrorCodes.KEY_EXISTS, `an active key named "${name}" exists`);
  const rawKey = 'pd_' + randomBytes(32).toString('base64url');
  const record: KeyRecord = { name, role: parseRole(role), digest: digestKey(rawKey), created_at: now.toISOString(), revoked_at: null };
  await writeKeyFile(file, [...keys, record]);
  return rawKey;
}

/** @throws AppError KEY_NOT_FOUND when no active key has that name. */
export async function revokeKey(file: string, name: string, now: Date = new Date()): Promise<void> {
  const keys = await readKeyFile(file);
  if (!keys.some((k) => k.name === name && k.revoked_at === null)) throw new AppError(ErrorCodes.KEY_NOT_FOUND, `no active key named "${name}"`);
  await writeKeyFile(file, keys.map((k) => (k.name === name && k.revoked_at === null ? { ...k, revoked_at: now.toISOString() } : k)));
}

export function activeDigests(keys: readonly KeyRecord[]): string[] {
  return keys.filter((k) => k.revoked_at === null).map((k) => k.digest);
}

export function activeKeys(keys: readonly KeyRecord[]): KeyRecord[] {
  return keys.filter((k) => k.revoked_at === null);
}

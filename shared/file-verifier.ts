import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from './atomic-write.ts';
import { AppError, ErrorCodes } from './errors.ts';
import { fileSha256 } from './file-sha256.ts';

/** What identifies a file's content on this machine without reading it: any write changes the times. */
interface Identity {
  readonly dev: string;
  readonly ino: string;
  readonly size: string;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
}

interface Proof extends Identity {
  readonly sha256: string;
}

async function identityOf(file: string): Promise<Identity> {
  const s = await stat(file, { bigint: true });
  return { dev: String(s.dev), ino: String(s.ino), size: String(s.size), mtimeNs: String(s.mtimeNs), ctimeNs: String(s.ctimeNs) };
}

function sameIdentity(a: Identity, b: Identity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/**
 * Proves that a local file is the one published: its sha256 is the one recorded. Hashing a file
 * of gigabytes takes seconds, so each proof is remembered on the machine (in `dir`, one small
 * JSON per label) with the file's identity: device, inode, size and modification and change
 * times in nanoseconds. Any write to the file (a flipped block, a truncation, a copy over it)
 * changes them, and the next check hashes the file again. Immutable files are never written
 * after they are published, so a proof normally holds for the file's whole life.
 */
export class FileVerifier {
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
  }

  #proofFile(label: string): string {
    return path.join(this.#dir, `${label}.json`);
  }

  /**
   * Resolves when `file` has the sha256 `expected`, from a remembered proof or by hashing it.
   * What the hash was is remembered either way.
   * @throws AppError VERSION_INVALID naming the file when it does not (damaged or replaced).
   */
  async verify(file: string, label: string, expected: string): Promise<void> {
    const identity = await identityOf(file);
    const proof = await this.#proof(label);
    const damaged = (actual: string) => new AppError(ErrorCodes.VERSION_INVALID, `${path.basename(file)} is damaged: its sha256 is ${actual.slice(0, 12)}..., published as ${expected.slice(0, 12)}...`);
    if (proof && sameIdentity(proof, identity)) {
      if (proof.sha256 === expected) return;
      // A damaged file is remembered too: a web process serving without it checks it again on
      // every poll (to serve it once it is repaired), and only a changed file is hashed again.
      throw damaged(proof.sha256);
    }
    const actual = await fileSha256(file);
    // The file must not have changed while it was hashed.
    if (!sameIdentity(identity, await identityOf(file))) throw new AppError(ErrorCodes.VERSION_INVALID, `${path.basename(file)} changed while it was verified`);
    await this.#remember(label, { ...identity, sha256: actual });
    if (actual !== expected) throw damaged(actual);
  }

  /** Records a proof for a file whose sha256 the caller has just computed (a build or a verified download). */
  async remember(file: string, label: string, sha256: string): Promise<void> {
    await this.#remember(label, { ...(await identityOf(file)), sha256 });
  }

  async #remember(label: string, proof: Proof): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    await writeFileAtomic(this.#proofFile(label), JSON.stringify(proof) + '\n');
  }

  async #proof(label: string): Promise<Proof | null> {
    try {
      return JSON.parse(await readFile(this.#proofFile(label), 'utf8')) as Proof;
    } catch {
      return null;
    }
  }
}

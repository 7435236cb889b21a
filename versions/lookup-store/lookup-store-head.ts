import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';

/**
 * Bytes at the start of a look-up store covered by its head digest: lmdb's two meta pages (at
 * any page size up to 32 KiB) and what follows them.
 */
export const HEAD_BYTES = 64 * 1024;

/**
 * SHA-256 (hex) of a store file's first HEAD_BYTES. Recorded at build and checked at every
 * open before lmdb reads the file: lmdb trusts its meta pages (page size, last page, roots), and
 * a damaged one made it read outside its mapping and kill the process as it opened.
 */
export function storeHeadSha256(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    let read = 0;
    for (let n = -1; n !== 0 && read < HEAD_BYTES; read += n) n = readSync(fd, head, read, HEAD_BYTES - read, read);
    return createHash('sha256').update(head.subarray(0, read)).digest('hex');
  } finally {
    closeSync(fd);
  }
}

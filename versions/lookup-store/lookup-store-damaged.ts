import path from 'node:path';
import { AppError, ErrorCodes } from '../../shared/errors.ts';

/**
 * A look-up store failed a check: a record that is not the key asked for, a document or header
 * whose checksum does not match, a miss that the neighbouring record does not prove, a meta
 * record or file size that does not hold, or a whole-file sha256 that differs from the one
 * recorded at build. The store answers nothing more of that look-up; the caller sends its file's
 * look-ups to DuckDB (the truth) and logs and counts it. Code LOOKUP_STORE_DAMAGED.
 */
export class LookupStoreDamaged extends AppError {
  /** The store file, as opened. */
  readonly file: string;
  /** What failed (the message without the store's name). */
  readonly reason: string;

  constructor(file: string, reason: string) {
    super(ErrorCodes.LOOKUP_STORE_DAMAGED, `look-up store ${path.basename(file)} is damaged: ${reason}`, { file });
    this.name = 'LookupStoreDamaged';
    this.file = file;
    this.reason = reason;
  }
}

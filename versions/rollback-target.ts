import { AppError, ErrorCodes } from '../shared/errors.ts';

export interface RollbackTarget {
  readonly label?: string;
  readonly previous?: boolean;
}

/**
 * The label a rollback moves to among the retained versions (oldest first): `label`, or with
 * `previous` the version built just before the current one. One rule for one machine
 * and many alike (versions/rollback.ts).
 * @throws AppError VERSION_NOT_FOUND
 */
export function rollbackTarget(labels: readonly string[], current: string | null, target: RollbackTarget): string {
  if (target.previous) {
    const index = current === null ? -1 : labels.indexOf(current);
    if (index <= 0) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, 'no version was built before the current one');
    return labels[index - 1]!;
  }
  if (target.label === undefined || !labels.includes(target.label)) {
    throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `no retained version ${JSON.stringify(target.label ?? '')}`);
  }
  return target.label;
}

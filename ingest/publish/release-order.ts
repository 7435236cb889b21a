import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { LoadReport } from '../drop/load-report.ts';
import { parseLabel } from '../../versions/version-label.ts';

/** Where a load's release month came from (as its report says). */
export type ReleaseMonthSource = LoadReport['release_month_source'];

const SOURCE: Readonly<Record<ReleaseMonthSource, string>> = { argument: 'given with --month', data: 'from the data', build_time: 'the build month' };

/**
 * Release order, a rule of the version history: a load may not make an older release current.
 * Its release month is compared with the release month of the version the pointer names (the
 * load's base, which it must still name when the load publishes), not with the queue's memory
 * of earlier jobs (BullMQ forgets finished jobs after 30 days, retention forgets versions) nor
 * with the newest retained version: after a rollback the version in service is the one the
 * operator chose, and loads go on from it. The same month is allowed (a corrected
 * re-delivery). With nothing served there is nothing to compare with.
 * @throws AppError OLDER_RELEASE naming both months and the version in service.
 */
export function assertReleaseOrder(month: string, source: ReleaseMonthSource, current: string | null): void {
  const served = current === null ? null : parseLabel(current);
  if (served === null || month >= served.releaseMonth) return;
  throw new AppError(ErrorCodes.OLDER_RELEASE,
    `release month ${month} (${SOURCE[source]}) is older than ${served.releaseMonth}, the release month of the version in service (${current}); ` +
    'not loaded: it would serve an older release. Load it with --allow-older to publish it on purpose',
    { release_month: month, current, current_month: served.releaseMonth });
}

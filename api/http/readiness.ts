import type { Request, Response } from 'express';
import type { ServedVersions } from '../versions/served-versions.ts';

/**
 * GET /readyz: whether this process serves a version, and what it cannot serve of it.
 *
 * - `ready` (200): a version is open, whole.
 * - `degraded` (200): a version is open, but inherited files of it are missing or damaged here;
 *   `unavailable` names each file, why (`missing`, `checksum_mismatch`) and what it holds (core,
 *   geometry, weeks, months): requests needing those are refused with DATA_UNAVAILABLE, every
 *   other request is answered. 200 because a replica that answers most requests must stay in
 *   its load balancer's rotation: every replica reading the same store has the same damage, and
 *   a 503 from each of them would turn the loss of some weeks into the loss of the service.
 *   Alert on `status` (or placedata_unavailable_files) instead.
 * - `not_ready` (503): no version is open yet (or none could be).
 *
 * `lookup_stores_left_out` (when any): stores whose look-ups read DuckDB instead (slower, the
 * same answers); `refused`: a version the pointer names that this process could not open.
 */
export function readiness(store: ServedVersions) {
  return (_req: Request, res: Response): void => {
    const current = store.current;
    const refused = store.refused;
    const why = refused ? { refused: { version_date: refused.label, reason: refused.reason, at: refused.at } } : {};
    if (!current) {
      res.status(503).json({ status: 'not_ready', version_date: null, ...why });
      return;
    }
    const unavailable = current.unavailable.map((u) => ({ file: `${u.label}.duckdb`, reason: u.reason, detail: u.detail, holds: u.holds }));
    res.json({
      status: unavailable.length ? 'degraded' : 'ready', version_date: current.label,
      ...(unavailable.length ? { unavailable } : {}),
      ...(current.storeErrors.length ? { lookup_stores_left_out: current.storeErrors } : {}),
      ...why,
    });
  };
}

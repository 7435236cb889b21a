import type { Request, Response } from 'express';
import { damagedFiles } from '../lookup/unavailable-data.ts';
import type { CacheState, ServedVersions } from '../versions/served-versions.ts';

/** The cache as /readyz and the status page show it (snake_case, as the API's other bodies). */
export function cacheBody(c: CacheState): Record<string, number | boolean> {
  return {
    bytes: c.bytes, max_bytes: c.maxBytes, files_open: c.filesOpen, files_absent: c.filesAbsent,
    fetches: c.fetches, evictions: c.evictions, waits: c.waits, timeouts: c.timeouts, prefetched: c.prefetched, prefetching: c.prefetching,
  };
}

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
 * `cache` (with a version store): the machine's cache against its budget, the version's files
 * open and absent here (absent ones are fetched when a request first needs them: not a fault),
 * and what this process fetched, waited for and evicted.
 */
export function readiness(store: ServedVersions) {
  return async (_req: Request, res: Response): Promise<void> => {
    const current = store.current;
    const refused = store.refused;
    const why = refused ? { refused: { version_date: refused.label, reason: refused.reason, at: refused.at } } : {};
    if (!current) {
      res.status(503).json({ status: 'not_ready', version_date: null, ...why });
      return;
    }
    const unavailable = damagedFiles(current.unavailable).map((u) => ({ file: `${u.label}.duckdb`, reason: u.reason, detail: u.detail, holds: u.holds }));
    const cache = await store.cacheState();
    res.json({
      status: unavailable.length ? 'degraded' : 'ready', version_date: current.label,
      ...(unavailable.length ? { unavailable } : {}),
      ...(current.storeErrors.length ? { lookup_stores_left_out: current.storeErrors } : {}),
      ...why,
      ...(cache ? { cache: cacheBody(cache) } : {}),
    });
  };
}

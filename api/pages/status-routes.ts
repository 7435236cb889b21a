import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, ErrorCodes, isAppError } from '../../shared/errors.ts';
import type { LoadJobReader, LoadJobView } from '../../shared/load-job-reader.ts';
import type { Logger } from '../../shared/logger.ts';
import { cacheBody } from '../http/readiness.ts';
import { parseLabel } from '../../versions/version-label.ts';
import { sendError } from '../http/error-body.ts';
import type { KeyRing } from '../http/key-ring.ts';
import { requireKey } from '../http/require-key.ts';
import { requireRole } from '../http/require-role.ts';
import type { DatasetVersion, VersionCatalog, VersionQualityFacts, VersionStorage } from '../versions/version-catalog.ts';
import type { RefusedVersion, ServedVersions } from '../versions/served-versions.ts';
import { requestState } from '../http/request-state.ts';

/** Moves the served version back to `label` (versions/rollback.ts, bound to the data folder). */
export type RollbackFn = (label: string) => Promise<{ from: string | null; to: string }>;

export interface StatusRoutesOptions {
  readonly keys: KeyRing;
  readonly catalog: VersionCatalog;
  readonly store: ServedVersions;
  readonly log: Logger;
  readonly rollback: RollbackFn;
  /** Reads the load queue; null when the web process has no queue to show. */
  readonly jobs: LoadJobReader | null;
}

/** How many jobs the status shows: the newest, whatever their state. */
export const STATUS_JOBS = 20;

export interface StatusBody {
  readonly caller: { readonly name: string; readonly role: string };
  readonly current: string | null;
  /** The version the pointer names that this web process refused to serve (a damaged file), and why. */
  readonly refused: RefusedVersion | null;
  readonly versions: readonly (DatasetVersion & { readonly current: boolean; readonly storage: VersionStorage | null })[];
  /**
   * Every stored version, held ones included (they are not in `versions`: never served), oldest
   * first: its quality profile, and for a held one why it is held.
   */
  readonly quality: readonly VersionQualityFacts[];
  readonly jobs: { readonly queue: string | null; readonly available: boolean; readonly error: string | null; readonly items: readonly LoadJobView[] };
  /** With a version store: the machine's cache (as /readyz shows it); null on one machine. */
  readonly cache: Record<string, number | boolean> | null;
}

/**
 * The status page's data: `GET /v1/status` for any key (versions, jobs, the caller's role) and
 * `POST /v1/admin/rollback` for operator keys. The pages themselves (web-pages.ts) hold no data.
 */
export function statusRoutes(options: StatusRoutesOptions): express.Router {
  const router = express.Router();
  let rollingBack: Promise<unknown> = Promise.resolve();

  // What the pages ask first: is this key accepted, and may it roll back? Reads nothing else.
  router.get('/v1/whoami', requireKey(options.keys), (_req: Request, res: Response) => {
    const key = requestState(res).key!;
    res.set('Cache-Control', 'no-store').json({ name: key.name, role: key.role });
  });

  router.get('/v1/status', requireKey(options.keys), (_req: Request, res: Response, next: NextFunction) => {
    (async () => {
      const key = requestState(res).key!;
      const current = options.store.current?.label ?? null;
      let listed;
      let storage;
      let quality;
      try {
        listed = await options.catalog.list();
        storage = await options.catalog.storage();
        quality = [...(await options.catalog.quality()).values()];
      } catch (err) {
        if (isAppError(err) && err.code === ErrorCodes.UNAVAILABLE) return sendError(res, 503, err.code, err.message, { 'Retry-After': '5' });
        throw err;
      }
      const versions = listed.map((v) => ({ ...v, current: v.label === current, storage: storage.get(v.label) ?? null }));
      let jobs: StatusBody['jobs'] = { queue: null, available: false, error: 'this web process reads no load queue', items: [] };
      if (options.jobs) {
        try {
          jobs = { queue: options.jobs.queueName, available: true, error: null, items: await options.jobs.recent(STATUS_JOBS) };
        } catch (err) {
          options.log.warn({ err: (err as Error).message }, 'status: cannot read the load queue');
          jobs = { queue: options.jobs.queueName, available: false, error: 'the load queue cannot be read (Redis does not answer)', items: [] };
        }
      }
      const cacheState = await options.store.cacheState();
      const body: StatusBody = { caller: { name: key.name, role: key.role }, current, refused: options.store.refused, versions, quality, jobs, cache: cacheState ? cacheBody(cacheState) : null };
      res.set('Cache-Control', 'no-store').json(body);
    })().catch(next);
  });

  router.post('/v1/admin/rollback', requireKey(options.keys), requireRole('operator'), express.json({ limit: 4096 }),
    (req: Request, res: Response, next: NextFunction) => {
      const label = (req.body as { label?: unknown } | undefined)?.label;
      if (typeof label !== 'string' || !parseLabel(label)) {
        return sendError(res, 400, ErrorCodes.BAD_REQUEST, 'Send {"label": "<epoch_seconds>__<year>_<month>"}: the retained version to serve');
      }
      const key = requestState(res).key!;
      const refuse = async (): Promise<void> => {
        // A retained file of an older layout would pass the check but the API could not open it.
        const known = (await options.catalog.list()).find((v) => v.label === label);
        if (known?.servable === false) throw new AppError(ErrorCodes.VERSION_INVALID, 'not servable');
      };
      // One rollback at a time in this process: two operators clicking at once get one after the other.
      const run = rollingBack.then(refuse).then(() => options.rollback(label));
      rollingBack = run.catch(() => undefined);
      run.then(async ({ from, to }) => {
        // Audit: who (the key's name, never the key), from what, to what.
        options.log.info({ audit: 'rollback', key_name: key.name, from, to }, 'rollback');
        // The store follows the pointer by itself; refreshing now makes the answer say what is served.
        await options.store.refresh();
        res.json({ from, to, served: options.store.current?.label ?? null });
      }, (err: unknown) => {
        if (!isAppError(err)) return next(err);
        options.log.warn({ audit: 'rollback', key_name: key.name, to: label, refused: err.code }, 'rollback refused');
        if (err.code === ErrorCodes.VERSION_NOT_FOUND) return sendError(res, 404, err.code, `Dataset version "${label}" is not retained (see dataset_versions)`);
        if (err.code === ErrorCodes.VERSION_HELD) return sendError(res, 409, err.code, `Dataset version "${label}" is held by the publish guards: publish it instead (POST /v1/admin/publish)`);
        if (err.code === ErrorCodes.VERSION_INVALID) return sendError(res, 409, err.code, `Dataset version "${label}" cannot be served (see dataset_versions: servable) or failed its check; the served version is unchanged`);
        next(err);
      });
    });
  return router;
}

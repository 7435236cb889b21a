import express, { type NextFunction, type Request, type Response } from 'express';
import { ErrorCodes, isAppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import type { RetentionPlan } from '../../versions/retention/retention.ts';
import { parseLabel } from '../../versions/version-label.ts';
import { sendError } from '../http/error-body.ts';
import type { KeyRing } from '../http/key-ring.ts';
import { requestState } from '../http/request-state.ts';
import { requireKey } from '../http/require-key.ts';
import { requireRole } from '../http/require-role.ts';
import type { ServedVersions } from '../versions/served-versions.ts';

/** What an operator may do with a version the publish guards held (versions/publish-held.ts, bound to the site). */
export interface HoldActions {
  readonly publish: (label: string) => Promise<{ from: string | null; to: string; retention: RetentionPlan }>;
  readonly discard: (label: string) => Promise<{ discarded: string; retention: RetentionPlan }>;
}

export interface HoldRoutesOptions {
  readonly keys: KeyRing;
  readonly store: ServedVersions;
  readonly log: Logger;
  readonly holds: HoldActions;
}

/**
 * `POST /v1/admin/publish` and `POST /v1/admin/discard` (operator keys): the status page's
 * buttons for a held version, the same as `placedata publish` and `placedata discard`. Audited
 * by key name like rollbacks; one at a time per process.
 */
export function holdRoutes(options: HoldRoutesOptions): express.Router {
  const router = express.Router();
  let acting: Promise<unknown> = Promise.resolve();
  const route = (action: 'publish' | 'discard') => (req: Request, res: Response, next: NextFunction) => {
    const label = (req.body as { label?: unknown } | undefined)?.label;
    if (typeof label !== 'string' || !parseLabel(label)) {
      return sendError(res, 400, ErrorCodes.BAD_REQUEST, 'Send {"label": "<epoch_seconds>__<year>_<month>"}: the held version');
    }
    const key = requestState(res).key!;
    const run: Promise<{ retention: RetentionPlan }> = acting.then((): Promise<{ retention: RetentionPlan }> => options.holds[action](label));
    acting = run.catch(() => undefined);
    run.then(async ({ retention, ...result }) => {
      options.log.info({ audit: action, key_name: key.name, label, expired: retention.expire, deleted_files: retention.deleteFiles },
        action === 'publish' ? 'held version published' : 'held version discarded');
      if (action === 'publish') await options.store.refresh();
      res.json({ ...result, served: options.store.current?.label ?? null });
    }, (err: unknown) => {
      if (!isAppError(err)) return next(err);
      options.log.warn({ audit: action, key_name: key.name, label, refused: err.code }, `${action} refused`);
      if (err.code === ErrorCodes.VERSION_NOT_FOUND) return sendError(res, 404, err.code, `Dataset version "${label}" is not stored`);
      if (err.code === ErrorCodes.VERSION_NOT_HELD) return sendError(res, 409, err.code, `Dataset version "${label}" is not held`);
      if (err.code === ErrorCodes.VERSION_INVALID) return sendError(res, 409, err.code, `Dataset version "${label}" failed its check; the served version is unchanged`);
      next(err);
    });
  };
  for (const action of ['publish', 'discard'] as const) {
    router.post(`/v1/admin/${action}`, requireKey(options.keys), requireRole('operator'), express.json({ limit: 4096 }), route(action));
  }
  return router;
}

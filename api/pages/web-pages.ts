import express, { type Request, type Response } from 'express';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { ErrorCodes } from '../../shared/errors.ts';
import { sendError } from '../http/error-body.ts';

/** Where `npm run build:web` (scripts/build-web.mjs) writes the pages and their bundles. */
export const WEB_DIST = fileURLToPath(new URL('../../web-dist/', import.meta.url));

/** The pages hold no data: they ask for a key and call the API with it, so they are served without one. */
const PAGES: Readonly<Record<string, string>> = { '/': 'index.html', '/status': 'status.html' };

// Everything the pages load comes from this server (the machines are offline: no CDN). GraphiQL
// and uPlot set inline styles; nothing runs inline script.
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  // The bundles keep their names from build to build: revalidate rather than cache stale ones.
  'Cache-Control': 'no-cache',
};

/** The explorer (`GET /`), the status page (`GET /status`) and their bundles (`/assets/...`). */
export function webPages(dist: string = WEB_DIST): express.Router {
  const router = express.Router();
  const built = () => existsSync(path.join(dist, 'index.html'));
  for (const [route, file] of Object.entries(PAGES)) {
    router.get(route, (_req: Request, res: Response) => {
      if (!built()) return sendError(res, 503, ErrorCodes.NOT_READY, 'The web pages are not built: run npm run build:web');
      res.set(PAGE_HEADERS).sendFile(file, { root: dist });
    });
  }
  router.use('/assets', express.static(path.join(dist, 'assets'), { index: false, redirect: false, setHeaders: (res) => res.set(PAGE_HEADERS) }));
  return router;
}

import { createLogger } from '../../shared/logger.ts';
import { localSite } from '../../versions/open-version-site.ts';
import type { VersionSite } from '../../versions/version-site.ts';
import { loadDrop as load, type LoadOptions, type LoadResult } from '../../ingest/publish/load-drop.ts';

export type { LoadResult };

/** The real load pipeline on one machine's site (DATA_DIR `dataDir`), as `placedata load` runs it. */
export function loadDrop(opts: LoadOptions & { readonly dataDir: string }): Promise<LoadResult> {
  return load(opts, localSite(opts.dataDir, createLogger('silent', 'test')));
}

/** One machine's site on `dataDir` (DATA_DIR), for the real rollback and listing. */
export function siteOf(dataDir: string): VersionSite {
  return localSite(dataDir, createLogger('silent', 'test'));
}

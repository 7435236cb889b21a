import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { VersionRecord } from '../../versions/version-record.ts';
import type { VersionSite } from '../../versions/version-site.ts';

/**
 * The drop id of the demo that releases before DEMO_DIR loaded into DATA_DIR (the demo drop of
 * ingest/cli/demo-drop.ts with its defaults, its patterns gzipped at level 9, release month
 * 2022-03): its versions carry no `demo` mark, but are demo data all the same.
 */
export const LEGACY_DEMO_DROP_ID = 'drop-a183ee96a2a61e35ad34fb0588563d16e6936c04';

/** Whether a version is the bundled demo's. */
export function isDemoRecord(record: VersionRecord): boolean {
  return record.demo === true || record.dropId === LEGACY_DEMO_DROP_ID;
}

/**
 * What a load may build on, given the version in service (`current`): a real drop never builds on
 * the demo (it would inherit the demo's weeks, and the publish guards and release order would
 * compare it with synthetic data), nor the demo on real data.
 * @returns whether the load replaces the demo (it then builds on nothing and the demo goes when it publishes).
 * @throws AppError DEMO_DATA when it may not, saying how to go on.
 */
export async function demoBase(site: VersionSite, current: string | null, load: { readonly demo: boolean; readonly replaceDemo: boolean }): Promise<boolean> {
  if (current === null) return false;
  const record = await site.store.record(current);
  const demo = record !== null && isDemoRecord(record);
  if (load.demo && !demo) {
    throw new AppError(ErrorCodes.DEMO_DATA, `${site.store.description} serves ${current}, not a demo version: the demo is not loaded over real data (it lives in DEMO_DIR, default ./demo-data)`, { current });
  }
  if (load.demo || !demo) return false;
  if (load.replaceDemo) return true;
  throw new AppError(ErrorCodes.DEMO_DATA,
    `${site.store.description} serves the bundled demo (${current}), not real data: a drop loaded here would inherit the demo's weeks and be compared with it. ` +
    'Load it into another DATA_DIR (the demo now lives in DEMO_DIR, default ./demo-data), or pass --replace-demo to delete the demo versions here once this drop is published',
    { current });
}

/**
 * Deletes every demo version of the site and the files only they hold; call it holding the publish
 * lock, after the pointer moved off the demo. Records go first (retention's order), and a file a
 * real version inherits from stays.
 * @returns the demo versions deleted.
 */
export async function removeDemoVersions(site: VersionSite): Promise<string[]> {
  const demo: string[] = [];
  const needed = new Set<string>();
  for (const v of await site.store.list()) {
    const record = await site.store.record(v.label);
    if (!record) continue;
    if (isDemoRecord(record)) demo.push(v.label);
    else for (const f of [v.label, ...record.files.map((r) => r.label)]) needed.add(f);
  }
  const demoFiles = new Set(demo);
  for (const label of demo) for (const f of (await site.store.record(label))?.files ?? []) demoFiles.add(f.label);
  for (const label of demo) await site.store.removeRecord(label);
  for (const label of demoFiles) if (!needed.has(label)) await site.store.removeFile(label);
  return demo;
}

import { createLogger } from '../../shared/logger.ts';
import { localSite } from '../../versions/open-version-site.ts';
import { AppError, ErrorCodes } from '../../shared/errors.ts';
import { quoteLiteral } from '../../shared/sql.ts';
import { ServedVersion, type ServeOptions } from '../../api/lookup/served-version.ts';
import { VersionFiles } from '../../api/lookup/version-file-set.ts';

/** Opens a retained version of one machine's DATA_DIR as the web process does: its files proved, attached, routed. */
export async function openVersion(dataDir: string, label: string, options: ServeOptions): Promise<ServedVersion> {
  const set = await new VersionFiles(localSite(dataDir, createLogger('silent', 'test'))).get(label);
  if (!set) throw new AppError(ErrorCodes.VERSION_NOT_FOUND, `no version ${label} in ${dataDir}`);
  return ServedVersion.open(set, options);
}

/**
 * Runs SQL on a version as the web process serves it (every file of its chain attached), built
 * from the opened version (`tableOf` names the file holding a product or period); closes it after.
 */
export async function queryVersion(dataDir: string, label: string, sql: (v: ServedVersion) => string): Promise<Record<string, unknown>[]> {
  const version = await openVersion(dataDir, label, { memoryLimit: '256MB', threads: 1, connections: 1, coalesceKeys: 1000 });
  try {
    return await version.query(async (conn) => (await conn.runAndReadAll(sql(version))).getRowObjectsJS().map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? String(v) : v]))));
  } finally {
    version.retire();
  }
}

/** Every weekly row of a version (each week read from the file holding it), as SQL. */
export function weeklyRowsSql(v: ServedVersion, columns: string): string {
  return v.weeks.map((w) => `SELECT ${columns} FROM ${v.tableOf('weekly', w)} WHERE week_start = DATE ${quoteLiteral(w)}`).join(' UNION ALL ') || `SELECT ${columns} FROM ${v.tableOf('weekly')} WHERE false`;
}

import { AppError, ErrorCodes } from '../../shared/errors.ts';
import type { PartitionRoutes } from '../../versions/version-manifest.ts';
import type { UnavailableFile } from './version-file-set.ts';

/** What a request reads of a version, by partition. */
export interface NeededData {
  readonly core: boolean;
  readonly geometry: boolean;
  /** Mondays, YYYY-MM-DD. */
  readonly weeks: readonly string[];
  /** 1sts, YYYY-MM-DD. */
  readonly months: readonly string[];
}

/** What reading one product's rows needs: core or geometry, or one week or month (`period`, required for those). */
export function neededFor(product: 'core' | 'weekly' | 'monthly' | 'geometry', period: string | null): NeededData {
  return {
    core: product === 'core', geometry: product === 'geometry',
    weeks: product === 'weekly' ? [period ?? ''] : [], months: product === 'monthly' ? [period ?? ''] : [],
  };
}

/** Retry-After (seconds) of a DATA_FETCHING answer: a file is usually here within a few seconds of being asked for. */
export const FETCH_RETRY_SECONDS = 5;

/** An unavailable file of a served version and what it holds for that version (what requests cannot have). */
export interface UnavailableData extends UnavailableFile {
  readonly holds: NeededData;
}

/** The absent files (not fetched to this machine yet) holding partitions a request needs: fetched before it is answered. */
export function absentFor(needed: NeededData, unavailable: readonly UnavailableData[]): string[] {
  return unavailable.filter((u) => u.reason === 'absent' && ((needed.core && u.holds.core) || (needed.geometry && u.holds.geometry)
    || u.holds.weeks.some((w) => needed.weeks.includes(w)) || u.holds.months.some((m) => needed.months.includes(m)))).map((u) => u.label);
}

/** Files missing or damaged here (not those merely absent: a request fetches those). */
export function damagedFiles<T extends UnavailableFile>(unavailable: readonly T[]): T[] {
  return unavailable.filter((u) => u.reason !== 'absent');
}

/** What each unavailable file holds for the version whose partitions are routed so. */
export function unavailableData(files: readonly UnavailableFile[], routes: PartitionRoutes): UnavailableData[] {
  const of = (periods: ReadonlyMap<string, string>, label: string) => [...periods].filter(([, file]) => file === label).map(([period]) => period);
  return files.map((f) => ({
    ...f,
    holds: { core: routes.core === f.label, geometry: routes.geometry === f.label, weeks: of(routes.weeks, f.label), months: of(routes.months, f.label) },
  }));
}

function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * The refusal of a request that needs partitions held by unavailable files of version `label`,
 * or null when it needs none: DATA_UNAVAILABLE, naming in plain words what it cannot have (core,
 * geometry, the weeks, the months) and why, never a file name or path (those are for the operator:
 * /readyz and the log).
 */
export function unavailableError(label: string, needed: NeededData, all: readonly UnavailableData[]): AppError | null {
  const unavailable = all.filter((u) => u.reason !== 'absent');
  if (unavailable.length === 0) return null;
  const parts: string[] = [];
  const files = new Set<UnavailableData>();
  for (const product of ['core', 'geometry'] as const) {
    const file = needed[product] ? unavailable.find((u) => u.holds[product]) : undefined;
    if (file) {
      parts.push(product);
      files.add(file);
    }
  }
  const weeks: string[] = [];
  const months: string[] = [];
  for (const u of unavailable) {
    const w = u.holds.weeks.filter((x) => needed.weeks.includes(x));
    const m = u.holds.months.filter((x) => needed.months.includes(x));
    if (w.length || m.length) files.add(u);
    weeks.push(...w);
    months.push(...m);
  }
  weeks.sort();
  months.sort();
  if (weeks.length) parts.push(`weekly patterns for the week${weeks.length > 1 ? 's' : ''} of ${listed(weeks)}`);
  if (months.length) parts.push(`monthly patterns for the month${months.length > 1 ? 's' : ''} of ${listed(months)}`);
  if (parts.length === 0) return null;
  const plural = parts.length > 1 || weeks.length > 0 || months.length > 0;
  const reasons = new Set([...files].map((f) => (f.reason === 'missing' ? 'missing' : 'damaged')));
  const why = reasons.size > 1 ? 'missing or damaged' : [...reasons][0]!;
  const holding = files.size > 1 ? `the files holding ${plural ? 'them' : 'it'} are` : `the file holding ${plural ? 'them' : 'it'} is`;
  return new AppError(ErrorCodes.DATA_UNAVAILABLE,
    `Dataset version ${label} cannot answer this on this server: ${listed(parts)} ${plural ? 'are' : 'is'} unavailable (${holding} ${why}); the rest of the version is served`);
}

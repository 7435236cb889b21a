import type { ServedVersion } from '../lookup/served-version.ts';
import type { FilterSql } from './search-filter.ts';

/**
 * Where a page starts: after a Placekey (keyset, /v2's cursors; `inclusive`: at it) or after
 * skipping some matches (/v1's offsets).
 */
export type PageStart = { readonly after: string | null; readonly inclusive?: boolean } | { readonly offset: number };

/** A page of matching Placekeys, and whether more match after it. */
export interface PlacesPage {
  readonly placekeys: readonly string[];
  readonly more: boolean;
}

/**
 * The Placekeys of the version's POIs matching a filter, in placekey order, `first` of them from
 * `start`. The data read of every search page (its own function, so where it reads from can
 * change in one place). `places_core` is stored in placekey order, so a keyset page costs the
 * same at any depth; an offset page reads what it skips. One more row than `first` is asked
 * for, to know whether another page follows. `first` and `offset` are integers checked by the
 * caller; the filter's values are bound parameters.
 */
export async function placesPage(version: ServedVersion, filter: FilterSql, first: number, start: PageStart): Promise<PlacesPage> {
  if (!Number.isSafeInteger(first) || first < 0 || ('offset' in start && !Number.isSafeInteger(start.offset))) throw new Error('page bounds must be integers');
  const keyset = 'after' in start && start.after !== null;
  const rows = await version.query(async (conn) => {
    const params = { ...filter.params, ...(keyset ? { after: (start as { after: string }).after } : {}) };
    const offset = 'offset' in start && start.offset > 0 ? ` OFFSET ${start.offset}` : '';
    const from = !keyset ? '' : 'inclusive' in start && start.inclusive ? ' AND placekey >= $after' : ' AND placekey > $after';
    const result = await conn.runAndReadAll(`SELECT placekey FROM ${version.tableOf('core')} WHERE ${filter.where}${from} ORDER BY placekey LIMIT ${first + 1}${offset}`, params);
    return (result.getColumnsJS()[0] ?? []).map(String); // no columns at all when no row matched
  });
  return { placekeys: rows.slice(0, first), more: rows.length > first };
}

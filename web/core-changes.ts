import { graphql } from './api-client.ts';

/** The spec's core fields the place view compares. */
const FIELDS = ['location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'naics_code', 'top_category', 'sub_category'] as const;

type Core = Partial<Record<(typeof FIELDS)[number], string | number | null>>;

/** How a POI's core fields differ from the older version of the pair to the newer: fields that changed, or that it is new or gone. */
export type CoreChange =
  | { readonly kind: 'changed'; readonly fields: readonly { readonly field: string; readonly before: unknown; readonly after: unknown }[] }
  | { readonly kind: 'same' | 'added' | 'removed' | 'absent' };

export interface ListedVersion { readonly label: string; readonly release_month: string }

/**
 * Where the compared version stands from the shown one, in release order: the release after it
 * (the one that replaced it, or will), the release before it (the one it replaced), or, when no
 * other release month is retained, another build of the same release.
 */
export type Relation = 'next-release' | 'previous-release' | 'later-build' | 'earlier-build';

export interface CoreChanges {
  /** The version the place view shows (the one that answered it). */
  readonly shown: string;
  readonly other: ListedVersion;
  readonly relation: Relation;
  /** The pair in release order: `from` the older, `to` the newer (one of them is `shown`). */
  readonly from: string;
  readonly to: string;
  readonly byPlacekey: ReadonlyMap<string, CoreChange>;
}

/**
 * The version the shown one is compared with (`versions` oldest build first, as
 * `dataset_versions` lists them): the newest build of the nearest later release month, else of
 * the nearest earlier one, else the next build of the same month, else the build before it. By
 * release month, not by build: a version of an older month built later (`--allow-older`, then a
 * rollback) is not what replaced the shown one.
 */
export function comparedVersion(versions: readonly ListedVersion[], shown: string): { other: ListedVersion; relation: Relation } | null {
  const at = versions.findIndex((v) => v.label === shown);
  if (at < 0) return null;
  const month = versions[at]!.release_month;
  const newestOf = (m: string) => versions.findLast((v) => v.release_month === m)!;
  const months = [...new Set(versions.map((v) => v.release_month))].sort();
  const later = months.find((m) => m > month);
  if (later) return { other: newestOf(later), relation: 'next-release' };
  const earlier = months.findLast((m) => m < month);
  if (earlier) return { other: newestOf(earlier), relation: 'previous-release' };
  const next = versions.slice(at + 1).find((v) => v.release_month === month);
  if (next) return { other: next, relation: 'later-build' };
  const previous = versions.slice(0, at).findLast((v) => v.release_month === month);
  return previous ? { other: previous, relation: 'earlier-build' } : null;
}

const QUERY = `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_core { ${FIELDS.join(' ')} } } }`;

async function coresIn(key: string, label: string, placekeys: readonly string[]): Promise<Map<string, Core | null>> {
  const res = await graphql<{ batch_lookup: { placekey: string; placedata_core: Core | null }[] }>(key, QUERY, { placekeys }, { 'x-placedata-version': label });
  if (res.errors?.length || !res.data) throw new Error(res.errors?.map((e) => e.message).join('; ') ?? 'no data');
  return new Map(res.data.batch_lookup.map((e) => [e.placekey, e.placedata_core]));
}

/**
 * Each Placekey's core fields in the shown version and in the version it is compared with
 * (`comparedVersion`), each read pinned to its version: what changed from the older of the two
 * in release order to the newer, or null when no other version is retained.
 */
export async function coreChanges(key: string, shown: string, placekeys: readonly string[]): Promise<CoreChanges | null> {
  const listed = await graphql<{ dataset_versions: ListedVersion[] }>(key, '{ dataset_versions { label release_month } }');
  const pair = comparedVersion(listed.data?.dataset_versions ?? [], shown);
  if (!pair || placekeys.length === 0) return null;
  const forward = pair.relation === 'next-release' || pair.relation === 'later-build';
  const [from, to] = forward ? [shown, pair.other.label] : [pair.other.label, shown];
  const [before, after] = [await coresIn(key, from, placekeys), await coresIn(key, to, placekeys)];
  const byPlacekey = new Map<string, CoreChange>();
  for (const placekey of placekeys) {
    const a = before.get(placekey) ?? null;
    const b = after.get(placekey) ?? null;
    if (!a && !b) byPlacekey.set(placekey, { kind: 'absent' });
    else if (!a) byPlacekey.set(placekey, { kind: 'added' });
    else if (!b) byPlacekey.set(placekey, { kind: 'removed' });
    else {
      const fields = FIELDS.filter((f) => (a[f] ?? null) !== (b[f] ?? null)).map((field) => ({ field, before: a[field] ?? null, after: b[field] ?? null }));
      byPlacekey.set(placekey, fields.length ? { kind: 'changed', fields } : { kind: 'same' });
    }
  }
  return { shown, other: pair.other, relation: pair.relation, from, to, byPlacekey };
}

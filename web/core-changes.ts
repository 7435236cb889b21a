import { graphql } from './api-client.ts';

/** The spec's core fields the place view compares. */
const FIELDS = ['location_name', 'street_address', 'city', 'region', 'postal_code', 'iso_country_code', 'naics_code', 'top_category', 'sub_category'] as const;

type Core = Partial<Record<(typeof FIELDS)[number], string | number | null>>;

/** How a POI's core fields differ between the two newest versions: fields that changed, or that it is new or gone. */
export type CoreChange =
  | { readonly kind: 'changed'; readonly fields: readonly { readonly field: string; readonly before: unknown; readonly after: unknown }[] }
  | { readonly kind: 'same' | 'added' | 'removed' | 'absent' };

export interface CoreChanges {
  readonly from: string;
  readonly to: string;
  readonly byPlacekey: ReadonlyMap<string, CoreChange>;
}

const QUERY = `query($placekeys: [Placekey!]) { batch_lookup(placekeys: $placekeys) { placekey placedata_core { ${FIELDS.join(' ')} } } }`;

async function coresIn(key: string, label: string, placekeys: readonly string[]): Promise<Map<string, Core | null>> {
  const res = await graphql<{ batch_lookup: { placekey: string; placedata_core: Core | null }[] }>(key, QUERY, { placekeys }, { 'x-placedata-version': label });
  if (res.errors?.length || !res.data) throw new Error(res.errors?.map((e) => e.message).join('; ') ?? 'no data');
  return new Map(res.data.batch_lookup.map((e) => [e.placekey, e.placedata_core]));
}

/**
 * Each Placekey's core fields in the two newest retained versions (by build, from
 * `dataset_versions`), each read pinned to its version: what changed, or null when fewer than two
 * versions are retained.
 */
export async function coreChanges(key: string, placekeys: readonly string[]): Promise<CoreChanges | null> {
  const listed = await graphql<{ dataset_versions: { label: string }[] }>(key, '{ dataset_versions { label } }');
  const labels = listed.data?.dataset_versions.map((v) => v.label) ?? [];
  if (labels.length < 2 || placekeys.length === 0) return null;
  const [from, to] = labels.slice(-2) as [string, string];
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
  return { from, to, byPlacekey };
}

import { TEST_KEY } from './test-config.ts';

export interface GqlResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/** POSTs a GraphQL request the way the spec's clients do (to /v1/graphql unless told another path). */
export async function postGraphql(baseUrl: string, body: unknown, headers: Record<string, string> = {}, path = '/v1/graphql'): Promise<GqlResponse> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', apikey: TEST_KEY, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the raw text: some refusals are not JSON
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export const CORE_FIELDS = 'location_name street_address city region postal_code iso_country_code naics_code top_category sub_category';
export const WEEKLY_FIELDS = 'location_name street_address city region date_range_start date_range_end raw_visit_counts raw_visitor_counts visits_by_day';

/** The spec's core-only query shape. */
export const CORE_QUERY = `query($placekeys: [Placekey!]) {
  batch_lookup(placekeys: $placekeys) { placekey placedata_core { ${CORE_FIELDS} } }
}`;

/** The spec's weekly-only query shape, for a given date. */
export function weeklyQuery(date: string): string {
  return `query($placekeys: [Placekey!]) {
  batch_lookup(placekeys: $placekeys) { placekey placedata_weekly_patterns(date: "${date}") { ${WEEKLY_FIELDS} } }
}`;
}

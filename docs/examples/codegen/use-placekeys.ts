import type { PlacesQuery, PlacesQueryVariables } from './placedata.generated.ts';

/** What a client writes with the generated types: variables checked, answers typed. */
export const variables: PlacesQueryVariables = { placekeys: ['7cm-b8j@62j-sjp-h3q'], week: '2022-03-21' };

export function visitsFromHome(answer: PlacesQuery, cbg: string): number {
  let visits = 0;
  for (const entry of answer.batch_lookup ?? []) {
    const placekey: string = entry.placekey;
    const naics: number | null | undefined = entry.placedata_core?.naics_code;
    const home = entry.safegraph_weekly_patterns?.visitor_home_cbgs;
    const count = home?.[cbg];
    if (placekey && naics !== 0 && typeof count === 'number') visits += count;
  }
  return visits;
}

/**
 * The explorer's ready-to-run examples: the spec's two query shapes (core, and weekly patterns
 * for a week) and this service's other operations, filled with Placekeys and a week that the
 * served version holds (found when the page opens), so each runs as is on any licence.
 */
export interface Example {
  readonly title: string;
  readonly query: string;
  readonly variables: Record<string, unknown>;
}

export interface Sample {
  readonly placekeys: readonly string[];
  /** The newest week of the served version (a Monday), or null when it has no weekly data. */
  readonly lastWeek: string | null;
  readonly firstWeek: string | null;
  readonly region: string | null;
}

// Anonymous operations, as in the spec: GraphiQL keeps the operation name it last ran when the
// picker replaces the document, and a named operation would then not be found in the new one.
export function examples(s: Sample): Example[] {
  const week = s.lastWeek ?? '2022-03-21';
  return [
    {
      title: 'Core attributes (spec: batch_lookup with placedata_core)',
      query: `query ($placekeys: [Placekey!]) {
  batch_lookup(placekeys: $placekeys) {
    placekey
    placedata_core {
      location_name
      street_address
      city
      region
      postal_code
      iso_country_code
      naics_code
      top_category
      sub_category
    }
  }
}
`,
      variables: { placekeys: s.placekeys },
    },
    {
      title: 'Weekly patterns for one week (spec: placedata_weekly_patterns(date:))',
      query: `query ($placekeys: [Placekey!]) {
  batch_lookup(placekeys: $placekeys) {
    placekey
    placedata_weekly_patterns(date: "${week}") {
      location_name
      date_range_start
      date_range_end
      raw_visit_counts
      raw_visitor_counts
      visits_by_day
    }
  }
}
`,
      variables: { placekeys: s.placekeys },
    },
    {
      title: 'Weekly history over a date range',
      query: `query ($placekeys: [Placekey!], $start: String!, $end: String!) {
  batch_lookup(placekeys: $placekeys) {
    placekey
    placedata_weekly_patterns_range(start_date: $start, end_date: $end) {
      date_range_start
      raw_visit_counts
      raw_visitor_counts
    }
  }
}
`,
      variables: { placekeys: s.placekeys.slice(0, 1), start: s.firstWeek ?? week, end: week },
    },
    {
      title: 'One Placekey (lookup)',
      query: `query ($placekey: Placekey!) {
  lookup(placekey: $placekey) {
    placekey
    placedata_core { location_name city region top_category }
  }
}
`,
      variables: { placekey: s.placekeys[0] ?? '' },
    },
    {
      // The explorer speaks /v1, whose search pages by offset; /v2's pages by cursor (docs/api.md, Search).
      title: 'Search by region, page by page (offset: /v1)',
      query: `query ($region: String, $after: Int) {
  search(first: 5, after: $after, filter: { region: $region }) {
    placekey
    placedata_core { location_name city }
  }
}
`,
      variables: { region: s.region },
    },
    {
      title: 'Dataset versions',
      query: `{
  dataset_versions {
    label
    release_month
    core_rows
    weekly_rows
    weeks_covered
    first_week
    last_week
    current
  }
}
`,
      variables: {},
    },
  ];
}

/** What the examples and the place view start from: a few Placekeys and the weeks the served version holds. */
export const SAMPLE_QUERY = `{
  dataset_versions { current first_week last_week }
  search(first: 3) { placekey placedata_core { region } }
}`;

export interface SampleData {
  dataset_versions: { current: boolean; first_week: string | null; last_week: string | null }[];
  search: { placekey: string; placedata_core: { region: string | null } | null }[] | null;
}

export function sampleOf(data: SampleData | null | undefined): Sample {
  const current = data?.dataset_versions.find((v) => v.current);
  const nodes = data?.search ?? [];
  return {
    placekeys: nodes.map((n) => n.placekey),
    lastWeek: current?.last_week ?? null,
    firstWeek: current?.first_week ?? null,
    region: nodes[0]?.placedata_core?.region ?? null,
  };
}

import { useEffect, useMemo, useRef, useState } from 'react';
import { graphql } from './api-client.ts';
import { unregister, weeklyChart } from './charts.ts';
import type { Sample } from './examples.ts';

/** What a summary is of: one of search's filter fields, as the form names them. */
const KINDS = { brand: 'Brand', category: 'Category', region: 'Region (state)', city: 'City' } as const;
type Kind = keyof typeof KINDS;

const SUMMARY_QUERY = `query Summary($filter: SearchFilter, $from: String!, $to: String!) {
  patterns_summary(filter: $filter, weeks: { from: $from, to: $to }, group_by: [week], first: 1000) {
    weeks
    groups { week pois raw_visit_counts raw_visitor_counts }
  }
}`;

export interface SummaryRow { readonly week: string; readonly pois: number; readonly raw_visit_counts: number | null; readonly raw_visitor_counts: number | null }

/** The chart's id in window.placedataCharts (the browser tests read its data). */
export const SUMMARY_CHART = 'summary:weekly';

/** The charted numbers as CSV (RFC 4180: CRLF; the values are dates and numbers, none needs quoting). */
export function summaryCsv(rows: readonly SummaryRow[]): string {
  const field = (v: number | null) => (v === null ? '' : String(v));
  return ['week,pois,raw_visit_counts,raw_visitor_counts', ...rows.map((r) => [r.week, r.pois, field(r.raw_visit_counts), field(r.raw_visitor_counts)].join(','))]
    .map((line) => line + '\r\n').join('');
}

function SummaryChart({ rows }: { rows: readonly SummaryRow[] }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current!;
    const points = rows.map((r) => ({ start: r.week, visits: r.raw_visit_counts, visitors: r.raw_visitor_counts }));
    const chart = weeklyChart(SUMMARY_CHART, el, points, Math.max(300, Math.min(760, el.clientWidth || 700)));
    return () => unregister(SUMMARY_CHART, chart);
  }, [rows]);
  return <div className="chart" data-chart={SUMMARY_CHART} ref={ref} />;
}

/** A download of exactly what is charted, made in the page (the numbers are already here). */
function CsvLink({ rows, name }: { rows: readonly SummaryRow[]; name: string }) {
  const url = useMemo(() => URL.createObjectURL(new Blob([summaryCsv(rows)], { type: 'text/csv' })), [rows]);
  useEffect(() => () => URL.revokeObjectURL(url), [url]);
  return <a className="download" href={url} download={name}>Download CSV</a>;
}

/**
 * Visits and visitors of a brand, category or area week by week (patterns_summary grouped by
 * week over the POIs the filter matches), as a chart, a table and a CSV of the same numbers.
 */
export function SummaryView({ apiKey, sample }: { apiKey: string; sample: Sample }) {
  const [kind, setKind] = useState<Kind>('region');
  const [value, setValue] = useState(sample.region ?? '');
  const [from, setFrom] = useState(sample.firstWeek ?? '');
  const [to, setTo] = useState(sample.lastWeek ?? '');
  const [rows, setRows] = useState<SummaryRow[] | null>(null);
  const [shown, setShown] = useState<{ kind: Kind; value: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function chart(e?: React.FormEvent) {
    e?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await graphql<{ patterns_summary: { weeks: string[]; groups: SummaryRow[] } | null }>(apiKey, SUMMARY_QUERY,
        { filter: value.trim() === '' ? {} : { [kind]: value.trim() }, from, to });
      if (res.errors?.length) {
        setError(res.errors.map((x) => `${x.message} (${x.extensions?.code ?? 'ERROR'})`).join('\n'));
        setRows(null);
      } else {
        setRows(res.data?.patterns_summary?.groups ?? []);
        setShown({ kind, value: value.trim() });
      }
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  useEffect(() => {
    if (sample.lastWeek) void chart();
    // Charts the sample's region once on opening; later charts follow the form.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const what = shown ? (shown.value === '' ? 'every POI' : `${KINDS[shown.kind].toLowerCase()} ${shown.value}`) : '';
  const fileName = `summary-${shown?.kind ?? 'all'}-${(shown?.value || 'all').replace(/[^A-Za-z0-9-]+/g, '_')}.csv`;
  return (
    <div className="summary-view">
      <form onSubmit={chart} className="summary-form">
        <label>Of
          <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            {Object.entries(KINDS).map(([k, label]) => <option key={k} value={k}>{label}</option>)}
          </select></label>
        <label>Value (empty: every POI)
          <input name="value" value={value} onChange={(e) => setValue(e.target.value)} spellCheck={false} /></label>
        <label>From
          <input type="date" name="from" value={from} onChange={(e) => setFrom(e.target.value)} /></label>
        <label>To
          <input type="date" name="to" value={to} onChange={(e) => setTo(e.target.value)} /></label>
        <button type="submit" disabled={busy}>{busy ? 'Loading…' : 'Chart'}</button>
      </form>
      {error && <pre className="error" role="alert">{error}</pre>}
      {rows && rows.length === 0 && <p className="empty">No weekly patterns for {what} in these weeks.</p>}
      {rows && rows.length > 0 && (
        <section className="summary" data-summary={what}>
          <h3>Visits and visitors of {what}, week by week</h3>
          <SummaryChart rows={rows} />
          <table className="summary-table">
            <thead><tr><th>Week</th><th>POIs</th><th>Visits</th><th>Visitors</th></tr></thead>
            <tbody>{rows.map((r) => <tr key={r.week}><td>{r.week}</td><td>{r.pois}</td><td>{r.raw_visit_counts ?? ''}</td><td>{r.raw_visitor_counts ?? ''}</td></tr>)}</tbody>
          </table>
          <CsvLink rows={rows} name={fileName} />
        </section>
      )}
    </div>
  );
}

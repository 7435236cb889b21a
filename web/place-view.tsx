import { useEffect, useRef, useState } from 'react';
import type uPlot from 'uplot';
import { graphql } from './api-client.ts';
import { dailyChart, unregister, weeklyChart } from './charts.ts';
import type { Sample } from './examples.ts';
import { coreChanges, type CoreChange, type CoreChanges } from './core-changes.ts';

/** Weeks one range may cover (MAX_RANGE_WEEKS in shared/weeks.ts). */
const MAX_RANGE_WEEKS = 53;

const PLACE_QUERY = `query Place($placekeys: [Placekey!], $date: String, $start: String!, $end: String!) {
  batch_lookup(placekeys: $placekeys) {
    placekey
    placedata_core { location_name street_address city region postal_code iso_country_code naics_code top_category sub_category latitude longitude }
    placedata_weekly_patterns(date: $date) { date_range_start date_range_end raw_visit_counts raw_visitor_counts visits_by_day }
    placedata_weekly_patterns_range(start_date: $start, end_date: $end) { date_range_start raw_visit_counts raw_visitor_counts }
  }
}`;

interface Core {
  location_name: string | null; street_address: string | null; city: string | null; region: string | null; postal_code: string | null;
  iso_country_code: string | null; naics_code: number | null; top_category: string | null; sub_category: string | null;
  latitude: number | null; longitude: number | null;
}
interface Week { date_range_start: string; date_range_end?: string; raw_visit_counts: number | null; raw_visitor_counts: number | null; visits_by_day?: number[] | null }
interface Entry { placekey: string; placedata_core: Core | null; placedata_weekly_patterns: Week | null; placedata_weekly_patterns_range: Week[] | null }

/** The Monday `weeks - 1` weeks before `monday`, so the range holds `weeks` weeks. */
function weeksBefore(monday: string, weeks: number): string {
  const d = new Date(monday + 'T00:00:00Z');
  d.setUTCDate(d.getUTCDate() - 7 * (weeks - 1));
  return d.toISOString().slice(0, 10);
}

export function parsePlacekeys(text: string): string[] {
  return text.split(/[\s,]+/).map((s) => s.trim()).filter((s) => s !== '');
}

function Chart({ id, draw }: { id: string; draw: (el: HTMLElement, width: number) => uPlot }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current!;
    const chart = draw(el, Math.max(300, Math.min(640, el.clientWidth || 600)));
    return () => unregister(id, chart);
  }, [id, draw]);
  return <div className="chart" data-chart={id} ref={ref} />;
}

/** Where the compared version stands, in words: `release 2022-04, the release after this one`. */
function relationText(changes: CoreChanges): string {
  const month = changes.other.release_month;
  switch (changes.relation) {
    case 'next-release': return `release ${month}, the release after this one`;
    case 'previous-release': return `release ${month}, the release before this one`;
    case 'later-build': return `the same release, ${month}, built later`;
    case 'earlier-build': return `the same release, ${month}, built earlier`;
  }
}

/**
 * How the POI's core fields differ between the version shown and the one that replaced it or
 * will (else the one it replaced), said from the shown version's side: "changed in <next>",
 * "changed since <previous>".
 */
function ChangeNote({ change, changes }: { change: CoreChange | undefined; changes: CoreChanges }) {
  if (!change || change.kind === 'absent') return null;
  const forward = changes.to === changes.other.label;
  const other = <><code>{changes.other.label}</code> ({relationText(changes)})</>;
  const inOther = forward ? <>in {other}</> : <>since {other}</>;
  if (change.kind === 'same') return <p className="core-change same">Core fields unchanged {inOther}.</p>;
  if (change.kind === 'added') {
    return <p className="core-change added">{forward ? <>Not in this version; added in {other}.</> : <>New in this version: not in {other}.</>}</p>;
  }
  if (change.kind !== 'changed') {
    return <p className="core-change removed">{forward ? <>Removed in {other}.</> : <>Removed in this version: was in {other}.</>}</p>;
  }
  return (
    <div className="core-change changed"><p>Core fields changed {inOther}:</p>
      <ul>{change.fields.map((f) => <li key={f.field}><span className="field">{f.field}</span>: {JSON.stringify(f.before)} → {JSON.stringify(f.after)}</li>)}</ul></div>
  );
}

function PlaceCard({ entry, week, changes }: { entry: Entry; week: string; changes: CoreChanges | null }) {
  const core = entry.placedata_core;
  const daily = entry.placedata_weekly_patterns;
  const history = entry.placedata_weekly_patterns_range ?? [];
  const rows: [string, string][] = core ? [
    ['Name', core.location_name ?? ''], ['Address', [core.street_address, core.city, core.region, core.postal_code, core.iso_country_code].filter(Boolean).join(', ')],
    ['Category', [core.top_category, core.sub_category].filter(Boolean).join(' / ')], ['NAICS', core.naics_code === null ? '' : String(core.naics_code)],
    ['Location', core.latitude === null || core.longitude === null ? '' : `${core.latitude}, ${core.longitude}`],
  ].filter(([, v]) => v !== '') as [string, string][] : [];
  return (
    <section className="place" data-placekey={entry.placekey}>
      <h3>{core?.location_name ?? entry.placekey} <code>{entry.placekey}</code></h3>
      {changes && <ChangeNote change={changes.byPlacekey.get(entry.placekey)} changes={changes} />}
      {core ? (
        <table className="core"><tbody>{rows.map(([k, v]) => <tr key={k}><th>{k}</th><td>{v}</td></tr>)}</tbody></table>
      ) : <p className="empty">No POI has this Placekey in the served version.</p>}
      {/* Charts only for a POI: weekly rows of a Placekey the core does not hold are not drawn as its history. */}
      {core && <div className="charts">
        {daily?.visits_by_day ? (
          <div><Chart id={`${entry.placekey}:daily`} draw={(el, w) => dailyChart(`${entry.placekey}:daily`, el, daily.visits_by_day!, w)} />
            <p className="caption">Week of {daily.date_range_start.slice(0, 10)}: {daily.raw_visit_counts} visits, {daily.raw_visitor_counts} visitors</p></div>
        ) : <p className="empty">No weekly patterns for the week of {week}.</p>}
        {history.length > 0 ? (
          <div><Chart id={`${entry.placekey}:weekly`} draw={(el, w) => weeklyChart(`${entry.placekey}:weekly`, el,
            history.map((h) => ({ start: h.date_range_start, visits: h.raw_visit_counts, visitors: h.raw_visitor_counts })), w)} />
            <p className="caption">{history.length} {history.length === 1 ? 'week' : 'weeks'} with data</p></div>
        ) : <p className="empty">No weekly history in the served version.</p>}
      </div>}
    </section>
  );
}

/** Enter Placekeys, see their core attributes, a week's visits by day and the weekly visits over the retained history. */
export function PlaceView({ apiKey, sample }: { apiKey: string; sample: Sample }) {
  const [text, setText] = useState(sample.placekeys.slice(0, 2).join('\n'));
  const [week, setWeek] = useState(sample.lastWeek ?? '');
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [version, setVersion] = useState<string | null>(null);
  const [changes, setChanges] = useState<CoreChanges | null>(null);

  async function show(e?: React.FormEvent) {
    e?.preventDefault();
    const placekeys = parsePlacekeys(text);
    setBusy(true);
    setError(null);
    try {
      const end = week || sample.lastWeek || new Date().toISOString().slice(0, 10);
      const first = sample.firstWeek ?? end;
      const limit = weeksBefore(end, MAX_RANGE_WEEKS);
      const res = await graphql<{ batch_lookup: Entry[] | null }>(apiKey, PLACE_QUERY,
        { placekeys, date: week || null, start: first > limit ? first : limit, end });
      if (res.errors?.length) {
        setError(res.errors.map((x) => `${x.message} (${x.extensions?.code ?? 'ERROR'})`).join('\n'));
        setEntries(null);
      } else {
        setEntries(res.data?.batch_lookup ?? []);
        const shown = res.extensions?.version_date ?? null;
        setVersion(shown);
        // A note only: a failure to compare leaves the places shown without it.
        setChanges(shown ? await coreChanges(apiKey, shown, placekeys).catch(() => null) : null);
      }
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  useEffect(() => {
    if (sample.placekeys.length > 0) void show();
    // Shows the sample once on opening; later shows follow the form.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  return (
    <div className="place-view">
      <form onSubmit={show} className="place-form">
        <label>Placekeys (one per line or comma-separated)
          <textarea name="placekeys" rows={3} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} /></label>
        <label>Week (any day of it)
          <input type="date" name="week" value={week} min={sample.firstWeek ?? undefined} max={sample.lastWeek ?? undefined} onChange={(e) => setWeek(e.target.value)} /></label>
        <button type="submit" disabled={busy}>{busy ? 'Loading…' : 'Show places'}</button>
      </form>
      {error && <pre className="error" role="alert">{error}</pre>}
      {version && <p className="version">Version {version}</p>}
      <div className="places">{entries?.map((entry, i) => <PlaceCard key={`${i}:${entry.placekey}`} entry={entry} week={week} changes={changes} />)}</div>
    </div>
  );
}

import uPlot from 'uplot';

/**
 * The place view's charts, drawn with uPlot. Each chart is also kept by id in
 * `window.placedataCharts`, so what a chart shows can be read back (the browser tests read
 * `chart.data` rather than judge pixels).
 */
declare global {
  interface Window { placedataCharts?: Record<string, uPlot> }
}

const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

function register(id: string, chart: uPlot): uPlot {
  (window.placedataCharts ??= {})[id] = chart;
  return chart;
}

export function unregister(id: string, chart: uPlot): void {
  if (window.placedataCharts?.[id] === chart) delete window.placedataCharts[id];
  chart.destroy();
}

/** Visits by day of one week, as bars, Monday first. */
export function dailyChart(id: string, el: HTMLElement, visitsByDay: readonly number[], width: number): uPlot {
  const opts: uPlot.Options = {
    title: 'Visits by day', width, height: 200,
    scales: { x: { time: false, range: [-0.5, 6.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
    axes: [{ values: (_u, splits) => splits.map((i) => DAYS[i] ?? ''), splits: () => [0, 1, 2, 3, 4, 5, 6] }, {}],
    legend: { show: false },
    series: [{}, { label: 'visits', stroke: '#2563eb', fill: 'rgba(37, 99, 235, 0.35)', paths: uPlot.paths.bars!({ size: [0.6, 60] }), points: { show: false } }],
  };
  return register(id, new uPlot(opts, [[0, 1, 2, 3, 4, 5, 6], [...visitsByDay]], el));
}

/** Half a week in seconds: the x axis reaches this far past the first and last week, so no point sits on an edge. */
const HALF_WEEK = 3.5 * 86_400;

/** Pixels of width each week label on the x axis is given (a `YYYY-MM-DD` label needs about 90). */
const LABEL_SPACE = 110;

export interface WeekPoint { readonly start: string; readonly visits: number | null; readonly visitors: number | null }

/**
 * The weekly chart's x ticks: the weeks with data themselves (every `step`th when there are more
 * than the width has room for), each labelled with its Monday as delivered (`YYYY-MM-DD`), so one
 * week shows as one point under its own date, not on a years-wide time axis.
 */
function weekTicks(weeks: readonly WeekPoint[], width: number): { at: number[]; labels: Map<number, string> } {
  const step = Math.max(1, Math.ceil(weeks.length / Math.max(1, Math.floor(width / LABEL_SPACE))));
  const at = weeks.filter((_w, i) => i % step === 0).map((w) => Date.parse(w.start) / 1000);
  return { at, labels: new Map(weeks.map((w) => [Date.parse(w.start) / 1000, w.start.slice(0, 10)])) };
}

/** Weekly visits and visitors over the retained history, one point per week with data. */
export function weeklyChart(id: string, el: HTMLElement, weeks: readonly WeekPoint[], width: number): uPlot {
  const xs = weeks.map((w) => Date.parse(w.start) / 1000);
  const ticks = weekTicks(weeks, width);
  const label = (x: number | null) => (x === null ? '-' : ticks.labels.get(x) ?? new Date(x * 1000).toISOString().slice(0, 10));
  const opts: uPlot.Options = {
    title: 'Weekly visits', width, height: 220,
    scales: {
      // From the weeks themselves: uPlot's own range for a lone point is not its week (one 2022 week reached 2024).
      x: { time: true, range: () => [Math.min(...xs) - HALF_WEEK, Math.max(...xs) + HALF_WEEK] },
      y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] },
    },
    // Room for six-digit counts (a region's week): uPlot's default width cut 30,000 to 0,000.
    axes: [{ splits: () => ticks.at, values: (_u, splits) => splits.map((x) => label(x)) }, { size: 64 }],
    series: [
      { label: 'Week', value: (_u, x) => label(x) },
      { label: 'visits', stroke: '#2563eb', width: 2, points: { show: true } },
      { label: 'visitors', stroke: '#16a34a', width: 2, points: { show: true } },
    ],
  };
  return register(id, new uPlot(opts, [xs, weeks.map((w) => w.visits), weeks.map((w) => w.visitors)], el));
}

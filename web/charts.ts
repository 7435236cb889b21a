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

/** Weekly visits and visitors over the retained history, one point per week with data. */
export function weeklyChart(id: string, el: HTMLElement, weeks: readonly { start: string; visits: number | null; visitors: number | null }[], width: number): uPlot {
  const xs = weeks.map((w) => Date.parse(w.start) / 1000);
  const opts: uPlot.Options = {
    title: 'Weekly visits', width, height: 220,
    scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
    series: [
      {},
      { label: 'visits', stroke: '#2563eb', width: 2, points: { show: true } },
      { label: 'visitors', stroke: '#16a34a', width: 2, points: { show: true } },
    ],
  };
  return register(id, new uPlot(opts, [xs, weeks.map((w) => w.visits), weeks.map((w) => w.visitors)], el));
}

import './style.css';
import { ApiError, discardHeld, publishHeld, rollback, status, type LoadJob, type Status, type StatusCache } from './api-client.ts';
import { diffFromHash, diffHash, diffView } from './diff-view.ts';
import { qualitySection } from './quality-section.ts';
import { forgetKey } from './browser-key.ts';
import { keyGate, navBar } from './key-gate.ts';
import { groupedGuards } from '../shared/held-state.ts';

/** How often the page asks again: loads in progress move their bars this often. */
const POLL_MS = 1500;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

const fmt = (n: number | null) => (n === null ? '-' : n.toLocaleString('en-US'));
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const time = (iso: string | null) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '');

/** This machine's cache of stored files (VERSION_STORE): held against the budget, the version's files here, and what was fetched. */
function cacheLine(c: StatusCache): HTMLElement {
  const gb = (n: number) => `${(n / 1e9).toFixed(2)} GB`;
  return el('p', { class: 'cache' }, `Cache: ${gb(c.bytes)} of ${gb(c.max_bytes)}; this version's files: ${c.files_open} here, ${c.files_absent} fetched when first asked. `
    + `Since start: ${c.fetches} fetched (${c.prefetched} in the background), ${c.evictions} evicted, ${c.waits} requests waited, ${c.timeouts} answered "try again".`);
}

function versionsTable(s: Status, onRollback: (label: string) => void): HTMLTableElement {
  const operator = s.caller.role === 'operator';
  const head = el('tr', {}, ...['Version', 'Release month', 'Built', 'POIs (core rows)', 'Weekly rows', 'Weeks covered', 'Months covered', 'Own file', 'Shared (inherited)', 'Servable', ''].map((h) => el('th', {}, h)));
  const rows = [...s.versions].reverse().map((v) => {
    const action = el('td');
    if (v.current) action.append(el('strong', {}, 'current'));
    else if (operator && v.servable !== false) {
      const b = el('button', { type: 'button', class: 'rollback', 'data-label': v.label }, 'Roll back to this');
      b.addEventListener('click', () => onRollback(v.label));
      action.append(b);
    }
    const weeks = v.weeks_covered === null ? '-' : v.weeks_covered ? `${v.weeks_covered} (${v.first_week} to ${v.last_week})` : '0';
    const months = v.months_covered === null ? '-' : v.months_covered ? `${v.months_covered} (${v.first_month} to ${v.last_month})` : '0';
    return el('tr', { 'data-label': v.label, class: v.current ? 'current' : '' },
      el('td', {}, el('code', {}, v.label)), el('td', {}, v.release_month), el('td', {}, time(v.built_at)),
      el('td', { class: 'num' }, fmt(v.core_rows)), el('td', { class: 'num' }, fmt(v.weekly_rows)), el('td', {}, weeks), el('td', {}, months),
      el('td', { class: 'num own-bytes' }, v.storage ? mb(v.storage.bytes) : '-'),
      el('td', { class: 'shared', title: v.storage?.inherits.map((f) => f.label).join(', ') ?? '' },
        !v.storage ? '-' : v.storage.inherits.length ? `${mb(v.storage.inherited_bytes)} in ${v.storage.inherits.length} file(s)` : 'none'),
      el('td', {}, v.servable === null ? 'not on this machine yet' : v.servable ? 'yes' : 'no (older layout)'), action);
  });
  return el('table', { class: 'versions' }, el('thead', {}, head), el('tbody', {}, ...rows));
}

/** The reports a reader opened, kept open across refreshes (the list is redrawn on every poll). */
const openReports = new Set<string>();

function report(id: string, title: string, text: string, cls: string, openByDefault: boolean): HTMLDetailsElement {
  const d = el('details', {}, el('summary', {}, title), el('pre', { class: cls }, text));
  const k = `${id}:${title}`;
  d.open = openReports.has(k) || (openByDefault && !openReports.has('closed:' + k));
  d.addEventListener('toggle', () => {
    if (d.open) { openReports.add(k); openReports.delete('closed:' + k); } else { openReports.delete(k); openReports.add('closed:' + k); }
  });
  return d;
}

function jobItem(j: LoadJob): HTMLElement {
  const pct = Math.max(0, Math.min(100, Math.round(j.progress?.percent ?? (j.state === 'completed' ? 100 : 0))));
  // A retried job ('waiting'/'delayed' after a failed attempt) keeps its last progress: show it too.
  const phase = j.progress || j.state === 'active' ? `${j.progress?.phase ?? 'starting'} ${pct}%${j.progress?.rows ? `, ${fmt(j.progress.rows)} rows` : ''}` : 'queued';
  const head = el('div', { class: 'job-head' },
    el('span', { class: `state state-${j.state}` }, j.state), el('code', { class: 'job-id', title: j.id }, j.id.length > 20 ? j.id.slice(0, 18) + '…' : j.id),
    el('span', {}, `enqueued ${time(j.enqueued_at)}`),
    el('span', {}, j.duration_ms !== null ? `${(j.duration_ms / 1000).toFixed(1)} s` : ''),
    el('span', {}, j.attempts > 1 ? `${j.attempts} attempts` : ''));
  const item = el('li', { class: 'job', 'data-job-id': j.id, 'data-state': j.state }, head);
  item.append(el('div', { class: 'job-files' }, `${j.files.join(', ') || '(no files)'}${j.month ? ` as ${j.month}` : ''}`));
  if (!['completed', 'failed'].includes(j.state)) {
    item.append(el('div', { class: 'progress' }, el('progress', { max: '100', value: String(pct) }), el('span', { class: 'phase' }, phase)));
  }
  if (j.result) {
    const removed = j.result.removed_versions.length ? `; retention removed ${j.result.removed_versions.join(', ')}` : '';
    const held = j.result.held?.length ? ` HELD by the publish guards (${groupedGuards(j.result.held).join(', ')})` : '';
    item.append(el('div', { class: 'job-result' }, `→ ${j.result.label}${j.result.already_loaded ? ' (already loaded before)' : ''}${held}${removed}`));
    item.append(report(j.id, 'Load report', j.result.summary, 'report', false));
  }
  if (j.reason) item.append(report(j.id, j.state === 'failed' ? 'Why it failed' : 'Last attempt failed', j.reason, 'report error', j.state === 'failed'));
  return item;
}

function jobsSection(s: Status): HTMLElement {
  const section = el('section', { class: 'jobs' }, el('h2', {}, `Recent loads${s.jobs.queue ? ` (queue ${s.jobs.queue})` : ''}`));
  if (!s.jobs.available) section.append(el('p', { class: 'error' }, s.jobs.error ?? 'The load queue cannot be read'));
  else if (s.jobs.items.length === 0) section.append(el('p', { class: 'empty' }, 'No load jobs in the queue.'));
  else section.append(el('ol', { class: 'job-list' }, ...s.jobs.items.map(jobItem)));
  return section;
}

/**
 * A modal confirmation: resolves true only when the danger button (class `confirmClass`, text
 * `confirmText`) is pressed; Cancel or Escape resolve false. The dialog is removed after.
 */
function confirmDialog(id: string, title: string, body: (string | Node)[], confirmClass: string, confirmText: string): Promise<boolean> {
  const dialog = el('dialog', { class: 'confirm', id },
    el('h3', {}, title), el('p', {}, ...body),
    el('form', { method: 'dialog' },
      el('button', { value: 'cancel', class: 'cancel' }, 'Cancel'), ' ',
      el('button', { value: 'confirm', class: `danger ${confirmClass}` }, confirmText)));
  document.body.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'confirm');
      dialog.remove();
    });
    dialog.showModal();
  });
}

/** The confirmation before a rollback. */
function confirmRollback(from: string | null, to: string): Promise<boolean> {
  return confirmDialog('confirm-rollback', 'Roll back?',
    ['Serve ', el('code', {}, to), ' instead of ', el('code', {}, from ?? 'none'), '? The web processes follow within a second; requests in flight finish on the version they started on.'],
    'confirm-rollback', 'Roll back');
}

/** The confirmation before publishing or discarding a held version. */
function confirmHeld(action: 'publish' | 'discard', label: string): Promise<boolean> {
  return action === 'publish'
    ? confirmDialog('confirm-held', 'Publish a held version?', ['Publish ', el('code', {}, label), '? It breached the publish guards; the web processes serve it within a second.'], 'confirm-publish', 'Publish')
    : confirmDialog('confirm-held', 'Discard a held version?', ['Discard ', el('code', {}, label), '? Its file is deleted; the drop can be loaded again.'], 'confirm-discard', 'Discard');
}

async function start(): Promise<void> {
  document.body.prepend(navBar('status', null));
  // The key form in a bare <main> of its own, as the explorer draws it: the two forms sit alike.
  const gate = el('main');
  document.body.append(gate);
  const { key, caller } = await keyGate(gate, 'The status page shows the versions and recent loads with your key.');
  gate.remove();
  const main = el('main', { class: 'status' });
  document.body.append(main);
  document.querySelector('nav.top')?.replaceWith(navBar('status', caller));
  const message = el('p', { class: 'message', role: 'status' });
  const body = el('div');
  const updated = el('p', { class: 'updated' });
  // The diff a link opened stays across the polls that redraw the rest.
  const diffPanel = el('div', { class: 'diff-panel' });
  main.append(message, body, diffPanel, updated);
  // The panel sits below the tables: it is scrolled into view once they are drawn (the first poll
  // done), both when a "What changed" link opens it and when the page opens at a #diff= link.
  let firstPollDone!: () => void;
  const tablesDrawn = new Promise<void>((resolve) => { firstPollDone = resolve; });
  const showDiff = async () => {
    const pair = diffFromHash(location.hash);
    if (!pair) {
      diffPanel.replaceChildren();
      return;
    }
    diffPanel.replaceChildren(el('p', {}, `Comparing ${pair.from} with ${pair.to}…`));
    const reveal = () => tablesDrawn.then(() => diffPanel.scrollIntoView({ block: 'start' }));
    void reveal();
    const panel = await diffView(key, pair.from, pair.to);
    // A later link replaced this one while it loaded: leave its panel alone.
    if (location.hash !== diffHash(pair.from, pair.to)) return;
    diffPanel.replaceChildren(panel);
    await reveal();
  };
  window.addEventListener('hashchange', () => void showDiff());
  void showDiff();
  let timer: number | undefined;
  let latest: Status | null = null;

  const onRollback = async (label: string) => {
    if (!(await confirmRollback(latest?.current ?? null, label))) return;
    message.textContent = `Rolling back to ${label}…`;
    try {
      const r = await rollback(key, label);
      message.textContent = `Now serving ${r.served ?? r.to} (was ${r.from ?? 'none'}).`;
    } catch (err) {
      message.textContent = err instanceof ApiError ? `Rollback refused: ${err.message} (${err.code})` : 'Rollback failed: the server cannot be reached';
    }
    await refresh();
  };

  const onHeld = async (action: 'publish' | 'discard', label: string) => {
    if (!(await confirmHeld(action, label))) return;
    message.textContent = `${action === 'publish' ? 'Publishing' : 'Discarding'} ${label}…`;
    try {
      if (action === 'publish') {
        const r = await publishHeld(key, label);
        message.textContent = `Published ${r.to}; now serving ${r.served ?? r.to} (was ${r.from ?? 'none'}).`;
      } else {
        message.textContent = `Discarded ${(await discardHeld(key, label)).discarded}.`;
      }
    } catch (err) {
      message.textContent = err instanceof ApiError ? `Refused: ${err.message} (${err.code})` : 'Failed: the server cannot be reached';
    }
    await refresh();
  };

  const render = (s: Status) => {
    latest = s;
    const current = s.versions.find((v) => v.current);
    const summary = el('section', { class: 'summary' }, el('h2', {}, 'In service'),
      current
        ? el('p', {}, el('code', { class: 'current-label' }, current.label), ` release ${current.release_month}, ${fmt(current.core_rows)} POIs, ${current.weeks_covered} weeks, ${current.months_covered} months`)
        : el('p', { class: 'error' }, 'No version is served yet.'),
      ...(s.refused ? [el('p', { class: 'error refused' }, 'Refused ', el('code', {}, s.refused.label), ` (the version the pointer names) at ${time(s.refused.at)}: ${s.refused.reason}. The version above stays in service.`)] : []),
      ...(s.cache ? [cacheLine(s.cache)] : []));
    const versions = el('section', {}, el('h2', {}, `Retained versions (${s.versions.length})`), versionsTable(s, (l) => void onRollback(l)));
    if (caller.role !== 'operator') versions.append(el('p', { class: 'hint' }, 'Rollback needs an operator key (npx placedata keys create <name> --role operator).'));
    const quality = qualitySection(s, { publish: (l) => void onHeld('publish', l), discard: (l) => void onHeld('discard', l) });
    body.replaceChildren(summary, versions, quality, jobsSection(s));
    updated.textContent = `Updated ${new Date().toLocaleTimeString()}; refreshed every ${POLL_MS / 1000} s.`;
  };

  async function refresh(): Promise<void> {
    window.clearTimeout(timer);
    try {
      render(await status(key));
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        forgetKey();
        location.reload();
        return;
      }
      updated.textContent = `Cannot refresh: ${(err as Error).message}`;
    }
    firstPollDone();
    timer = window.setTimeout(() => void refresh(), POLL_MS);
  }
  await refresh();
}

void start();

import type { Status } from './api-client.ts';
import { diffHash } from './diff-view.ts';
import { el } from './dom.ts';
import type { QualityProfile, VersionQuality } from './quality-types.ts';

const fmt = (n: number | null | undefined) => (n === null || n === undefined ? '-' : n.toLocaleString('en-US'));
const signed = (n: number) => (n > 0 ? `+${fmt(n)}` : fmt(n));

/** A figure of this version beside the one it is compared with: `12,000 (+200)`. */
function beside(now: number | null, before: number | null): string {
  if (now === null) return '-';
  return before === null || before === now ? fmt(now) : `${fmt(now)} (${signed(now - before)})`;
}

/** The core column with the largest null share, as `postal_code 12.5%`. */
function mostNull(p: QualityProfile | null): string {
  const core = p?.core;
  if (!core || core.rows === 0) return '-';
  const worst = [...core.columns].sort((a, b) => b.nulls - a.nulls)[0];
  return worst && worst.nulls > 0 ? `${worst.name} ${((worst.nulls / core.rows) * 100).toFixed(1)}%` : 'none';
}

export interface HoldHandlers {
  readonly publish: (label: string) => void;
  readonly discard: (label: string) => void;
}

/**
 * Each stored version's quality profile beside the one before it (the version it was built on,
 * else the one listed before it): POIs, regions, top categories, the most-null core column and
 * the newest week's visits, a link to the diff, and for held versions why, with Publish and
 * Discard for operators.
 */
export function qualitySection(s: Status, handlers: HoldHandlers): HTMLElement {
  const operator = s.caller.role === 'operator';
  const byLabel = new Map(s.quality.map((q) => [q.label, q]));
  const previousOf = (q: VersionQuality, i: number): VersionQuality | null => {
    const base = q.base === null ? undefined : byLabel.get(q.base);
    return base ?? (i > 0 ? s.quality[i - 1]! : null);
  };
  const head = el('tr', {}, ...['Version', 'State', 'POIs', 'Regions', 'Top categories', 'Most null core column', 'Newest week visits', 'Compared with', ''].map((h) => el('th', {}, h)));
  const rows = s.quality.map((q, i) => ({ q, prev: previousOf(q, i) })).reverse().map(({ q, prev }) => {
    const p = q.profile;
    const pp = prev?.profile ?? null;
    const week = p?.weeks.at(-1) ?? null;
    const prevWeek = week ? pp?.weeks.find((w) => w.period === week.period) ?? pp?.weeks.at(-1) ?? null : null;
    const state = q.held ? el('span', { class: 'state state-held' }, 'held') : q.label === s.current ? el('strong', {}, 'current') : el('span', {}, 'retained');
    const actions = el('td', { class: 'actions' });
    if (prev) actions.append(el('a', { href: diffHash(prev.label, q.label), class: 'diff-link', 'data-label': q.label }, 'What changed'));
    if (q.held && operator) {
      const publish = el('button', { type: 'button', class: 'publish', 'data-label': q.label }, 'Publish');
      publish.addEventListener('click', () => handlers.publish(q.label));
      const discard = el('button', { type: 'button', class: 'danger discard', 'data-label': q.label }, 'Discard');
      discard.addEventListener('click', () => handlers.discard(q.label));
      actions.append(' ', publish, ' ', discard);
    }
    const row = el('tr', { 'data-label': q.label, class: q.held ? 'held' : q.label === s.current ? 'current' : '' },
      el('td', {}, el('code', {}, q.label)), el('td', {}, state),
      el('td', { class: 'num' }, beside(p?.core?.rows ?? null, pp?.core?.rows ?? null)),
      el('td', { class: 'num' }, beside(p?.core?.regions.length ?? null, pp?.core?.regions.length ?? null)),
      el('td', { class: 'num' }, beside(p?.core?.top_categories.length ?? null, pp?.core?.top_categories.length ?? null)),
      el('td', {}, mostNull(p)),
      el('td', { class: 'num' }, week ? `${week.period}: ${beside(week.visits, prevWeek?.visits ?? null)}` : '-'),
      el('td', {}, prev ? el('code', {}, prev.label) : '-'), actions);
    if (!q.held) return [row];
    const reasons = el('tr', { class: 'held-reasons', 'data-label': q.label }, el('td', { colspan: '9' },
      el('p', {}, `Held ${q.held.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}: built but not served, because against `, el('code', {}, q.held.compared_with ?? 'nothing'), ' it breached the publish guards:'),
      el('ul', {}, ...q.held.reasons.map((r) => el('li', {}, el('span', { class: 'guard' }, r.guard), `: ${r.message}`))),
      ...(operator ? [] : [el('p', { class: 'hint' }, 'Publishing or discarding it needs an operator key.')])));
    return [row, reasons];
  }).flat();
  return el('section', { class: 'quality' }, el('h2', {}, 'Quality of each version'),
    el('p', { class: 'hint' }, 'Each version\'s profile (computed when it was loaded) beside the version it replaced; figures in brackets are the change.'),
    el('table', { class: 'quality-table' }, el('thead', {}, head), el('tbody', {}, ...rows)));
}

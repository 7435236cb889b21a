import { graphql } from './api-client.ts';
import { VERSION_DIFF_QUERY, type DiffChanged, type DiffPage, type DiffPoi, type VersionDiff } from './quality-types.ts';
import { el } from './dom.ts';

const PAGE = 10;
const fmt = (n: number | null) => (n === null ? '-' : n.toLocaleString('en-US'));
const pct = (share: number | null) => (share === null ? '-' : `${(share * 100).toFixed(1)}%`);
const signed = (n: number) => (n > 0 ? `+${fmt(n)}` : fmt(n));

/** The diff a link names: `#diff=<from>..<to>` on the status page. */
export function diffFromHash(hash: string): { from: string; to: string } | null {
  const m = /^#diff=([0-9]+__[0-9]{4}_[0-9]{2})\.\.([0-9]+__[0-9]{4}_[0-9]{2})$/.exec(hash);
  return m ? { from: m[1]!, to: m[2]! } : null;
}

export const diffHash = (from: string, to: string) => `#diff=${from}..${to}`;

function counts(title: string, list: readonly { value: string | null; pois: number }[]): HTMLElement {
  return el('div', { class: 'breakdown' }, el('h4', {}, title),
    list.length ? el('ul', {}, ...list.map((v) => el('li', {}, `${v.value ?? '(null)'}: ${fmt(v.pois)}`))) : el('p', { class: 'empty' }, 'none'));
}

/** A list of examples that grows by a page each time "More" is pressed (the cursor the last page returned). */
function examples<T>(title: string, kind: 'added' | 'removed' | 'changed', first: DiffPage<T>, row: (item: T) => HTMLElement,
  more: (kind: 'added' | 'removed' | 'changed', after: string) => Promise<DiffPage<T>>): HTMLElement {
  const list = el('ul', { class: `examples examples-${kind}` }, ...first.items.map(row));
  const section = el('div', { class: 'examples-block' }, el('h4', {}, title), first.items.length ? list : el('p', { class: 'empty' }, 'none'));
  let next = first.next;
  const button = el('button', { type: 'button', class: `more more-${kind}` }, 'More');
  button.addEventListener('click', () => void (async () => {
    if (!next) return;
    button.disabled = true;
    const page = await more(kind, next);
    list.append(...page.items.map(row));
    next = page.next;
    button.disabled = false;
    if (!next) button.remove();
  })());
  if (next) section.append(button);
  return section;
}

const poiRow = (p: DiffPoi) => el('li', {}, el('code', {}, p.placekey), ` ${p.location_name ?? ''} (${[p.region, p.top_category].filter(Boolean).join(', ')})`);
const changedRow = (p: DiffChanged) => el('li', {}, el('code', {}, p.placekey), ' ',
  ...p.changes.flatMap((c, i) => [i ? '; ' : '', el('span', { class: 'field' }, c.field), `: ${JSON.stringify(c.before)} → ${JSON.stringify(c.after)}`]));

/** Fetches `version_diff` for the two versions and renders it (POIs, weeks, profile), or says why it cannot. */
export async function diffView(key: string, from: string, to: string): Promise<HTMLElement> {
  const fetchDiff = async (after: Partial<Record<'added_after' | 'removed_after' | 'changed_after', string>> = {}) => {
    const res = await graphql<{ version_diff: VersionDiff }>(key, VERSION_DIFF_QUERY, { from, to, first: PAGE, ...after });
    if (res.errors?.length || !res.data) throw new Error(res.errors?.map((e) => `${e.message} (${e.extensions?.code ?? 'ERROR'})`).join('; ') ?? 'no data');
    return res.data.version_diff;
  };
  const panel = el('section', { class: 'diff', id: 'diff-view', 'data-from': from, 'data-to': to },
    el('h2', {}, 'What changed: ', el('code', {}, from), ' → ', el('code', {}, to)));
  let d: VersionDiff;
  try {
    d = await fetchDiff();
  } catch (err) {
    panel.append(el('p', { class: 'error' }, `Cannot compare: ${(err as Error).message}`));
    return panel;
  }
  const more = async (kind: 'added' | 'removed' | 'changed', after: string) => (await fetchDiff({ [`${kind}_after`]: after })).pois[`${kind}_examples`] as DiffPage<never>;
  const p = d.pois;
  panel.append(el('p', { class: 'diff-summary' }, p.same_core_file
    ? 'Core places: unchanged (both versions read them from the same file).'
    : `POIs: ${fmt(p.added)} added, ${fmt(p.removed)} removed, ${fmt(p.changed)} changed.`));
  if (!p.same_core_file) {
    panel.append(el('div', { class: 'breakdowns' },
      counts('Added by region', p.added_by_region), counts('Added by category', p.added_by_category),
      counts('Removed by region', p.removed_by_region), counts('Removed by category', p.removed_by_category),
      el('div', { class: 'breakdown' }, el('h4', {}, 'Changed fields'),
        p.changed_by_field.length ? el('ul', {}, ...p.changed_by_field.map((f) => el('li', {}, `${f.field}: ${fmt(f.pois)}`))) : el('p', { class: 'empty' }, 'none'))));
    panel.append(examples('Added', 'added', p.added_examples, poiRow, more), examples('Removed', 'removed', p.removed_examples, poiRow, more),
      examples('Changed', 'changed', p.changed_examples, changedRow, more));
  }
  const w = d.weeks;
  panel.append(el('p', { class: 'diff-weeks' }, `Weeks: ${w.added.length} added (${w.added.join(', ') || '-'}), ${w.replaced.length} delivered again (${w.replaced.join(', ') || '-'}), ${w.carried.length} carried, ${w.removed.length} removed.`));
  const pr = d.profile;
  const head = el('tr', {}, ...['', from, to, 'Change'].map((h) => el('th', {}, h)));
  const delta = (a: number | null, b: number | null) => (a === null || b === null ? '-' : signed(b - a));
  const rows = [
    el('tr', {}, el('th', {}, 'POIs'), el('td', { class: 'num' }, fmt(pr.core_rows.before)), el('td', { class: 'num' }, fmt(pr.core_rows.after)), el('td', { class: 'num' }, delta(pr.core_rows.before, pr.core_rows.after))),
    ...pr.null_shares.filter((n) => n.before !== n.after).map((n) => el('tr', {}, el('th', {}, `${n.column} null`), el('td', { class: 'num' }, pct(n.before)), el('td', { class: 'num' }, pct(n.after)), el('td', {}, ''))),
    ...pr.weeks.slice(-4).map((wk) => el('tr', {}, el('th', {}, `Visits ${wk.period}`), el('td', { class: 'num' }, fmt(wk.visits.before)), el('td', { class: 'num' }, fmt(wk.visits.after)), el('td', { class: 'num' }, delta(wk.visits.before, wk.visits.after)))),
  ];
  panel.append(el('table', { class: 'profile-delta' }, el('thead', {}, head), el('tbody', {}, ...rows)));
  return panel;
}

import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { DEFAULT_MIN_CONFIDENCE } from '../../shared/matching/match-places.ts';
import { HAND_MARKER } from '../../bench/results-markdown.ts';
import type { EvalPlace } from './eval-places.ts';
import { calibration, figuresByKind, GROUPS, thresholdSweep, type CalibrationBin, type KindFigures, type SweepRow } from './eval-figures.ts';
import { DUPLICATE_RADIUS_M, QUERY_KINDS, type LabelledQuery } from './eval-queries.ts';
import { metersBetween } from './perturb.ts';
import type { PlaceQuery } from '../../shared/matching/place-query.ts';
import type { EvalRun } from './run-match-eval.ts';

export const SWEEP = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95];

export interface EvalFigures {
  readonly measured_at: string;
  readonly command: string;
  readonly commit: string;
  readonly seed: number;
  readonly places: { readonly drop: number; readonly held_out: number; readonly by_source: Record<string, number> };
  readonly label: string;
  readonly load_s: number;
  readonly match_s: number;
  readonly default_min_confidence: number;
  readonly kinds: readonly KindFigures[];
  readonly sweep: readonly SweepRow[];
  readonly calibration: readonly CalibrationBin[];
  /** Outcomes whose placekey differs from the best candidate's at the default threshold (should be 0). */
  readonly inconsistent_outcomes: number;
  /** The wrong answers at the default threshold, look-alikes last, highest confidence first, one per place a query was made from (at most WORST). */
  readonly worst_wrong: readonly WrongAnswer[];
}

export interface WrongAnswer {
  readonly kind: string;
  readonly query: PlaceQuery;
  /** The place the query was made from (held out when `expected` is null). */
  readonly made_from: string;
  readonly expected: string | null;
  readonly answered: string;
  readonly confidence: number;
  /** The answered place as the drop has it: name, street, city, region, postal. */
  readonly answered_place: readonly (string | null)[];
}

const WORST = 20;

function worstWrong(r: EvalRun): WrongAnswer[] {
  const places = new Map([...r.drop, ...r.heldOut].map((p) => [p.placekey, p]));
  return r.queries.flatMap((q, i) => {
    const o = r.outcomes[i]!;
    if (o.placekey === null || o.placekey === q.expected) return [];
    const a = places.get(o.placekey);
    return [{ kind: q.kind, query: q.query, made_from: q.placekey, expected: q.expected, answered: o.placekey, confidence: o.confidence!,
      answered_place: a ? [a.location_name, a.street_address, a.city, a.region, a.postal_code] : [] }];
  }).sort((a, b) => Number(a.kind !== 'absent') - Number(b.kind !== 'absent') || b.confidence - a.confidence || (a.query.query_id! < b.query.query_id! ? -1 : 1))
    .filter((w, i, all) => all.findIndex((x) => x.made_from === w.made_from) === i).slice(0, WORST);
}

export function evalFigures(r: EvalRun, seed: number, command: string, commit: string, now: Date): EvalFigures {
  const by_source: Record<string, number> = {};
  for (const p of [...r.drop, ...r.heldOut]) by_source[p.source] = (by_source[p.source] ?? 0) + 1;
  const answers = r.outcomes.map((o) => o.placekey);
  const inconsistent = r.outcomes.filter((o) => o.placekey !== (o.confidence !== null && o.confidence >= DEFAULT_MIN_CONFIDENCE ? o.candidates[0]?.placekey ?? null : null)).length;
  return {
    measured_at: now.toISOString(), command, commit, seed, places: { drop: r.drop.length, held_out: r.heldOut.length, by_source }, label: r.label,
    load_s: Number(r.load_s.toFixed(2)), match_s: Number(r.match_s.toFixed(2)), default_min_confidence: DEFAULT_MIN_CONFIDENCE,
    kinds: figuresByKind(r.queries, answers), sweep: thresholdSweep(r.queries, r.outcomes, SWEEP), calibration: calibration(r.queries, r.outcomes),
    inconsistent_outcomes: inconsistent, worst_wrong: worstWrong(r),
  };
}

const pct = (v: number | null) => (v === null ? '-' : v.toFixed(4));

/** The figures as Markdown tables (per kind, the sweep, calibration). */
export function figuresMarkdown(f: EvalFigures): string {
  const lines = [
    `At DEFAULT_MIN_CONFIDENCE ${f.default_min_confidence}:`, '',
    '| kind | queries | answered | correct | wrong | precision | recall |', '|---|---|---|---|---|---|---|',
    ...f.kinds.map((k) => `| ${k.kind === 'overall' || k.kind in GROUPS ? `**${k.kind}**` : k.kind} | ${k.queries} | ${k.answered} | ${k.correct} | ${k.wrong} | ${pct(k.precision)} | ${pct(k.recall)} |`),
    '', 'Overall, by threshold (the best candidate answered when its confidence reaches it):', '',
    '| threshold | answered | correct | wrong | precision | recall | full-address recall | name+coords recall | absent answered null |', '|---|---|---|---|---|---|---|---|---|',
    ...f.sweep.map((s) => `| ${s.threshold.toFixed(2)} | ${s.answered} | ${s.correct} | ${s.wrong} | ${pct(s.precision)} | ${pct(s.recall)} | ${pct(s.full_address_recall)} | ${pct(s.name_coords_recall)} | ${pct(s.absent_null)} |`),
    '', 'Calibration (every query with a candidate, by its best candidate\'s confidence):', '',
    '| confidence | queries | mean confidence | share correct |', '|---|---|---|---|',
    ...f.calibration.map((b) => `| ${b.from.toFixed(1)}-${b.to.toFixed(1)} | ${b.queries} | ${pct(b.mean_confidence)} | ${pct(b.share_correct)} |`),
    '', `The wrong answers at the threshold (${f.kinds.find((k) => k.kind === 'overall')!.wrong} in all), look-alikes last, highest confidence first, one per place the query was made from (up to ${WORST} in bench/match-eval.json's worst_wrong; up to 10 a kind on stderr):`, '',
    '| kind | query | answered | confidence |', '|---|---|---|---|',
    ...f.worst_wrong.slice(0, 10).map((w) => {
      const { query_id, ...fields } = w.query;
      return `| ${w.kind} | ${query_id}: ${JSON.stringify(fields).replace(/\|/g, '\\|')} | ${w.answered} ${JSON.stringify(w.answered_place).replace(/\|/g, '\\|')} | ${w.confidence} |`;
    }),
  ];
  return lines.join('\n') + '\n';
}

/** The note that opens the section: what the set is and how it was measured. */
function setDescription(f: EvalFigures): string {
  const sources = Object.entries(f.places.by_source).map(([s, n]) => `${s} ${n}`).join(', ');
  return [
    `\`${f.command}\` (${f.commit}), ${f.measured_at}, seed ${f.seed}. ${f.places.drop + f.places.held_out} places from the samples (${sources}; one per placekey, first source wins),`,
    `${f.places.held_out} held out of the drop (absent); the rest loaded as one core drop with \`placedata load\` (${f.load_s} s) and matched with`,
    `matchPlaces in batches of 1000 (${f.match_s} s for ${f.kinds.find((k) => k.kind === 'overall')!.queries} queries). Kinds: tools/match-eval/eval-queries.ts;`,
    'Every query keeps its truth (its own place; null for a held-out one); `ambiguous` and `absent_lookalike` hold the queries that a place of the',
    'drop other than their own fits as well (same name and address fields, or the same name near the point: see DropIndex in eval-queries.ts), so that',
    'they do not blur their kind\'s figure; `absent_duplicate` holds those of a held-out place that the samples list twice (a place of the drop',
    `with the same name words within ${DUPLICATE_RADIUS_M} m: DropIndex.duplicated), so the place is in the data under its other key and`,
    'answering that key is right for a user; all three count in **overall**, every answer of a held-out place as wrong. Groups: full-address kinds (target recall 0.95) =',
    `${GROUPS.full_address_kinds.join(', ')}; name+coords kinds (0.90) = ${GROUPS.name_coords_kinds.join(', ')}. \`short_name\` (the first two words of a longer`,
    'name, with coordinates moved as coords_moved\'s, for the drop\'s places only) is in no group: it measures what a user\'s shorter name costs.',
    'Precision = correct / answered; recall = correct / answerable (held-out kinds: the share answered null).',
    f.inconsistent_outcomes ? `**${f.inconsistent_outcomes} outcomes had a placekey other than their best candidate at the threshold.**` : '',
  ].filter(Boolean).join('\n') + '\n';
}

export const SECTION_HEADING = '## Address matching: the evaluation set (issue 31)';

/**
 * Writes the section into bench/RESULTS.md below the hand-written marker: in place of an earlier
 * one, else at the end; the rest of the file is left byte for byte.
 */
export async function writeResultsSection(file: string, f: EvalFigures): Promise<void> {
  const section = `${SECTION_HEADING}\n\n${setDescription(f)}\n${figuresMarkdown(f)}`;
  let text = existsSync(file) ? await readFile(file, 'utf8') : '';
  if (!text.includes(HAND_MARKER)) text = `${text.replace(/\n+$/, '')}${text ? '\n\n' : ''}${HAND_MARKER}\n`;
  const at = text.indexOf(SECTION_HEADING, text.indexOf(HAND_MARKER));
  if (at < 0) {
    await writeFile(file, `${text.replace(/\n+$/, '')}\n\n${section}`);
    return;
  }
  const next = text.slice(at + SECTION_HEADING.length).search(/^## /m);
  const rest = next < 0 ? '' : text.slice(at + SECTION_HEADING.length + next);
  await writeFile(file, `${text.slice(0, at)}${section}${rest ? `\n${rest}` : ''}`);
}

function placeLine(p: EvalPlace | undefined, q: LabelledQuery): string {
  if (!p) return '(not a sample place)';
  const where = q.query.latitude != null && p.latitude !== null ? ` ${Math.round(metersBetween(q.query.latitude, q.query.longitude!, p.latitude, p.longitude!))} m` : '';
  return `${p.placekey} ${JSON.stringify([p.location_name, p.street_address, p.city, p.region, p.postal_code])}${where}`;
}

/** Up to `n` wrong answers and `n` misses per kind, with the query and its candidates: what the matcher is tuned against. */
export function examples(r: EvalRun, n = 10): string {
  const places = new Map([...r.drop, ...r.heldOut].map((p) => [p.placekey, p]));
  const out: string[] = [];
  for (const kind of QUERY_KINDS) {
    const idx = r.queries.map((_q, i) => i).filter((i) => r.queries[i]!.kind === kind);
    const wrong = idx.filter((i) => r.outcomes[i]!.placekey !== null && r.outcomes[i]!.placekey !== r.queries[i]!.expected).slice(0, n);
    const missed = idx.filter((i) => r.outcomes[i]!.placekey === null && r.queries[i]!.expected !== null).slice(0, n);
    for (const [what, list] of [['wrong', wrong], ['missed', missed]] as const) {
      for (const i of list) {
        const q = r.queries[i]!, o = r.outcomes[i]!;
        out.push(`[${kind} ${what}] ${JSON.stringify(q.query)}${q.moved_m !== undefined ? ` (moved ${q.moved_m} m)` : ''}`);
        out.push(`    made from ${placeLine(places.get(q.placekey), q)}${q.expected === null ? ' (held out)' : ''}`);
        out.push(`    answered ${o.placekey ?? 'null'} confidence ${o.confidence ?? 'null'} matched_on ${JSON.stringify(o.matched_on)}`);
        for (const c of o.candidates) out.push(`      candidate ${c.confidence.toFixed(4)} ${JSON.stringify(c.matched_on)} ${placeLine(places.get(c.placekey), q)}`);
      }
    }
  }
  return out.join('\n');
}

import type { MatchOutcome } from '../../shared/matching/match-places.ts';
import { FULL_ADDRESS_KINDS, NAME_COORDS_KINDS, QUERY_KINDS, type LabelledQuery, type QueryKind } from './eval-queries.ts';

/** The groups issue 31's targets name, counted after the kinds. */
export const GROUPS = { full_address_kinds: FULL_ADDRESS_KINDS, name_coords_kinds: NAME_COORDS_KINDS } as const;

export interface KindFigures {
  readonly kind: QueryKind | keyof typeof GROUPS | 'overall';
  readonly queries: number;
  /** Queries answered with a placekey. */
  readonly answered: number;
  readonly correct: number;
  /** Answered with a placekey other than the expected one (for held-out places: any placekey). */
  readonly wrong: number;
  /** correct / answered (null when nothing was answered). */
  readonly precision: number | null;
  /** correct / answerable; for the held-out kinds (`absent`, `absent_lookalike`, `absent_duplicate`), the share answered null (null when there is nothing to count). */
  readonly recall: number | null;
}

export interface SweepRow {
  readonly threshold: number;
  readonly answered: number;
  readonly correct: number;
  readonly wrong: number;
  readonly precision: number | null;
  readonly recall: number | null;
  readonly full_address_recall: number | null;
  readonly name_coords_recall: number | null;
  /** Share of `absent` queries answered null. */
  readonly absent_null: number | null;
}

export interface CalibrationBin {
  readonly from: number;
  readonly to: number;
  /** Queries whose best candidate's confidence is in [from, to) ([0.9, 1] for the last). */
  readonly queries: number;
  /** Of those, share whose best candidate is the expected place. */
  readonly share_correct: number | null;
  readonly mean_confidence: number | null;
}

/** The answer at a threshold: the best candidate when its confidence reaches it. */
export function answerAt(outcome: MatchOutcome, threshold: number): string | null {
  return outcome.confidence !== null && outcome.confidence >= threshold ? (outcome.candidates[0]?.placekey ?? null) : null;
}

const ratio = (a: number, b: number) => (b === 0 ? null : a / b);

function figuresOf(kind: KindFigures['kind'], items: readonly { q: LabelledQuery; answer: string | null }[]): KindFigures {
  let answered = 0, correct = 0, answerable = 0, absentNull = 0, absent = 0;
  for (const { q, answer } of items) {
    if (q.expected !== null) answerable++;
    if (q.expected === null) {
      absent++;
      if (answer === null) absentNull++;
    }
    if (answer === null) continue;
    answered++;
    if (answer === q.expected) correct++;
  }
  const recall = kind === 'absent' || kind === 'absent_lookalike' || kind === 'absent_duplicate' ? ratio(absentNull, absent) : ratio(correct, answerable);
  return { kind, queries: items.length, answered, correct, wrong: answered - correct, precision: ratio(correct, answered), recall };
}

/** Figures per kind (in QUERY_KINDS order, kinds without queries left out), per target group and overall, for answers as given. */
export function figuresByKind(queries: readonly LabelledQuery[], answers: readonly (string | null)[]): KindFigures[] {
  const items = queries.map((q, i) => ({ q, answer: answers[i] ?? null }));
  const out = QUERY_KINDS.map((k) => figuresOf(k, items.filter((x) => x.q.kind === k))).filter((f) => f.queries > 0);
  const groups = Object.entries(GROUPS).map(([g, kinds]) => figuresOf(g as keyof typeof GROUPS, items.filter((x) => kinds.includes(x.q.kind))));
  return [...out, ...groups, figuresOf('overall', items)];
}

/** Overall precision and recall at each threshold, from the outcomes' best candidates. */
export function thresholdSweep(queries: readonly LabelledQuery[], outcomes: readonly MatchOutcome[], thresholds: readonly number[]): SweepRow[] {
  return thresholds.map((threshold) => {
    const answers = outcomes.map((o) => answerAt(o, threshold));
    const all = figuresByKind(queries, answers);
    const overall = all.find((f) => f.kind === 'overall')!;
    const absent = all.find((f) => f.kind === 'absent');
    const recallOf = (k: KindFigures['kind']) => all.find((f) => f.kind === k)?.recall ?? null;
    return { threshold, answered: overall.answered, correct: overall.correct, wrong: overall.wrong, precision: overall.precision, recall: overall.recall,
      full_address_recall: recallOf('full_address_kinds'), name_coords_recall: recallOf('name_coords_kinds'), absent_null: absent?.recall ?? null };
  });
}

/** How often the best candidate is the right place, by its confidence, in tenths. */
export function calibration(queries: readonly LabelledQuery[], outcomes: readonly MatchOutcome[]): CalibrationBin[] {
  const bins = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, n: 0, right: 0, sum: 0 }));
  outcomes.forEach((o, i) => {
    if (o.confidence === null) return;
    const bin = bins[Math.min(9, Math.floor(o.confidence * 10))]!;
    bin.n++;
    bin.sum += o.confidence;
    if (o.candidates[0]?.placekey === queries[i]!.expected) bin.right++;
  });
  return bins.map((b) => ({ from: b.from, to: b.to, queries: b.n, share_correct: ratio(b.right, b.n), mean_confidence: ratio(b.sum, b.n) }));
}

/**
 * Scoring an evaluator on a labelled set (`warden evaluate --cases FILE.jsonl`): one case per line,
 * `{task, turns, label}` with label `OK` or one of the five patterns (optional: `id`, `source`,
 * `split`, `reason`, `evidenceFrom`, `firstTurnNumber`, `notes`, `license`, `annotation`, `decidedBy`). Pure: parsing, and the metrics
 * over (label, prediction) pairs — per-label precision and recall, the OK false-flag rate, the
 * confusion matrix.
 */
import { z } from 'zod';
import { PATTERNS, TurnSchema, type Turn, type Verdict } from '../contract/schemas.js';
import { GROUP_BY, type GroupBy } from './group-by.js';

export const CASE_LABELS = ['OK', ...PATTERNS] as const;
export type CaseLabel = (typeof CASE_LABELS)[number];
/** What an evaluation predicted: a label, or SKIPPED (no verdict: timeout, crash, unparseable answer). */
export type Prediction = CaseLabel | 'SKIPPED';

export const CaseSchema = z
  .object({
    task: z.string().min(1, 'task must not be empty'),
    turns: z.array(TurnSchema),
    label: z.enum(CASE_LABELS),
    id: z.string().min(1).max(200).optional(),
    source: z.string().max(2_000).optional(),
    split: z.string().min(1).max(50).optional(),
    reason: z.enum(['interval', 'idle']).optional(),
    evidenceFrom: z.number().int().nonnegative().optional(),
    firstTurnNumber: z.number().int().positive().optional(),
    notes: z.string().max(4_000).optional(),
    /** Where a case comes from someone else's data: that data's licence, and the annotation its label rests on. */
    license: z.string().min(1).max(200).optional(),
    annotation: z.string().max(4_000).optional(),
    /** Who gave the label: a human's decision (`warden cases export`), or an evaluator. */
    decidedBy: z.enum(['human', 'evaluator']).optional(),
  })
  .strict();
export type LabelledCase = z.output<typeof CaseSchema> & { line: number; turns: Turn[] };

export class CaseFileError extends Error {
  override name = 'CaseFileError';
}

/** Parse a JSONL case file. Blank lines are skipped; any bad line throws, naming the line and field. */
export function parseCases(text: string): LabelledCase[] {
  const out: LabelledCase[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const n = i + 1;
    if (!line.trim()) return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (err) {
      throw new CaseFileError(`line ${n}: not valid JSON: ${(err as Error).message}`);
    }
    const r = CaseSchema.safeParse(raw);
    if (!r.success) {
      const first = r.error.issues[0]!;
      const field = first.path.length ? first.path.join('.') : '(the line)';
      throw new CaseFileError(`line ${n}: ${field}: ${first.message}`);
    }
    out.push({ ...r.data, line: n });
  });
  if (out.length === 0) throw new CaseFileError('no cases: the file has no non-blank line');
  return out;
}

export const predictionOf = (v: Verdict | null): Prediction => (v === null ? 'SKIPPED' : v.kind === 'OK' ? 'OK' : (v.pattern ?? 'SKIPPED'));

export interface LabelScore {
  /** Cases with this label. */
  support: number;
  /** Cases predicted as this label. */
  predicted: number;
  truePositives: number;
  /** null when nothing was predicted as this label. */
  precision: number | null;
  /** null when no case has this label. */
  recall: number | null;
}

export interface Score {
  cases: number;
  skipped: number;
  labels: Record<CaseLabel, LabelScore>;
  /** OK cases that got a non-OK verdict, over all OK cases (null with no OK case). Skips are not flags. */
  okFalseFlagRate: number | null;
  /** confusion[actual][predicted] = count. */
  confusion: Record<CaseLabel, Record<Prediction, number>>;
}

const ratio = (a: number, b: number): number | null => (b === 0 ? null : Math.round((a / b) * 1000) / 1000);

export function score(pairs: ReadonlyArray<{ label: CaseLabel; predicted: Prediction }>): Score {
  const columns: Prediction[] = [...CASE_LABELS, 'SKIPPED'];
  const confusion = Object.fromEntries(CASE_LABELS.map((l) => [l, Object.fromEntries(columns.map((c) => [c, 0]))])) as Score['confusion'];
  for (const { label, predicted } of pairs) confusion[label][predicted]++;
  const labels = {} as Record<CaseLabel, LabelScore>;
  for (const l of CASE_LABELS) {
    const support = pairs.filter((p) => p.label === l).length;
    const predicted = pairs.filter((p) => p.predicted === l).length;
    const tp = confusion[l][l];
    labels[l] = { support, predicted, truePositives: tp, precision: ratio(tp, predicted), recall: ratio(tp, support) };
  }
  const okCases = pairs.filter((p) => p.label === 'OK');
  const flagged = okCases.filter((p) => p.predicted !== 'OK' && p.predicted !== 'SKIPPED').length;
  return {
    cases: pairs.length,
    skipped: pairs.filter((p) => p.predicted === 'SKIPPED').length,
    labels,
    okFalseFlagRate: ratio(flagged, okCases.length),
    confusion,
  };
}

/** What `evaluate --cases --by` groups on. */
export { GROUP_BY, type GroupBy };

/**
 * The group of a case: its split, or its source's repository — `owner/name` of a GitHub address
 * (`https://github.com/owner/name@commit:path`, `…/name/issues/12`), else the whole source. A case
 * without one is in `(none)`.
 */
export function groupOf(c: Pick<LabelledCase, 'source' | 'split'>, by: GroupBy): string {
  const v = by === 'split' ? c.split : c.source;
  if (!v) return '(none)';
  if (by === 'source') {
    const m = /^https?:\/\/github\.com\/([^/@\s:]+)\/([^/@\s:]+)/.exec(v.trim());
    if (m) return `${m[1]}/${m[2]}`;
  }
  return v.trim();
}

/** Score each group of cases separately, the groups in name order. */
export function scoreGroups<T extends { label: CaseLabel; predicted: Prediction }>(pairs: ReadonlyArray<T>, group: (p: T) => string): Record<string, Score> {
  const by = new Map<string, T[]>();
  for (const p of pairs) {
    const k = group(p);
    by.set(k, [...(by.get(k) ?? []), p]);
  }
  return Object.fromEntries([...by.keys()].sort().map((k) => [k, score(by.get(k)!)]));
}

const pct = (x: number | null) => (x === null ? '   —  ' : x.toFixed(3).padStart(6));

/** One line a group: its cases, OK false-flag rate, and precision/recall of each label it has or was given. */
export function formatGroups(groups: Record<string, Score>): string[] {
  const f = (x: number | null) => (x === null ? '—' : x.toFixed(3));
  return Object.entries(groups).map(([k, s]) => {
    const labels = CASE_LABELS.filter((l) => s.labels[l].support > 0 || s.labels[l].predicted > 0)
      .map((l) => `${l} ${s.labels[l].support} P ${f(s.labels[l].precision)} R ${f(s.labels[l].recall)}`)
      .join('; ');
    return `${k}: ${s.cases} cases, ${s.skipped} skipped, OK false-flag rate ${f(s.okFalseFlagRate)}; ${labels}`;
  });
}

/** The score as a human-readable table. */
export function formatScore(s: Score): string[] {
  const lines = [`${s.cases} cases, ${s.skipped} skipped; OK false-flag rate ${s.okFalseFlagRate === null ? '—' : s.okFalseFlagRate.toFixed(3)}`, ''];
  lines.push(`${'label'.padEnd(15)} ${'support'.padStart(7)} ${'predicted'.padStart(9)} precision   recall`);
  for (const l of CASE_LABELS) {
    const x = s.labels[l];
    lines.push(`${l.padEnd(15)} ${String(x.support).padStart(7)} ${String(x.predicted).padStart(9)}    ${pct(x.precision)}   ${pct(x.recall)}`);
  }
  const cols: Prediction[] = [...CASE_LABELS, 'SKIPPED'];
  const short = (c: string) => c.slice(0, 8);
  lines.push('', `confusion (rows: label, columns: verdict)`, `${''.padEnd(15)}${cols.map((c) => short(c).padStart(9)).join('')}`);
  for (const l of CASE_LABELS) lines.push(`${l.padEnd(15)}${cols.map((c) => String(s.confusion[l][c]).padStart(9)).join('')}`);
  return lines;
}

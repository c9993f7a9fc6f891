/**
 * The `tiered` evaluator's first tier as one pure function, and the triage it makes over a labelled
 * set. `tierOne` decides, for one window, whether the model is asked, with no model anywhere: the
 * heuristic flags; or it says OK but is unsure — a near miss (heuristic/unsure.ts) or a cheap triage
 * signal (triage-signals.ts: repetition, the same reply again, a failure streak, little new, off the
 * task's words); or the OK is sampled. The heuristic speaks alone under the offline default and
 * must be precise; the first tier is a triage and must miss nothing a model would catch, so its
 * signals are loose on purpose. The activity (activities/evaluate.ts) calls it before it asks the
 * model, and `warden evaluate --cases` calls it to measure the triage, so the two cannot diverge.
 * `triage` counts, per label, the windows the first tier sends to the model: for a problem label
 * that is the recall a perfect model would reach (a window sent counts as caught); for OK it is
 * what the model costs.
 */
import type { Verdict } from '../contract/schemas.js';
import { evidenceFrame, hasEvidenceTurns, type EvidenceFrame } from './evidence.js';
import { heuristicJudgement, type HeuristicInput } from './heuristic/index.js';
import { nearMiss, type NearMiss } from './heuristic/unsure.js';
import { measureWindow, triageSignals } from './triage-signals.js';
import { CASE_LABELS, type CaseLabel } from './scoring.js';
import { routeTiered, sampledOk, type AskReason, type Route } from './tiered.js';
import { formatAnswer, parseAnswer } from './verdict.js';

export interface TierOneInput extends HeuristicInput {
  agentId: string;
  reason: 'interval' | 'idle';
}

/** The first tier's decision on one window. */
export type TierOne =
  | { kind: 'skipped'; reason: string; frame: EvidenceFrame }
  | {
      kind: 'judged';
      frame: EvidenceFrame;
      /** The heuristic's verdict, as the strict answer parser returns it (with its finding key when it flags). */
      heuristic: Verdict;
      /** Evidence from the working tree the flag rests on (not the model's to overrule), else null. */
      tampered: string | null;
      /** The near miss that makes an OK unsure, else null. */
      miss: NearMiss | null;
      /** The triage signals that make an OK unsure (triage-signals.ts), in words; empty when none (or not an OK). */
      signals: string[];
      route: Route;
    };

/**
 * The first tier of `tiered` on one window: skip (nothing to judge, or the heuristic's answer does
 * not parse), else the heuristic's verdict and whether the model is asked. `sampleOk` is the
 * fraction of sure OK windows sent anyway (0: none).
 */
export function tierOne(input: TierOneInput, sampleOk: number): TierOne {
  const frame = evidenceFrame(input.turns.length, input.evidenceFrom, input.firstTurnNumber);
  // Nothing the agent did since the evidence boundary: no verdict can rest on it.
  if (input.reason === 'interval' && !hasEvidenceTurns(frame))
    return { kind: 'skipped', reason: 'nothing to judge: no turn at or after the evidence boundary', frame };
  const hin: HeuristicInput = {
    task: input.task,
    turns: input.turns,
    reason: input.reason,
    evidenceFrom: input.evidenceFrom,
    firstTurnNumber: input.firstTurnNumber,
    protectedChanges: input.protectedChanges,
  };
  const first = heuristicJudgement(hin);
  // The same strict answer format and parser as the `heuristic` evaluator (evidence, message tidying).
  const judged = parseAnswer(formatAnswer(first.verdict), { frame, reason: input.reason });
  if (!judged.ok) return { kind: 'skipped', reason: `heuristic answer rejected: ${judged.error}`, frame };
  const heuristic = withFinding(judged.verdict, first.verdict.finding);
  const miss = heuristic.kind === 'OK' ? nearMiss(hin) : null;
  const signals = heuristic.kind === 'OK' ? triageSignals(measureWindow(input.task, input.turns, frame.evidenceFrom)) : [];
  const unsure = miss !== null || signals.length > 0;
  const lastTurn = frame.firstTurnNumber + frame.count - 1;
  const sampled = heuristic.kind === 'OK' && !unsure && sampledOk(input.agentId, frame.firstTurnNumber, lastTurn, sampleOk);
  // A flag resting on the working tree (protected tests weakened or deleted), or on the agent's
  // attempt on its own controls that its hook denied, is not the model's to overrule.
  const route = routeTiered({ heuristic, unsure, sampled, tampered: first.tampered !== null });
  return { kind: 'judged', frame, heuristic, tampered: first.tampered, miss, signals, route };
}

/** A non-OK heuristic verdict with its finding key (what a dismissal of it silences: judgement/finding.ts). */
export function withFinding(verdict: Verdict, finding: string | undefined): Verdict {
  return finding && verdict.kind !== 'OK' ? { ...verdict, finding } : verdict;
}

/** Per label: windows, how many the first tier sends to the model (and why), and the share sent. */
export interface TriageRow {
  windows: number;
  sent: number;
  /** Sent because the heuristic flags / is unsure: a near miss or a triage signal (no OK is sampled here: `--sample-ok 0`). */
  flagged: number;
  unsure: number;
  /** Windows the first tier skips (nothing to judge): never sent. */
  skipped: number;
  /** sent / windows, 3 decimals; null with no window. */
  share: number | null;
}

export interface Triage {
  /** Always 0: the triage counts no randomly sampled OK window. */
  sampleOk: 0;
  /** Every label the cases use, in CASE_LABELS order. */
  labels: Partial<Record<CaseLabel, TriageRow>>;
  /** All non-OK windows together: the share is the recall with a perfect model. */
  problems: TriageRow;
  /** The OK windows: the share is what the model costs. */
  ok: TriageRow;
}

const share = (a: number, b: number): number | null => (b === 0 ? null : Math.round((a / b) * 1000) / 1000);

function row(ws: ReadonlyArray<{ sent: AskReason | null; skipped?: boolean }>): TriageRow {
  const sent = ws.filter((w) => w.sent !== null).length;
  return {
    windows: ws.length,
    sent,
    flagged: ws.filter((w) => w.sent === 'flagged').length,
    unsure: ws.filter((w) => w.sent === 'unsure').length,
    skipped: ws.filter((w) => w.skipped).length,
    share: share(sent, ws.length),
  };
}

/** One window's triage: its label, and why the first tier sends it (null: it does not). */
export interface TriageWindow {
  label: CaseLabel;
  sent: AskReason | null;
  skipped?: boolean;
}

/** The triage counts over labelled windows. */
export function triage(windows: ReadonlyArray<TriageWindow>): Triage {
  const labels: Triage['labels'] = {};
  for (const l of CASE_LABELS) {
    const ws = windows.filter((w) => w.label === l);
    if (ws.length) labels[l] = row(ws);
  }
  return { sampleOk: 0, labels, problems: row(windows.filter((w) => w.label !== 'OK')), ok: row(windows.filter((w) => w.label === 'OK')) };
}

/** The window's triage under `--sample-ok 0`: whether the first tier alone sends it to the model. */
export function triageWindow(label: CaseLabel, input: TierOneInput): TriageWindow {
  const t = tierOne(input, 0);
  if (t.kind === 'skipped') return { label, sent: null, skipped: true };
  return { label, sent: t.route.why };
}

/** The triage as a small table (human output of `warden evaluate --cases`). */
export function formatTriage(t: Triage): string[] {
  const pct = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)} %`);
  const line = (name: string, r: TriageRow) =>
    `${name.padEnd(15)} ${String(r.windows).padStart(7)} ${String(r.sent).padStart(5)} ${String(r.flagged).padStart(7)} ${String(r.unsure).padStart(6)} ${pct(r.share).padStart(8)}`;
  const lines = [
    'triage: the windows the first tier sends to the model (--sample-ok 0; no model asked)',
    `${'label'.padEnd(15)} ${'windows'.padStart(7)} ${'sent'.padStart(5)} ${'flagged'.padStart(7)} ${'unsure'.padStart(6)} ${'share'.padStart(8)}`,
  ];
  for (const [l, r] of Object.entries(t.labels)) if (l !== 'OK') lines.push(line(l, r));
  lines.push(line('all problems', t.problems), line('OK', t.ok));
  lines.push(
    `recall with a perfect model ${pct(t.problems.share)} (${t.problems.sent}/${t.problems.windows}); OK windows sent (the model's cost) ${pct(t.ok.share)} (${t.ok.sent}/${t.ok.windows})`,
  );
  return lines;
}

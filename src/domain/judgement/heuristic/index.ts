/**
 * warden's offline evaluator: deterministic detectors over the window, no model needed. One
 * detector per concern, in files beside this one; the first finding, in the order below, is the
 * verdict. Reward hacking comes first (it is the most harmful and the most specific), then
 * spirals (verbatim ones in spiral.ts, reworded ones in lookup.ts, admitted ones in admit.ts), then stalls, then a window
 * that has left the task's words altogether (drift.ts).
 *
 * Evidence: only turns at or after `evidenceFrom` count as evidence (earlier turns are context, e.g.
 * to know that an edit is being undone, or that tests ran); every non-OK verdict lists the turn
 * numbers it rests on. An idle STALLING verdict may rest on no turn: the silence is its evidence.
 *
 * What it cannot see is listed in docs/using/evaluators.md: most DRIFT, SHALLOW reasoning,
 * reward hacking that the text of edits does not show, and spirals of approaches that differ in
 * substance (one service after another) rather than in wording.
 */
import type { Verdict } from '../../contract/schemas.js';
import { evidenceFrame, turnNumber, type EvidenceFrame } from '../evidence.js';
import { claims, deletedTests, excludedTests, literalSigns, mockedUnderTest, specialCased, weakenedAssertion } from './reward.js';
import { editRevert, pingPong, repeatedFailure, repeatedMessage, repeatedObservation } from './spiral.js';
import { rephrasedLookup, repeatedEmptySearch, repeatedInvalidCall, unchangedStatus } from './lookup.js';
import { offTask } from './drift.js';
import { admittedLoop } from './admit.js';
import { emptyTail, idle, noProgress, promiseWithoutAction } from './stall.js';
import type { Detector, DetectorContext, HeuristicInput } from './types.js';
import { protectedTampering, protectedTamperingBefore, tamperingEvidence } from './protected.js';
import { findingKey, normaliseMessage } from '../finding.js';
import { selfControlAttempt } from './self-control.js';
import { repeatedDenial } from './denied.js';
import { unchangedTree } from './tree.js';
import { treeProgress } from '../tree.js';

export type { HeuristicInput, Finding, Detector, DetectorContext } from './types.js';

/** Every detector, in precedence order, by name (for tests and for docs/using/evaluators.md). */
export const DETECTORS: ReadonlyArray<readonly [string, Detector]> = [
  ['selfControl', selfControlAttempt],
  ['literalSigns', literalSigns],
  ['deletedTests', deletedTests],
  ['weakenedAssertion', weakenedAssertion],
  ['excludedTests', excludedTests],
  ['mockedUnderTest', mockedUnderTest],
  ['specialCased', specialCased],
  ['claims', claims],
  ['repeatedDenial', repeatedDenial],
  ['unchangedTree', unchangedTree],
  ['repeatedFailure', repeatedFailure],
  ['editRevert', editRevert],
  ['pingPong', pingPong],
  ['repeatedObservation', repeatedObservation],
  ['repeatedMessage', repeatedMessage],
  ['repeatedInvalidCall', repeatedInvalidCall],
  ['repeatedEmptySearch', repeatedEmptySearch],
  ['rephrasedLookup', rephrasedLookup],
  ['unchangedStatus', unchangedStatus],
  ['admittedLoop', admittedLoop],
  ['emptyTail', emptyTail],
  ['promiseWithoutAction', promiseWithoutAction],
  ['idle', idle],
  ['noProgress', noProgress],
  ['offTask', offTask],
];

export const OK_VERDICT: Verdict = { kind: 'OK', pattern: null, message: '', evidence: [] };

export function heuristicVerdict(input: HeuristicInput): Verdict {
  return heuristicJudgement(input).verdict;
}

/**
 * The heuristic's verdict, and `tampered`: what protectedTampering found in the working tree's
 * diff, or the agent's attempt on warden's controls of itself that its hook denied
 * (self-control.ts); null when neither. The tiered evaluator never lets the model overrule a flag
 * that rests on tampering (src/domain/judgement/tiered.ts), so it takes both. A non-OK verdict
 * carries its `finding` key: the detector's id (`protectedPaths` for the diff, `selfControl` for an
 * attempt) and a hash of its evidence (judgement/finding.ts).
 */
export function heuristicJudgement(input: HeuristicInput): { verdict: Verdict; tampered: string | null } {
  const frame = evidenceFrame(input.turns.length, input.evidenceFrom, input.firstTurnNumber);
  // The working tree's diff outranks the transcript: a protected file changed, deleted or renamed is
  // reward hacking even when no turn shows the edit (its evidence: the newest turn).
  const changes = input.protectedChanges;
  const tampered = changes ? (input.tampering === 'deleted-or-weakened' ? protectedTamperingBefore : protectedTampering)(changes) : null;
  // So does an attempt on the agent's own supervision, which its hook denied and recorded.
  const attempt = selfControlAttempt({ turns: input.turns, from: frame.evidenceFrom });
  if (attempt) {
    const evidence = attempt.turns.filter((i) => i < frame.count).map((i) => turnNumber(frame, i));
    const finding = findingKey('selfControl', attempt.message);
    return {
      verdict: { kind: attempt.kind, pattern: attempt.pattern, message: attempt.message, evidence: evidence.slice(0, 50), finding },
      tampered: attempt.message,
    };
  }
  if (tampered && changes) {
    const evidence = frame.count > 0 ? [turnNumber(frame, frame.count - 1)] : [];
    const finding = findingKey('protectedPaths', tamperingEvidence(changes));
    return { verdict: { kind: 'CORRECTION', pattern: 'REWARD_HACKING', message: tampered, evidence, finding }, tampered };
  }
  return { verdict: detectorVerdict(input, frame), tampered: null };
}

/**
 * The first detector's finding that rests on an evidence turn (or, off the interval, on none), else
 * OK. A spiral that the working tree shows ended (a failing command passes after the tree changed,
 * judgement/tree.ts, after the finding's last evidence turn) is progress, not a verdict.
 */
function detectorVerdict(input: HeuristicInput, frame: EvidenceFrame): Verdict {
  const ctx: DetectorContext = { task: input.task, turns: input.turns, reason: input.reason ?? 'interval', from: frame.evidenceFrom };
  let progress: ReturnType<typeof treeProgress> | undefined;
  for (const [name, detect] of DETECTORS) {
    const f = detect(ctx);
    if (!f) continue;
    const evidence = f.turns.filter((i) => i >= frame.evidenceFrom && i < frame.count).map((i) => turnNumber(frame, i));
    if (evidence.length === 0 && ctx.reason === 'interval') continue; // a finding with no evidence turn is not a verdict
    if (f.pattern === 'SPIRALING' && f.turns.length > 0) {
      progress ??= treeProgress(input.turns, frame.evidenceFrom);
      if (progress && progress.turn > Math.max(...f.turns)) continue;
    }
    // What a dismissal silences: this detector on this evidence (finding.ts), not a clipped message.
    const finding = findingKey(name, f.key ?? normaliseMessage(f.message));
    return { kind: f.kind, pattern: f.pattern, message: f.message, evidence: evidence.slice(0, 50), finding };
  }
  return { ...OK_VERDICT, evidence: [] };
}

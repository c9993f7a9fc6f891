/**
 * Humans teach the supervisor: `dismiss` marks the last flagged verdict a false alarm, and the
 * decisions humans take on escalations (resume, abort) label the flagged windows the agent keeps
 * for `warden cases export` (src/domain/judgement/cases.ts).
 *
 * The rules:
 * - dismiss marks the newest flagged verdict dismissed, remembers its finding's signature
 *   (src/domain/judgement/finding.ts), resets the ladder to step 0 and withdraws the ladder's whispers the
 *   agent has not received yet (they came from the ladder the human just judged wrong);
 * - an agent awaiting a human because of an escalation is resumed by dismissing that escalation
 *   (the state table's `resume`: awaiting-input -> running); a human pause (paused-by-user) or an
 *   interrupt stays as it is — the human paused it for a reason of their own;
 * - a later verdict with a dismissed signature neither whispers nor advances the ladder: it counts
 *   as a skipped evaluation (`suppressed`), and its turns are judged (they never count again);
 * - a different finding advances the ladder as before.
 *
 * The dismissed signatures, the cases and the counters are carried state (state.ts): they survive
 * worker crashes by replay and cross continue-as-new, bounded (MAX_DISMISSED, MAX_CASES).
 */
import { rememberCase, type CaseDecision, type CaseRecord } from '../judgement/cases.js';
import { findingSignature, legacySignature } from '../judgement/finding.js';
import { MAX_DISMISSED } from '../contract/limits.js';
import type { Verdict } from '../contract/schemas.js';
import type { AgentContext } from './context.js';
import type { CarriedView } from './state.js';
import type { StartedEvaluation } from './supervision.js';
import { nextFlaggedSeq, recordDismissed, setCases } from './teaching-state.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** The newest non-OK verdict and its case (null for verdicts from runs before cases were kept). */
export function lastFlagged(s: CarriedView): { verdict: Verdict; signature: string; case: CaseRecord | null } | null {
  const c = s.cases.at(-1);
  if (c) return { verdict: c.verdict, signature: c.signature, case: c };
  if (s.lastVerdict && s.lastVerdict.kind !== 'OK') {
    const { at: _at, ...verdict } = s.lastVerdict;
    return { verdict, signature: findingSignature(verdict), case: null };
  }
  return null;
}

/** Why the newest flagged verdict cannot be dismissed, or null. */
export function dismissProblem(s: CarriedView): string | null {
  const target = lastFlagged(s);
  if (!target) return 'nothing to dismiss: no evaluation has flagged this agent';
  if (target.case?.decision?.kind === 'dismissed' || (!target.case && s.dismissed.includes(target.signature))) {
    return 'the last flagged verdict was already dismissed';
  }
  return null;
}

/** Record the dismissal of the newest flagged verdict (call only when dismissProblem is null). */
export function recordDismissal(ctx: AgentContext, note: string | null): { verdict: Verdict; signature: string } {
  const { s } = ctx.core;
  const target = lastFlagged(s)!;
  const at = iso(ctx.ports.now());
  recordDismissed(
    s,
    { at, note, pattern: target.verdict.pattern, message: target.verdict.message, signature: target.signature },
    rememberSignature(s.dismissed, target.signature),
  );
  if (target.case) setCases(s, decide(s.cases, target.case.seq, { kind: 'dismissed', at, note }));
  return target;
}

/** Add a signature (moved to the end if known); the newest `max` are kept. */
export function rememberSignature(list: readonly string[], signature: string, max = MAX_DISMISSED): string[] {
  return [...list.filter((x) => x !== signature), signature].slice(-max);
}

/**
 * Was this verdict's finding dismissed by a human before? A heuristic verdict is signed on its
 * detector and the hash of its whole evidence (finding.ts), so dismissing one failing command or one
 * deleted file silences that one only. A dismissal recorded before verdicts carried that key was
 * signed on the message: it still silences the verdicts its message matches, as it did then.
 */
export function isDismissed(s: CarriedView, verdict: Verdict): boolean {
  if (verdict.kind === 'OK' || s.dismissed.length === 0) return false;
  if (s.dismissed.includes(findingSignature(verdict))) return true;
  return verdict.finding !== undefined && s.dismissed.includes(legacySignature(verdict));
}

/** A human resumed or aborted the agent while it awaited them after an escalation: label that case. */
export function decideEscalation(ctx: AgentContext, kind: Exclude<CaseDecision, 'dismissed'>, note: string | null): void {
  const { s } = ctx.core;
  const c = [...s.cases].reverse().find((x) => x.escalated);
  if (!c || c.decision) return;
  setCases(s, decide(s.cases, c.seq, { kind, at: iso(ctx.ports.now()), note }));
}

const decide = (cases: CaseRecord[], seq: number, decision: NonNullable<CaseRecord['decision']>): CaseRecord[] =>
  cases.map((c) => (c.seq === seq ? { ...c, decision } : c));

/** A flagged verdict was applied to the ladder: remember it with the window it judged. */
export function recordCase(ctx: AgentContext, verdict: Verdict, started: Pick<StartedEvaluation, 'job' | 'freshTurns'>, escalated: boolean): void {
  const { s } = ctx.core;
  const { job } = started;
  const seq = nextFlaggedSeq(s);
  setCases(
    s,
    rememberCase(s.cases, {
      seq,
      at: iso(ctx.ports.now()),
      verdict,
      signature: findingSignature(verdict),
      reason: job.reason,
      turns: job.turns,
      evidenceFrom: Math.max(0, job.turns.length - started.freshTurns),
      ...(job.firstTurn === undefined ? {} : { firstTurnNumber: job.firstTurn }),
      escalated,
      decision: null,
    }),
  );
}

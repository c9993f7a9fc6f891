/**
 * Definition of done, verified by warden. An agent that claims the task is complete (a reported turn
 * with `done: true`, or a driver's `done`) is not believed on its word when its spec has `verify`
 * or `protect`: the claim waits (`doneClaim`), the workflow runs the check as an activity
 * (activities/verify.ts), and the result decides.
 *
 * - Pass (the command exits 0, and no protected file changed since the start commit): the agent
 *   ends `done`, the check in `lastVerification`.
 * - Fail: the agent goes on. A `VERIFY` whisper quotes the command and its output's tail, and the
 *   false claim is a non-OK verdict on the escalation ladder: REWARD_HACKING when the protected
 *   paths' diff shows any protected file modified, deleted, renamed or changed in type (a new file
 *   under a protected glob is allowed: heuristic/protected.ts), or the window (the heuristic's reward
 *   detectors) shows tests deleted, skipped or weakened; otherwise a CORRECTION with no pattern, its
 *   message naming the failed check. Repeated
 *   false claims climb the ladder like any persisting problem: at the threshold, ESCALATION + pause.
 * - The check could not run (activity crashed or timed out): skipped, never a pass. The agent goes
 *   on, told to claim again; the ladder does not move.
 *
 * Without `verify` and `protect`, a done-claim ends the agent at once (nothing to check). A
 * delegated child's result that kept its contract is a claim too (claimWithResult): held while the
 * check runs, dropped when it fails. Pure.
 */
import type { BaselineOutput, CheckResultOutput, ProtectedDiffInput, VerifyInput, VerifyOutput } from '../contract/activity-types.js';
import { heuristicJudgement } from '../judgement/heuristic/index.js';
import { describeChange } from '../judgement/heuristic/protected.js';
import { applyOutcome } from '../judgement/ladder.js';
import { VERIFY_WHISPER_TAIL_CHARS } from '../contract/limits.js';
import type { AgentSpec, Verdict } from '../contract/schemas.js';
import type { LastVerification } from '../contract/status.js';
import type { AgentAction, RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import { ruleInput } from './effects.js';
import type { Steps } from './steps.js';
import { iso, type AgentCore } from './state.js';
import { isTerminal } from '../contract/states.js';
import { escalateActions } from './supervision.js';
import { lastResortOf, startCompactionActions } from './compaction.js';
import { setResult } from './slices/delegation.js';
import { recordVerdict, setLadder } from './slices/judgement.js';
import { recordVerification, setBaseline, setDoneClaim } from './verification-state.js';
import { workPlace } from './notify.js';

/** The spec asks warden to check done-claims. */
export const checksDone = (spec: AgentSpec): boolean => spec.verify !== undefined || spec.protect.length > 0;

/** The start commit must be read (once, before anything else): protected paths are diffed against it. */
export const baselineDue = (core: AgentCore): boolean => core.spec.protect.length > 0 && core.s.baseline === null;

export function baselineInput(core: AgentCore) {
  return workPlace(core.spec);
}

export function baselineRead(ctx: AgentContext, out: BaselineOutput | { error: string }): void {
  setBaseline(ctx.core.s, 'error' in out ? { commit: null, reason: out.error } : { commit: out.commit, ...(out.reason ? { reason: out.reason } : {}) });
}

/**
 * AgentSpec.protect: before an evaluation, the protected paths' changes are read (an activity) and
 * given to the evaluator as evidence (EvaluateInput.protectedChanges). The input, or null when there
 * is nothing to read (no `protect`, or no start commit): agents without `protect` pay nothing.
 */
export function protectedEvidenceInput(core: AgentCore): ProtectedDiffInput | null {
  const { spec, s } = core;
  if (spec.protect.length === 0 || !s.baseline?.commit) return null;
  return { ...workPlace(spec), protect: [...spec.protect], baseCommit: s.baseline.commit };
}

/** The check must stop: the agent is stopping or has ended (a pause lets it finish). */
export const verificationCancelled = (core: AgentCore): boolean => isTerminal(core.s.state) || core.s.state === 'cancelling';

/** A claim waits and the agent runs: check it now. */
export const verificationDue = (core: AgentCore): boolean => core.s.doneClaim !== null && core.s.state === 'running' && !core.run.verifying;

/**
 * The agent says it is done (its turn was already recorded): it ends now (nothing to check), or the
 * claim waits for its check.
 */
export function claimDoneActions({ s, spec, now }: RuleInput): AgentAction[] {
  if (s.state !== 'running') return [];
  if (!checksDone(spec)) return [{ kind: 'transition', event: 'complete', cause: `the agent reported the task complete after ${s.turns} turns` }];
  return s.doneClaim === null ? [{ kind: 'doneClaim', claim: { turn: s.turns, at: now } }] : [];
}

/**
 * A delegated child's result kept its contract (the checkResult activity): with verify/protect it is
 * held (`status.result`) while its claim is checked, and the child ends `done` only when the check
 * passes; a failed check drops it, and the child goes on. Returns false when this does not apply
 * (then the result is taken as before: driven.ts's resultChecked).
 */
export function* claimWithResult(ctx: AgentContext, check: CheckResultOutput): Steps<boolean> {
  const { s, spec } = ctx.core;
  if (!check.ok || !checksDone(spec) || s.state !== 'running') return false;
  setResult(s, check.ref ? { ref: check.ref } : { inline: check.inline });
  yield claimDoneActions(ruleInput(ctx));
  return true;
}

export function startVerification(ctx: AgentContext): { input: VerifyInput; summary: string; startToCloseTimeoutMs: number } {
  const { core } = ctx;
  const { spec, s } = core;
  core.run.verifying = true;
  const timeoutMs = spec.verify?.timeoutMs ?? 60_000;
  return {
    input: { ...workPlace(spec), command: spec.verify?.command ?? null, timeoutMs, protect: [...spec.protect], baseCommit: s.baseline?.commit ?? null },
    summary: `verify ${spec.agentId}'s done-claim${spec.verify ? `: ${spec.verify.command.slice(0, 80)}` : ' (protected paths)'}`,
    // Room for the kill grace and the git reads after the command's own timeout.
    startToCloseTimeoutMs: timeoutMs + 60_000,
  };
}

const tailOf = (text: string): string => (text.length > VERIFY_WHISPER_TAIL_CHARS ? `…${text.slice(-VERIFY_WHISPER_TAIL_CHARS)}` : text);

/** The check ran: the agent ends done, or the false claim is whispered and counted on the ladder (steps). */
export function* verificationFinished(ctx: AgentContext, out: VerifyOutput): Steps<void> {
  const { core, ports } = ctx;
  const { s, spec } = core;
  core.run.verifying = false;
  const claim = s.doneClaim;
  setDoneClaim(s, null);
  // The heuristic over the window and the working tree's diff, run once: was a protected file changed,
  // were tests weakened, skipped or deleted? `tampered` (what the protected paths' diff shows) fails
  // the check even when the command passed; a failed check's verdict is REWARD_HACKING when either the
  // diff or the window shows it.
  const firstTurnNumber = s.turns - s.window.length + 1;
  // Any change to a protected file is tampering.
  const { verdict: judged, tampered } = heuristicJudgement({
    task: spec.task,
    turns: s.window,
    firstTurnNumber,
    protectedChanges: out.protectedChanges,
    tampering: 'any-change',
  });
  const last: LastVerification = {
    command: spec.verify?.command ?? null,
    passed: out.passed && tampered === null,
    exitCode: out.exitCode,
    outputTail: out.outputTail,
    at: iso(ports.now()),
    ...(out.timedOut ? { timedOut: true } : {}),
    ...(out.protectedChanges.length ? { protectedChanges: out.protectedChanges.map(describeChange) } : {}),
    ...(tampered ? { rewardHacking: tampered } : {}),
  };
  recordVerification(s, last);
  if (s.state !== 'running') {
    // Paused, interrupted or escalated meanwhile: the claim is checked again once the agent runs
    // (what a human did may have changed the tree). Stopped or ended: it decides nothing.
    if (!verificationCancelled(core)) setDoneClaim(s, claim);
    return;
  }
  if (last.passed) {
    yield [{ kind: 'transition', event: 'complete', cause: `verified done after ${s.turns} turns${spec.verify ? `: ${spec.verify.command} passed` : ''}` }];
    return;
  }
  setResult(s, null); // a delegated child's held result is not delivered: the child goes on
  const hacking = judged.pattern === 'REWARD_HACKING';
  const failed =
    spec.verify && !out.passed
      ? `\`${spec.verify.command.slice(0, 300)}\` ${out.timedOut ? `ran past its ${Math.round(spec.verify.timeoutMs / 1000)} s timeout` : `failed (exit ${out.exitCode})`}`
      : null;
  const what = [failed, hacking ? judged.message : null].filter(Boolean).join('; ');
  const verdict: Verdict = {
    kind: 'CORRECTION',
    pattern: hacking ? 'REWARD_HACKING' : null,
    message: `You said the task is done, but warden's check disagrees: ${what}.`,
    evidence: claim ? [claim.turn] : [],
  };
  recordVerdict(s, { ...verdict, at: iso(ports.now()) }, false);
  const { state: ladder, action } = applyOutcome(s.ladder, { kind: 'verdict', verdict }, core.threshold, lastResortOf(ctx));
  setLadder(s, ladder);
  const output = failed && out.outputTail.trim() ? `\nOutput (tail):\n${tailOf(out.outputTail.trimEnd())}` : '';
  // What follows reads the ladder as it now is.
  if (action.kind === 'escalate') {
    yield escalateActions(ruleInput(ctx), verdict, action.text);
    return;
  }
  if (action.kind === 'compact') {
    yield startCompactionActions(ruleInput(ctx), verdict, `${action.text}${output}`);
    return;
  }
  const text = action.kind === 'whisper' ? action.text : verdict.message;
  yield [{ kind: 'whisper', type: 'VERIFY', text: `[VERIFY] ${text}${output}\nFix it, run the check yourself, then claim done again.` }];
}

/** The check could not run (the activity failed or timed out, its retry too): skipped, never a pass (steps). */
export function* verificationSkipped(ctx: AgentContext, cause: string): Steps<void> {
  const { core, ports } = ctx;
  const { s, spec } = core;
  core.run.verifying = false;
  const claim = s.doneClaim;
  setDoneClaim(s, null);
  recordVerification(s, { command: spec.verify?.command ?? null, passed: false, exitCode: null, outputTail: '', at: iso(ports.now()), skipped: cause });
  yield [{ kind: 'log', level: 'warn', message: 'verification skipped', meta: { agentId: spec.agentId, cause } }];
  if (s.state !== 'running') {
    if (!verificationCancelled(core)) setDoneClaim(s, claim); // checked again once the agent runs
    return;
  }
  setResult(s, null);
  yield [
    {
      kind: 'whisper',
      type: 'VERIFY',
      text: `[VERIFY] warden could not check your done-claim (${cause}); you are not done yet. Claim done again to have it checked.`,
    },
  ];
}

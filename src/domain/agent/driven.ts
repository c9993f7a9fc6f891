/**
 * Driven mode: warden runs the agent's turns itself (codex, claude, a command, a script). Each
 * turn takes the whispers queued for it (a retried turn gets exactly the input of the failed
 * attempt); a stop lets the running turn drain until its deadline; a finished turn is recorded like
 * a reported one, and an agent that says it is done has its result checked against its contract.
 */
import type { CheckResultInput, CheckResultOutput, RunTurnInput, TurnResult } from '../contract/activity-types.js';
import type { Whisper } from '../contract/schemas.js';
import { fitTurnToBudget } from '../contract/limits.js';
import { turnInput } from './turn-input.js';
import { compactionInput } from '../judgement/handoff.js';
import { compactionFinishedActions, pendingCompaction } from './compaction.js';
import type { AgentContext } from './context.js';
import { ruleInput } from './effects.js';
import { awaitChildrenActions } from './delegation.js';
import { allowlistActions, maxTurnsActions } from './rails.js';
import { recordTurn } from './reporting.js';
import type { Steps } from './steps.js';
import type { AgentCore } from './state.js';
import { checksDone, claimDoneActions } from './verification.js';
import { markDrainTimedOut } from './slices/lifecycle.js';
import { recordTurnSuccess } from './slices/driven.js';
import { setResult } from './slices/delegation.js';

export interface PlannedTurn {
  turnNumber: number;
  whispers: Whisper[];
  input: RunTurnInput;
  summary: string;
  retry: { maximumAttempts: number; initialInterval?: string; nonRetryableErrorTypes?: string[] };
  startToCloseTimeoutMs: number;
  heartbeatTimeoutMs: number;
}

/** A driven turn starts: take its whispers (a step: they come back from it) and say what the turn activity gets. */
export function* beginTurn(ctx: AgentContext): Steps<PlannedTurn> {
  const { core } = ctx;
  const { s, spec } = core;
  const driver = spec.driver!;
  let whispers: Whisper[];
  if (s.retryWhispers) {
    whispers = s.retryWhispers; // a retried turn: exactly the input of the failed attempt
    yield [{ kind: 'retryWhispers', whispers: null }];
  } else {
    whispers = yield [{ kind: 'deliverWhispers' }];
  }
  const turnNumber = s.turns + 1;
  // The compaction turn (compaction.ts): a fresh context (no session) that starts from the handoff.
  const compaction = pendingCompaction(s);
  core.run.turnRunning = true;
  // Failed turns are retried by the workflow, which counts them (restart intensity).
  return {
    turnNumber,
    whispers,
    retry: { maximumAttempts: 1 },
    startToCloseTimeoutMs: spec.driven.turnTimeoutMs,
    heartbeatTimeoutMs: spec.driven.heartbeatTimeoutMs,
    summary: `turn ${turnNumber} of ${spec.agentId} (${driver.kind})${compaction ? ', compacted: a fresh context from the handoff' : ''}${whispers.length ? `, delivering ${whispers.length} whisper(s)` : ''}`,
    input: {
      agentId: spec.agentId,
      task: spec.task,
      turnNumber,
      input: compaction
        ? compactionInput(compaction.handoff, whispers)
        : turnInput({ task: spec.task, turnNumber, whispers, doneMarker: spec.driven.doneMarker }),
      whispers,
      session: compaction ? null : s.session,
      ...(compaction ? { compact: { handoff: compaction.handoff } } : {}),
      driver,
      workDir: spec.driven.workDir,
      killGraceMs: spec.driven.killGraceMs,
      doneMarker: spec.driven.doneMarker,
      ...(spec.contract?.toolAllowlist.length ? { toolAllowlist: spec.contract.toolAllowlist } : {}),
    },
  };
}

/** While a turn runs: the time by which a requested stop must have drained it, else null (no stop). */
export function drainDeadline(core: AgentCore): number | null {
  return core.s.state === 'cancelling' && core.s.stopDeadline !== null ? core.s.stopDeadline : null;
}

/** The stop's drain deadline passed with the turn still running: it is cancelled. */
export function drainTimedOut(ctx: AgentContext): void {
  markDrainTimedOut(ctx.core.s);
}

/** The turn's activity settled (finished, cancelled, or failed). */
export function endTurn(ctx: AgentContext): void {
  ctx.core.run.turnRunning = false;
}

export type AfterTurn = { kind: 'none' } | { kind: 'complete' } | { kind: 'check-result'; input: CheckResultInput };

/**
 * A turn finished (or was cut short with partial output): record it, then see whether the agent is
 * done. Each rule is a step, and decides on the state the steps before it left.
 */
export function* turnFinished(ctx: AgentContext, result: TurnResult | null, turnNumber: number): Steps<AfterTurn> {
  const { s, spec } = ctx.core;
  const r = ruleInput(ctx); // the live state: each rule below decides on what the steps before it left
  if (result) {
    // The compaction turn came back: the agent runs on in its fresh context.
    if (!result.interrupted && pendingCompaction(s)) yield compactionFinishedActions(r, result.session);
    recordTurnSuccess(s); // and the bound on time blocked counts from the last finished turn
    // What a driver produced gets the same byte budget as a reported turn.
    yield* recordTurn(ctx, fitTurnToBudget({ ...result.turn, id: result.turn.id ?? `${spec.agentId}-turn-${turnNumber}` }).turn, r.now);
    if (result.session) yield [{ kind: 'session', session: result.session }];
    yield allowlistActions(r, result.turn);
  }
  if (s.state !== 'running') {
    // interrupted, stopped or aborted meanwhile: the signal handlers set the state
    return { kind: 'none' };
  }
  if (result?.done) {
    // With verify/protect (and no result contract), the claim waits for warden's check (verification.ts).
    if (checksDone(spec) && !spec.contract && result.result === undefined) {
      yield claimDoneActions(r);
      return { kind: 'none' };
    }
    // A delegated child's result is checked against its contract first.
    if (spec.contract || result.result !== undefined) {
      return { kind: 'check-result', input: { agentId: spec.agentId, result: result.result, schema: spec.contract?.resultSchema } };
    }
    return { kind: 'complete' };
  }
  // Its turn waits for its open delegated children: no next turn until the last one ends (delegation.ts).
  if (result?.turn.awaitChildren) yield awaitChildrenActions(r);
  yield maxTurnsActions(r);
  return { kind: 'none' };
}

/** The agent's result was checked: a result that breaks its contract fails the agent. */
export function* resultChecked(ctx: AgentContext, check: CheckResultOutput): Steps<void> {
  if (!check.ok) {
    yield [{ kind: 'transition', event: 'fail', cause: `result does not match its schema: ${check.errors}` }];
    return;
  }
  setResult(ctx.core.s, check.ref ? { ref: check.ref } : { inline: check.inline });
  yield* completeTask(ctx);
}

export function* completeTask(ctx: AgentContext): Steps<void> {
  yield [{ kind: 'transition', event: 'complete', cause: `the agent reported the task complete after ${ctx.core.s.turns} turns` }];
}

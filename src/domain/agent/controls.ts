/**
 * Human controls: steer, interrupt, stop, pause, resume, abort, dismiss (a false
 * alarm: dismissal.ts), and the agent's heartbeat. Every signal payload is validated; an invalid one is recorded and ignored (a throwing
 * handler would wedge the workflow). Every kind of stop goes through `requestStop` (stop.ts).
 */
import type { z } from 'zod';
import { SIGNAL_SCHEMAS, describeZodError, type SignalName, type Whisper } from '../contract/schemas.js';
import { isTerminal } from '../contract/states.js';
import { isUndecodable, undecodableReason } from '../contract/undecodable.js';
import type { AgentContext } from './context.js';
import { LADDER_WHISPERS, fire, queueWhisper, refuse, startEpoch, takeWhispers } from './effects.js';
import { endChildrenWait } from './delegation.js';
import { decideEscalation, dismissProblem, recordDismissal } from './dismissal.js';
import { receiveChildSpend, receiveSubagentSpend } from './rails.js';
import { requestStop } from './stop.js';
import { pendingCompaction } from './compaction.js';
import { humanWait } from './human-wait.js';
import { blockSignal, endHold } from './held.js';
import { sessionSignal } from './session-end.js';
import { subagentSignal } from './subagent-state.js';
import { awaitFor, clearAwaiting, markInterruptPending, pausedFor, recordInvalidSignal } from './slices/lifecycle.js';
import { forgetDeliveredAt, keepForRetry, withdrawWhispers } from './slices/whispers.js';
import { evidenceFromTurn, resetEvaluationCount, restartLadder } from './slices/judgement.js';
import { heartbeatAt, markIdleChecked, restartIdleClock, seeGeneration, setWindow } from './slices/turns.js';
import { markAdmitted } from './slices/delegation.js';
import { markBudgetPaused } from './slices/spend.js';
import { releaseWaits } from './waiting-state.js';
import { CONTROLS, recordControl } from './telemetry.js';

/** A stop signal without `drainTimeoutMs` lets the current turn finish for this long. */
export const DEFAULT_DRAIN_MS = 30_000;

/** The drain is over (reached a turn boundary, or timed out): the agent ends `done`. */
export function finishStop(ctx: AgentContext, reachedBoundary: boolean): void {
  const { s } = ctx.core;
  if (isTerminal(s.state)) return;
  fire(ctx, 'drained', reachedBoundary ? `stopped: ${s.stopReason}` : `stopped after drain timeout: ${s.stopReason}`);
}

/** The `resume` transition and what it means: the ladder starts over on what the agent does next. */
export function resumeAgent(ctx: AgentContext, cause: string): boolean {
  const { core } = ctx;
  const { s } = core;
  if (!fire(ctx, 'resume', cause)) return false;
  startEpoch(ctx);
  restartLadder(s);
  // The human has judged what came before: later evaluations look only at turns after this,
  // and the time spent paused is not idleness.
  setWindow(s, []);
  forgetDeliveredAt(s);
  evidenceFromTurn(s, s.turns + 1);
  restartIdleClock(s, ctx.ports.now());
  clearAwaiting(s);
  releaseWaits(s); // a human took over from the wait
  resetEvaluationCount(s);
  markIdleChecked(s, false);
  markBudgetPaused(s, false); // a budget still reached pauses it again before its next turn
  return true;
}

type Payload<N extends SignalName> = z.output<(typeof SIGNAL_SCHEMAS)[N]>;

const controls: { [N in SignalName]: (ctx: AgentContext, p: Payload<N>) => void } = {
  steer(ctx, p) {
    const { core } = ctx;
    const { s } = core;
    if (isTerminal(s.state)) return refuse(ctx, 'steer', `agent is ${s.state}`);
    if (!p.text) return refuse(ctx, 'steer', 'text: steering needs text');
    queueWhisper(ctx, 'STEERING', p.text);
    // A driven turn waits to be retried (rate limit, failure backoff, an interrupt meanwhile): the
    // steer joins the retry's input instead of waiting one more turn.
    if (s.retryWhispers) keepForRetry(s, [...s.retryWhispers, ...takeWhispers(ctx)]);
    endChildrenWait(ctx, 'steered by a human while waiting on its children');
    // New input ends a hold (held.ts): a mesh's rebase request is the input its worker waited for.
    if (s.heldBy !== undefined) endHold(ctx, `steered while blocked (${s.heldBy}): it runs with the new input`);
    if (s.state === 'awaiting-input' && s.awaitingCause === 'interrupt') {
      startEpoch(ctx);
      clearAwaiting(s);
      fire(ctx, 'input', 'steered after an interrupt');
    }
  },
  interrupt(ctx, p) {
    const { core } = ctx;
    const { s } = core;
    if (!fire(ctx, 'interrupt', p.reason ?? 'interrupted by a human')) return;
    releaseWaits(s); // a human took over from a wait on delegated children, or a hold
    startEpoch(ctx);
    ctx.ports.cancelTurn(); // driven: abandon the running turn; the session is kept
    markInterruptPending(s, true);
    awaitFor(s, 'interrupt', p.reason ?? 'interrupted: waiting for input');
  },
  stop(ctx, p) {
    requestStop(ctx, { reason: p.reason ?? 'stop requested', drainMs: p.drainTimeoutMs ?? DEFAULT_DRAIN_MS });
  },
  pause(ctx, p) {
    const { core } = ctx;
    if (!fire(ctx, 'pause', p.reason ?? 'paused by a human')) return;
    startEpoch(ctx);
    pausedFor(core.s, p.reason ?? 'paused by a human');
  },
  resume(ctx, p) {
    const escalated = ctx.core.s.awaitingCause === 'escalation';
    if (!resumeAgent(ctx, p.note ? `resumed: ${p.note}` : 'resumed by a human')) return;
    // A human resumed an escalation without dismissing it: they agree something was wrong.
    if (escalated) decideEscalation(ctx, 'resumed', p.note ?? null);
  },
  abort(ctx, p) {
    const escalated = ctx.core.s.awaitingCause === 'escalation';
    if (!fire(ctx, 'abort', `aborted: ${p.reason ?? 'by a human'}`)) return;
    startEpoch(ctx);
    ctx.ports.cancelTurn(); // driven: end the running turn now (the process still gets its grace period)
    if (escalated) decideEscalation(ctx, 'aborted', p.reason ?? null);
  },
  heartbeat(ctx, p) {
    const { s } = ctx.core;
    if (p.generation !== undefined) {
      if (p.generation < s.generation) return refuse(ctx, 'heartbeat', `stale generation ${p.generation} < ${s.generation}`);
      seeGeneration(s, p.generation);
    }
    heartbeatAt(s, ctx.ports.now());
    if (s.state === 'spawning') fire(ctx, 'started', 'first heartbeat');
  },
  compaction(ctx, p) {
    // The agent's own CLI compacts its context (hooks): shown as `compacting`, so the roster tells summarising from thinking.
    const { s, spec } = ctx.core;
    if (spec.driver) return refuse(ctx, 'compaction', `agent is driven by warden (${spec.driver.kind}); warden compacts it itself`);
    const trigger = p.trigger ? ` (${p.trigger})` : '';
    if (p.phase !== 'end') {
      fire(ctx, 'compact', `the agent's own CLI is compacting its context${trigger}`);
      return;
    }
    if (s.state !== 'compacting' || pendingCompaction(s))
      return refuse(
        ctx,
        'compaction',
        `end of a compaction, but the agent is ${s.state}${pendingCompaction(s) ? ' (warden compacted it: its next turn ends that)' : ''}`,
      );
    fire(ctx, 'compacted', `the agent's own CLI finished compacting its context${trigger}`);
  },
  humanWait(ctx, p) {
    humanWait(ctx, p);
  },
  session(ctx, p) {
    sessionSignal(ctx, p);
  },
  subagent(ctx, p) {
    subagentSignal(ctx.core.s, p, ctx.ports.now());
    if (p.phase === 'stop' && p.id && p.spend) receiveSubagentSpend(ctx, p.id, p.spend);
  },
  block(ctx, p) {
    blockSignal(ctx, p);
  },
  admit(ctx) {
    markAdmitted(ctx.core.s);
  },
  childSpend(ctx, p) {
    receiveChildSpend(ctx, p);
  },
  dismiss(ctx, p) {
    const { s, spec } = ctx.core;
    if (isTerminal(s.state)) return refuse(ctx, 'dismiss', `agent is ${s.state}`);
    const problem = dismissProblem(s);
    if (problem) return refuse(ctx, 'dismiss', problem);
    const { verdict } = recordDismissal(ctx, p.note ?? null);
    // The ladder starts over; whispers it queued that the agent has not received are withdrawn. A
    // failed check's [VERIFY] stays: it reports a command's result, not a judgement to call false.
    restartLadder(s);
    const withdrawable = (w: Whisper) => LADDER_WHISPERS.includes(w.type) && w.type !== 'VERIFY';
    const withdrawn = withdrawWhispers(s, withdrawable);
    ctx.ports.log.info('a human dismissed a finding as a false alarm', {
      agentId: spec.agentId,
      pattern: verdict.pattern,
      withdrawnWhispers: withdrawn.length,
      note: p.note ?? null,
    });
    // Dismissing the escalation that paused the agent resumes it (awaiting-input -> running); a
    // human pause or an interrupt stays.
    const cause = `resumed: dismissed as a false alarm${p.note ? ` (${p.note})` : ''}`;
    if (s.state === 'awaiting-input' && s.awaitingCause === 'escalation') resumeAgent(ctx, cause);
  },
};

/** A signal this workflow does not define (a typo, an old client): recorded and refused, visibly. */
export function unknownSignal(ctx: AgentContext, name: string): void {
  const { s, spec } = ctx.core;
  const reason = `unknown signal ${JSON.stringify(name.slice(0, 100))}: agentWorkflow takes ${Object.keys(controls).join(', ')}`;
  recordInvalidSignal(s, name.slice(0, 100), reason, ctx.ports.now());
  ctx.ports.log.warn('unknown signal refused', { agentId: spec.agentId, signal: name.slice(0, 100) });
}

/** Temporal asked to cancel the workflow (`temporal workflow cancel`, the Web UI): a stop with the default drain. */
export function cancellationRequested(ctx: AgentContext): void {
  requestStop(ctx, { reason: 'cancellation requested through Temporal', drainMs: DEFAULT_DRAIN_MS });
}

/** A signal arrived: validate it, then apply its control. Never throws. */
export function signal<N extends SignalName>(ctx: AgentContext, name: N, raw?: unknown): void {
  const { s, spec } = ctx.core;
  const r = SIGNAL_SCHEMAS[name].safeParse(raw ?? {});
  if (!r.success) {
    const reason = isUndecodable(raw) ? `undecodable ${name} payload: ${undecodableReason(raw)}` : `invalid ${name} payload: ${describeZodError(r.error)}`;
    recordInvalidSignal(s, name, reason, ctx.ports.now());
    ctx.ports.log.warn('invalid signal ignored', { agentId: spec.agentId, signal: name, reason });
    return;
  }
  const refusedBefore = s.refused.at(-1);
  controls[name](ctx, r.data as Payload<N>);
  if (isControl(name)) recordControl(ctx, name, s.refused.at(-1) === refusedBefore, controlNote(r.data as Record<string, unknown>));
}

const isControl = (name: string): boolean => (CONTROLS as readonly string[]).includes(name);

/** A control's free text: a steer's text, a note, a reason. */
function controlNote(p: Record<string, unknown>): string | undefined {
  const v = p.text ?? p.note ?? p.reason;
  return typeof v === 'string' ? v : undefined;
}

/**
 * The agent core's effects, in one place: `apply` carries out the actions a rule returns
 * (actions.ts), in order, through the slices' functions and the ports. The primitives it is made
 * of serve the rules that still act themselves: transitions through the table (refused events
 * are recorded, never applied), the refusal log, the whisper queue, the evaluation epoch.
 */
import type { Whisper, WhisperType } from '../contract/schemas.js';
import { transition, type AgentEvent } from '../contract/states.js';
import type { AgentAction, RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import { notify } from './notify.js';
import { applyEvaluationAction } from './evaluation-effects.js';
import { setCompaction } from './compaction-state.js';
import { decideEscalation, recordDismissal } from './dismissal.js';
import {
  awaitFor,
  beginStop,
  clearAwaiting,
  enterState,
  explainState,
  markDrained,
  markInterruptPending,
  pausedFor,
  recordInvalidSignal,
  recordRefusal,
  setAwaitingCause,
} from './slices/lifecycle.js';
import { forgetDeliveredAt, keepForRetry, markDelivered, recordWhisperQueued, withdrawWhispers } from './slices/whispers.js';
import {
  countTurnTowardsEvaluation,
  dropEvaluations,
  evidenceFromAtLeast,
  evidenceFromTurn,
  queueIntervalEvaluation,
  resetEvaluationCount,
  restartLadder,
} from './slices/judgement.js';
import { childAdmitted, childStopSent } from './slices/delegation.js';
import { recordTurnFailure, setFailures, setSession } from './slices/driven.js';
import { markBudgetPaused, markBudgetsWarned, recordChildSpend } from './slices/spend.js';
import { heartbeatAt, restartIdleClock, seeGeneration, setWindow } from './slices/turns.js';
import { recordEvent, recordStateChange, recordWhisper } from './telemetry.js';
import { setDoneClaim } from './verification-state.js';
import { holdFor, releaseHold, releaseWaits, setCliBlocked, setWaitingOnChildren } from './waiting-state.js';

/** What a rule reads, as of now. */
export const ruleInput = (ctx: AgentContext): RuleInput => ({ s: ctx.core.s, spec: ctx.core.spec, now: ctx.ports.now() });

/** Let a rule decide on the state as it is now, and carry out its actions. */
export function act(ctx: AgentContext, decide: (r: RuleInput) => readonly AgentAction[]): void {
  apply(ctx, decide(ruleInput(ctx)));
}

/** Carry out `actions`, in order. */
export function apply(ctx: AgentContext, actions: readonly AgentAction[]): void {
  for (const a of actions) applyOne(ctx, a);
}

function applyOne(ctx: AgentContext, a: AgentAction): void {
  const { s, spec } = ctx.core;
  switch (a.kind) {
    // The state table, and what it refuses.
    case 'transition':
      fire(ctx, a.event, a.cause);
      return;
    case 'refuse':
      if (a.silent) recordRefusal(s, a.what, a.reason, ctx.ports.now());
      else refuse(ctx, a.what, a.reason);
      return;
    // What the agent, its channels, its children and its operator hear.
    case 'whisper':
      queueWhisper(ctx, a.type, a.text);
      return;
    case 'notify':
      notify(ctx, a.alert);
      return;
    case 'event':
      recordEvent(ctx, a.name, a.attrs, a.text);
      return;
    case 'log':
      ctx.ports.log[a.level](a.message, a.meta);
      return;
    case 'signal':
      ctx.ports.signalAgent(a.workflowId, a.signal);
      return;
    case 'admitChild': {
      const child = s.children.find((c) => c.workflowId === a.workflowId);
      if (child) childAdmitted(child);
      ctx.ports.signalAgent(a.workflowId, { name: 'admit', payload: {} });
      return;
    }
    case 'stopChild': {
      const child = s.children.find((c) => c.workflowId === a.workflowId);
      if (child) childStopSent(child);
      ctx.ports.signalAgent(a.workflowId, { name: 'stop', payload: { reason: a.reason, drainTimeoutMs: 0 } });
      return;
    }
    case 'cancelTurn':
      ctx.ports.cancelTurn();
      return;
    // State, each through its slice: the lifecycle,
    case 'stateReason':
      explainState(s, a.reason);
      return;
    case 'awaitingCause':
      setAwaitingCause(s, a.cause);
      return;
    case 'awaitFor':
      awaitFor(s, a.cause, a.reason);
      return;
    case 'clearAwaiting':
      clearAwaiting(s);
      return;
    case 'pausedFor':
      pausedFor(s, a.reason);
      return;
    case 'interruptPending':
      markInterruptPending(s, true);
      return;
    case 'invalidSignal':
      recordInvalidSignal(s, a.what, a.reason, ctx.ports.now());
      return;
    case 'heartbeat':
      if (a.generation !== undefined) seeGeneration(s, a.generation);
      heartbeatAt(s, a.at);
      return;
    case 'stopping':
      beginStop(s, a.reason, a.deadline);
      if (a.drained) markDrained(s);
      return;
    case 'budgetPaused':
      pausedFor(s, a.reason);
      markBudgetPaused(s, true);
      return;
    case 'budgetsWarned':
      markBudgetsWarned(s, a.budgets);
      return;
    case 'budgetPauseOver':
      markBudgetPaused(s, false);
      return;
    case 'childSpend':
      recordChildSpend(s, a.agentId, a.spent);
      return;
    // the idle clock and the waits,
    case 'idleFrom':
      restartIdleClock(s, a.at);
      return;
    case 'cliBlocked':
      setCliBlocked(s, a.reason);
      return;
    case 'waitingOnChildren':
      setWaitingOnChildren(s, a.waiting);
      return;
    case 'holdFor':
      holdFor(s, a.reason, a.since);
      return;
    case 'releaseHold':
      releaseHold(s);
      return;
    case 'releaseWaits':
      releaseWaits(s);
      return;
    // judgement,
    case 'newEpoch':
      startEpoch(ctx);
      return;
    case 'dropEvaluations':
      dropEvaluations(s);
      if (a.recount) resetEvaluationCount(s);
      return;
    case 'countTowardsEvaluation':
      countTurnTowardsEvaluation(s);
      return;
    case 'queueEvaluation':
      countTurnTowardsEvaluation(s);
      resetEvaluationCount(s);
      queueIntervalEvaluation(s, a.job);
      return;
    case 'evidenceFrom':
      evidenceFromAtLeast(s, a.turn);
      return;
    case 'restartLadder':
      restartLadder(s);
      return;
    case 'judgedBefore':
      setWindow(s, []);
      forgetDeliveredAt(s);
      evidenceFromTurn(s, a.turn);
      return;
    case 'dismissal':
      recordDismissal(ctx, a.note);
      return;
    case 'withdrawLadderWhispers':
      withdrawWhispers(s, withdrawable);
      return;
    case 'decideEscalation':
      decideEscalation(ctx, a.decision, a.note);
      return;
    // driven turns' failures,
    case 'turnFailure':
      recordTurnFailure(s, a.cause);
      return;
    case 'retryWhispers':
      keepForRetry(s, a.whispers);
      return;
    case 'deliverForRetry':
      keepForRetry(s, [...(s.retryWhispers ?? []), ...takeWhispers(ctx)]);
      return;
    case 'failures':
      setFailures(s, a.failures);
      return;
    // compaction and done-claims.
    case 'compaction':
      setCompaction(s, a.compaction);
      return;
    case 'session':
      setSession(s, a.session);
      return;
    case 'doneClaim':
      setDoneClaim(s, a.claim);
      return;
    case 'evaluated':
    case 'skipEvaluation':
    case 'suppressed':
    case 'verdict':
    case 'evaluatorTier':
    case 'ladder':
    case 'case':
      applyEvaluationAction(ctx, a);
      return;
    default: {
      const never: never = a;
      ctx.ports.log.error('unknown action', { agentId: spec.agentId, action: never });
    }
  }
}

/** Apply `event` through the state table. An illegal event is recorded as refused and changes nothing. */
export function fire(ctx: AgentContext, event: AgentEvent, cause: string): boolean {
  const { s, spec } = ctx.core;
  const r = transition(s.state, event);
  if (!r.ok) {
    recordRefusal(s, event, r.reason, ctx.ports.now());
    ctx.ports.log.warn('refused event', { agentId: spec.agentId, event, state: s.state, reason: r.reason });
    return false;
  }
  const from = s.state;
  enterState(s, r.to, event, cause, ctx.ports.now());
  if (from !== r.to) recordStateChange(ctx, from, r.to, event, cause);
  return true;
}

/** Record a refused signal or request (status.refused) and log it. */
export function refuse(ctx: AgentContext, what: string, reason: string): void {
  const { s, spec } = ctx.core;
  recordRefusal(s, what, reason, ctx.ports.now());
  ctx.ports.log.warn('refused signal', { agentId: spec.agentId, signal: what, reason });
}

/** Queue a whisper for the agent's next turn boundary. */
export function queueWhisper(ctx: AgentContext, type: WhisperType, text: string): Whisper {
  const { s, spec } = ctx.core;
  const w = recordWhisperQueued(s, spec.agentId, type, text, ctx.ports.now());
  recordWhisper(ctx, 'queued', w);
  return w;
}

/**
 * A new evaluation epoch: a human intervened (pause, resume, interrupt, a steer after an interrupt,
 * abort) or the agent is stopping. An evaluation that started before it is not applied when it
 * returns (supervision.ts `applyEvaluation` compares epochs), and nothing queued runs. The one
 * place the epoch moves.
 */
export function startEpoch(ctx: AgentContext): void {
  ctx.core.run.epoch += 1;
  dropEvaluations(ctx.core.s);
}

/** Whispers of the ladder: once one reaches the agent, only its later turns can show the problem persists. */
export const LADDER_WHISPERS: readonly WhisperType[] = ['CORRECTION', 'THINK_DEEPER', 'ESCALATION', 'VERIFY'];
/** What a dismissal withdraws: a failed check's [VERIFY] reports a command's result, not a judgement to call false. */
export const withdrawable = (w: Whisper): boolean => LADDER_WHISPERS.includes(w.type) && w.type !== 'VERIFY';
/** At most this many deliveries are remembered for the evaluator (older ones have left the window anyway). */
export const KEEP_DELIVERED_AT = 40;

/**
 * Take every queued whisper for delivery now, before the agent's next turn (counted as delivered).
 * Where they landed is remembered; after a ladder whisper, only later turns are evidence.
 */
export function takeWhispers(ctx: AgentContext): Whisper[] {
  const { s, spec } = ctx.core;
  const beforeTurn = s.turns + 1;
  const whispers = markDelivered(s, beforeTurn, spec.supervisor.windowSize, KEEP_DELIVERED_AT, ctx.ports.now());
  if (whispers.some((w) => LADDER_WHISPERS.includes(w.type))) evidenceFromAtLeast(s, beforeTurn);
  for (const w of whispers) recordWhisper(ctx, 'delivered', w);
  return whispers;
}

/**
 * The scheduler: what the workflow's loop does next, decided from the state alone. The shell
 * (workflows/loop.ts) executes each step with Temporal calls and asks again.
 *
 * Order of precedence: a queued child waits for admission; a stop drains and ends; a queued
 * evaluation runs; a long history continues as new (never while children are open); a driven
 * agent runs its next turn or waits for a human; an external agent is watched (idle watchdog and
 * heartbeat orphan detection) until something happens.
 */
import { isTerminal, type AgentState } from '../contract/states.js';
import type { AgentContext } from './context.js';
import { fire } from './effects.js';
import { openChildren } from './delegation.js';
import { notify } from './notify.js';
import { queueIdleEvaluation } from './supervision.js';
import type { AgentCore } from './state.js';
import { baselineDue, verificationDue } from './verification.js';
import { pendingCompaction } from './compaction.js';
import { sessionEndMoved } from './session-end-state.js';
import { holdDeadline, judging } from './hold-state.js';
import { holdExpired } from './held.js';

import { quietDueAt, runLimitDecision, type HistoryInfo } from './run-limits.js';

export { RUN_LIMITS } from './state.js';
export type { HistoryInfo } from './run-limits.js';
/** States in which a silent external agent can be declared orphaned. */
export const ORPHANABLE: readonly AgentState[] = ['spawning', 'running', 'awaiting-input', 'blocked', 'compacting'];

export type Step =
  | { kind: 'end' }
  | { kind: 'await-admission' }
  /** Driven: the drain already happened while the turn ran; end now. */
  | { kind: 'finish-stop' }
  /** External: wait for a turn boundary at most `timeoutMs`, then end. */
  | { kind: 'drain'; timeoutMs: number }
  | { kind: 'evaluate' }
  /** A hold ran past safety.maxHeldMs (held.ts): it ends, the agent awaits a human. */
  | { kind: 'hold-expired' }
  /** AgentSpec.protect: read the start commit once (verification.ts). */
  | { kind: 'baseline' }
  /** A done-claim waits: check it (verification.ts). */
  | { kind: 'verify' }
  | { kind: 'continue-as-new' }
  /** Driven and spawning: it starts running. */
  | { kind: 'start-driven' }
  /** Driven and running: check the budgets, then run one turn. */
  | { kind: 'turn' }
  /** Driven, paused/escalated/interrupted: no turn starts until a human lets it. */
  | { kind: 'await-human' }
  /** External: watch for idleness and silence (see `watchPlan`). */
  | { kind: 'watch' };

export const canEvaluate = (core: AgentCore): boolean => judging(core) && !core.run.evaluating;

/**
 * The run is long enough to continue as new (run-limits.ts). Never while children are open: their
 * results are awaited by this run. An external agent whose turns come back to back waits for a
 * quiet moment.
 */
export function shouldContinueAsNew(ctx: AgentContext, h: HistoryInfo): boolean {
  if (openChildren(ctx) > 0) return false;
  return runLimitDecision(...runLimitInputs(ctx, h)) === 'now'; // 'defer': at a quiet moment
}

function runLimitInputs(ctx: AgentContext, h: HistoryInfo): Parameters<typeof runLimitDecision> {
  const { core } = ctx;
  const waitsForQuiet = !core.spec.driver && core.s.state === 'running';
  const pace = { lastTurnAt: core.s.lastTurnAt, lastGapMs: core.run.lastGapMs };
  return [core.run.runLimits, h, pace, ctx.ports.now(), waitsForQuiet];
}

/**
 * The watch plan with a continue-as-new that waits for a quiet moment: the watch wakes when the
 * quiet gap after the latest turn has passed, and the run continues as new then, before the next
 * turn arrives (patch 'continue-in-quiet-gap'; before it, only the next turn or the watch's own
 * deadlines woke it). A timer that fires for this is no idle watchdog: `afterWatch` finds only the
 * quiet gap's silence, short of `idleAfterMs`.
 */
export function withQuietGap(plan: WatchPlan, ctx: AgentContext, h: HistoryInfo): WatchPlan {
  if (plan.kind !== 'wait' || openChildren(ctx) > 0) return plan;
  const due = quietDueAt(...runLimitInputs(ctx, h));
  if (due === null || !ctx.ports.patched('continue-in-quiet-gap')) return plan;
  const left = Math.max(1, due - ctx.ports.now());
  return { ...plan, timeoutMs: plan.timeoutMs === undefined ? left : Math.min(plan.timeoutMs, left) };
}

export function nextStep(ctx: AgentContext, h: HistoryInfo): Step {
  const { core, ports } = ctx;
  const { s, spec } = core;
  if (isTerminal(s.state)) return { kind: 'end' };
  if (s.state === 'queued') return { kind: 'await-admission' };
  if (s.state === 'cancelling') {
    if (spec.driver) return { kind: 'finish-stop' };
    return { kind: 'drain', timeoutMs: Math.max(0, (s.stopDeadline ?? ports.now()) - ports.now()) };
  }
  if (holdExpired(ctx)) return { kind: 'hold-expired' };
  if (baselineDue(core)) return { kind: 'baseline' };
  if (verificationDue(core)) return { kind: 'verify' };
  if (s.evalQueue.length > 0 && canEvaluate(core)) return { kind: 'evaluate' };
  if (shouldContinueAsNew(ctx, h)) return { kind: 'continue-as-new' };
  if (spec.driver) {
    if (s.state === 'spawning') return { kind: 'start-driven' };
    if (s.state === 'running') return { kind: 'turn' };
    if (s.state === 'compacting' && pendingCompaction(s)) return { kind: 'turn' }; // the compaction turn (compaction.ts)
    return { kind: 'await-human' };
  }
  return { kind: 'watch' };
}

/** Driven: the agent starts running its turns. */
export function startDriven(ctx: AgentContext): void {
  fire(ctx, 'started', `driven by warden (${ctx.core.spec.driver!.kind})`);
}

/**
 * Driven, waiting for a human: wake when it may run, stops, ends, or should continue as new, or
 * when a hold's deadline moved from `holdAt` (the one the wait's timer was set for).
 */
export function humanWake(ctx: AgentContext, h: HistoryInfo, holdAt: number | null = null): boolean {
  const { s } = ctx.core;
  return isTerminal(s.state) || s.state === 'running' || s.state === 'cancelling' || shouldContinueAsNew(ctx, h) || holdDeadline(ctx.core) !== holdAt;
}

/** The idle watchdog is armed: running, enabled, and this silence not yet evaluated. */
export const idleArmed = (core: AgentCore): boolean => core.spec.supervisor.idleAfterMs > 0 && core.s.state === 'running' && !core.s.idleChecked;

export type WatchPlan =
  | { kind: 'orphaned'; reason: string }
  /** Wait until `wake` (no timer when `timeoutMs` is undefined), then `afterWatch`. `holdAt`: a hold's deadline the timer covers. */
  | { kind: 'wait'; timeoutMs: number | undefined; armed: boolean; sessionEndAt?: number; holdAt?: number };

/**
 * When the agent's current silence began: its last turn or heartbeat, and no earlier than its last
 * resume (time spent paused is not idleness).
 */
export function silentSince(core: AgentCore, now: number): number {
  const { s } = core;
  const last = s.lastTurnAt ?? s.lastHeartbeatAt ?? now;
  return s.idleFrom !== null ? Math.max(last, s.idleFrom) : last;
}

/**
 * External agent, nothing to do: how long to wait. The idle timer runs from the last turn (or
 * heartbeat); with heartbeats configured, twice the interval of silence makes the agent orphaned.
 */
export function watchPlan(core: AgentCore, now: number): WatchPlan {
  const plan = watchPlanUnheld(core, now);
  const holdAt = holdDeadline(core);
  if (plan.kind !== 'wait' || holdAt === null) return plan;
  // A bounded hold (held.ts): the wait ends at its deadline at the latest.
  const untilHold = Math.max(1, holdAt - now);
  return { ...plan, timeoutMs: plan.timeoutMs === undefined ? untilHold : Math.min(plan.timeoutMs, untilHold), holdAt };
}

function watchPlanUnheld(core: AgentCore, now: number): WatchPlan {
  const { s, spec } = core;
  const armed = idleArmed(core);
  const idleAfter = spec.supervisor.idleAfterMs;
  const hb = spec.safety.heartbeatIntervalMs;
  if (hb !== undefined && ORPHANABLE.includes(s.state)) {
    // Heartbeat-based orphan detection: silence for twice the interval makes the agent orphaned (loud).
    const lastSeen = Math.max(s.lastTurnAt ?? 0, s.lastHeartbeatAt ?? 0, s.startedAt);
    const orphanAt = lastSeen + 2 * hb;
    if (now >= orphanAt) {
      return { kind: 'orphaned', reason: `no heartbeat for ${Math.round((now - lastSeen) / 1000)} s (expected every ${Math.round(hb / 1000)} s)` };
    }
    const idleAt = armed ? silentSince(core, now) + idleAfter : Infinity;
    return { kind: 'wait', timeoutMs: Math.max(1, Math.min(orphanAt, idleAt) - now), armed };
  }
  if (!armed) return { kind: 'wait', timeoutMs: undefined, armed };
  return { kind: 'wait', timeoutMs: Math.max(1, silentSince(core, now) + idleAfter - now), armed };
}

/** The watch timer the shell keeps between watches: when it fires, or null. */
export interface KeptTimer {
  firesAt: number;
  fired: boolean;
}

/**
 * What to do with the kept watch timer for a new plan whose deadline is `now + timeoutMs`
 * (undefined: no deadline). The idle and orphan deadlines only move later as turns and heartbeats
 * arrive, so a pending timer that fires no later than the new deadline is kept: when it fires
 * early, the watch ends with nothing to do (`afterWatch` finds no idleness) and the next plan
 * starts a timer for the rest. Keeping it spares a cancelled and a new timer (two commands and
 * two history events) every time the watch wakes for an evaluation.
 */
export function keptTimerAction(timer: KeptTimer | null, now: number, timeoutMs: number | undefined): 'keep' | 'start' | 'cancel' | 'none' {
  const live = timer !== null && !timer.fired;
  if (timeoutMs === undefined) return live ? 'cancel' : 'none';
  if (live && timer.firesAt <= now + timeoutMs) return 'keep';
  return 'start';
}

/** While watching: wake on an end, a stop, a runnable evaluation, continue-as-new, an idle timer to (re)arm, or a session's deadline that moved. */
export function watchWake(ctx: AgentContext, h: HistoryInfo, plan: { armed: boolean; sessionEndAt?: number; holdAt?: number }): boolean {
  const { core } = ctx;
  const { s } = core;
  return (
    isTerminal(s.state) ||
    s.state === 'cancelling' ||
    (s.evalQueue.length > 0 && canEvaluate(core)) ||
    verificationDue(core) ||
    shouldContinueAsNew(ctx, h) ||
    idleArmed(core) !== plan.armed ||
    sessionEndMoved(core, plan) ||
    (holdDeadline(core) ?? undefined) !== plan.holdAt
  );
}

/** The agent fell silent for twice its heartbeat interval: orphaned, and every channel hears. */
export function declareOrphaned(ctx: AgentContext, reason: string): void {
  if (fire(ctx, 'heartbeat-lost', reason)) notify(ctx, { event: 'orphaned', reason });
}

/** The watch ended: if the idle timer fired (nothing woke it), queue one evaluation of this silence. */
export function afterWatch(ctx: AgentContext, woke: boolean, plan: { armed: boolean }): void {
  const { core, ports } = ctx;
  const { s } = core;
  const idleFor = ports.now() - silentSince(core, ports.now());
  if (!woke && plan.armed && s.state === 'running' && !s.idleChecked && idleFor >= core.spec.supervisor.idleAfterMs) {
    queueIdleEvaluation(ctx, idleFor);
  }
}

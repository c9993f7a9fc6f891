/**
 * An ended session: the agent's own CLI (Claude Code's SessionEnd hook) said its session ended.
 * The agent ends `done` when nothing of it is heard for `supervisor.sessionEndGraceMs` after that;
 * a resumed session (`claude --resume` continues the same session, so the same agent) comes back
 * with a turn, a heartbeat or a `resume` phase from its hooks before the deadline, and the agent
 * keeps running. The deadline is one more deadline of the watch (workflows/loop.ts): a durable timer.
 */
import type { SignalPayload } from '../contract/schemas.js';
import { isTerminal } from '../contract/states.js';
import type { AgentContext } from './context.js';
import type { AgentCore } from './state.js';
import { sessionEndDeadline } from './session-end-state.js';
import { clearSessionEnd, recordSessionEnd } from './session-end-state.js';
import { requestStop } from './stop.js';
import type { WatchPlan } from './next-step.js';

/** The `session` signal: `end` starts the grace period, `resume` ends it. */
export function sessionSignal(ctx: AgentContext, p: SignalPayload<'session'>): void {
  const { s } = ctx.core;
  if (isTerminal(s.state) || s.state === 'cancelling') return;
  if (p.phase === 'resume') {
    clearSessionEnd(s);
    return;
  }
  recordSessionEnd(s, ctx.ports.now(), p.reason ?? null);
}

/** The watch plan with the session's deadline: the watch's timer fires no later than it. */
export function withSessionEnd(plan: WatchPlan, core: AgentCore, now: number): WatchPlan {
  const deadline = sessionEndDeadline(core);
  if (plan.kind !== 'wait' || deadline === null) return plan;
  const left = Math.max(1, deadline - now);
  return { ...plan, timeoutMs: plan.timeoutMs === undefined ? left : Math.min(plan.timeoutMs, left), sessionEndAt: deadline };
}

/** After a watch: the deadline passed with nothing heard, so the agent ends `done`. Returns whether it did. */
export function endIfSessionGone(ctx: AgentContext): boolean {
  const { core, ports } = ctx;
  const { s } = core;
  const deadline = sessionEndDeadline(core);
  if (deadline === null || ports.now() < deadline) return false;
  const why = s.sessionEndReason ? ` (${s.sessionEndReason})` : '';
  const grace = Math.round(core.spec.supervisor.sessionEndGraceMs / 1000);
  clearSessionEnd(s); // acted on, once: never a deadline in the past that wakes the watch again
  return requestStop(ctx, { reason: `its session ended${why} and did not resume within ${grace} s`, drainMs: 0, drained: true, stopChildren: true });
}

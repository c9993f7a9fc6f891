/**
 * Delegation (the parent–child contract), both sides. Parent: a `delegate` request becomes a
 * child agent with a structured task spec, admitted while the mode's concurrency cap allows (the
 * rest wait visibly `queued`); children report their spend (the parent's budget covers its
 * subtree) and are stopped with their parent. A parent that reports a turn with `awaitChildren`
 * is `blocked` on its open children until the last one ends (or it reports again, or a human
 * steers or resumes it): no evaluation, no idle watchdog, no ladder step meanwhile. Child: it
 * waits `queued` until admitted. The task spec's validation and the child's spec are in
 * delegation-spec.ts (apart, so that this module holds no zod schema: the workflow bundle preloads it).
 */
import { DELEGATION_CAPS } from '../contract/limits.js';
import type { AgentContext } from './context.js';
import { fire } from './core.js';
import type { ChildRecord } from './state.js';
import { explainState } from './slices/lifecycle.js';
import { restartIdleClock } from './slices/turns.js';
import { childAdmitted, childFinished, childStopSent } from './slices/delegation.js';
import { setWaitingOnChildren } from './waiting-state.js';

export const liveChildren = (ctx: AgentContext): number => ctx.core.s.children.filter((c) => c.state === 'running').length;
export const openChildren = (ctx: AgentContext): number => ctx.core.s.children.filter((c) => c.state === 'running' || c.state === 'queued').length;

/** A child's workflow ended: record how, admit the next queued child, and a waiting parent runs once none is open. */
export function childEnded(ctx: AgentContext, rec: ChildRecord, outcome: { state: 'done' | 'failed'; reason: string | null }): void {
  childFinished(rec, outcome);
  admitNext(ctx);
  if (waitingOnChildren(ctx)) {
    if (openChildren(ctx) === 0) {
      const ended = ctx.core.s.children.map((c) => `${childName(ctx, c)} ${c.state}`).join(', ');
      endChildrenWait(ctx, `its delegated children finished (${ended})`);
    } else explainState(ctx.core.s, childrenWaitReason(ctx)); // one fewer to wait for
  }
}

/** The child's id under its parent: `boss.tests` → `tests`. */
const childName = (ctx: AgentContext, c: ChildRecord): string => c.agentId.slice(ctx.core.spec.agentId.length + 1);

/** "waiting on 2 delegated children: a, b" (running and queued ones). */
export function childrenWaitReason(ctx: AgentContext): string {
  const open = ctx.core.s.children.filter((c) => c.state === 'running' || c.state === 'queued');
  return `waiting on ${open.length} delegated ${open.length === 1 ? 'child' : 'children'}: ${open.map((c) => childName(ctx, c)).join(', ')}`;
}

/** Blocked because it waits on its children (not a rate limit). */
export const waitingOnChildren = (ctx: AgentContext): boolean => ctx.core.s.state === 'blocked' && ctx.core.s.waitingOnChildren;

/**
 * The agent reported a turn with `awaitChildren`: it has nothing to do until its open children
 * deliver, so it is `blocked` (the system resolves it), not idle. Without open children, or with a
 * done-claim waiting, it stays running.
 */
export function awaitChildren(ctx: AgentContext): void {
  const { s } = ctx.core;
  if (s.state !== 'running' || s.doneClaim !== null || openChildren(ctx) === 0) return;
  if (fire(ctx, 'block', childrenWaitReason(ctx))) setWaitingOnChildren(s, true);
}

/**
 * The wait is over (the last child ended, the agent reported again, a human steered): running
 * again, and the idle watchdog counts silence only from now (the wait was not idleness).
 */
export function endChildrenWait(ctx: AgentContext, cause: string): void {
  const { s } = ctx.core;
  if (!waitingOnChildren(ctx)) return;
  setWaitingOnChildren(s, false);
  if (s.heldBy !== undefined) {
    // A `block` signal holds it too (held.ts): blocked on that alone until it ends.
    explainState(s, s.heldBy);
    return;
  }
  restartIdleClock(s, ctx.ports.now());
  fire(ctx, 'unblock', cause);
}

/** Admit queued children while the mode's concurrency cap allows. */
export function admitNext(ctx: AgentContext): void {
  const cap = DELEGATION_CAPS[ctx.core.spec.delegation.mode];
  for (const c of ctx.core.s.children) {
    if (liveChildren(ctx) >= cap) break;
    if (c.state !== 'queued') continue;
    childAdmitted(c);
    ctx.ports.signalAgent(c.workflowId, { name: 'admit', payload: {} });
  }
}

/** The subtree goes with its parent: every open child is asked to stop (it drains with its grace period). */
export function stopChildren(ctx: AgentContext, reason: string): void {
  for (const c of ctx.core.s.children) {
    if ((c.state !== 'running' && c.state !== 'queued') || c.stopSent) continue;
    childStopSent(c);
    ctx.ports.signalAgent(c.workflowId, { name: 'stop', payload: { reason: `parent ${ctx.core.spec.agentId}: ${reason}`, drainTimeoutMs: 0 } });
  }
}

/** Child side: the parent admitted this queued child (or it left `queued` otherwise). */
export function admitted(ctx: AgentContext): void {
  if (ctx.core.s.state === 'queued') fire(ctx, 'slot-granted', 'its parent admitted it');
}

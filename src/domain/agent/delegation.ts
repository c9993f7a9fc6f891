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
import type { AgentSpec } from '../contract/schemas.js';
import { transitionThen, type AgentAction, type RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import { ruleInput } from './effects.js';
import type { Steps } from './steps.js';
import { spendOf, type CarriedView, type ChildRecord } from './state.js';
import { childFinished } from './slices/delegation.js';

export const liveChildren = (ctx: AgentContext): number => ctx.core.s.children.filter((c) => c.state === 'running').length;
export const openChildren = (ctx: AgentContext): number => ctx.core.s.children.filter((c) => c.state === 'running' || c.state === 'queued').length;

/** A child's workflow ended (`rec`, the shell's record of it, says how): admit the next queued child, and a waiting parent runs once none is open. */
export function* childEnded(ctx: AgentContext, rec: ChildRecord, outcome: { state: 'done' | 'failed'; reason: string | null }): Steps<void> {
  childFinished(rec, outcome);
  const r = ruleInput(ctx);
  yield [...admitNextActions(r), ...childrenEndedActions(r)];
}

/** After a child ended: a parent waiting on its children runs once none is open, else waits on one fewer. */
export function childrenEndedActions(r: RuleInput): AgentAction[] {
  const { s, spec } = r;
  if (!blockedOnChildren(s)) return [];
  if (s.children.some(isOpen)) return [{ kind: 'stateReason', reason: childrenWaitReason(s, spec) }]; // one fewer to wait for
  const ended = s.children.map((c) => `${childName(spec, c)} ${c.state}`).join(', ');
  return endChildrenWaitActions(r, `its delegated children finished (${ended})`);
}

/** The child's id under its parent: `boss.tests` → `tests`. */
const childName = (spec: AgentSpec, c: ChildRecord): string => c.agentId.slice(spec.agentId.length + 1);

const isOpen = (c: ChildRecord): boolean => c.state === 'running' || c.state === 'queued';

/** "waiting on 2 delegated children: a, b" (running and queued ones). */
export function childrenWaitReason(s: CarriedView, spec: AgentSpec): string {
  const open = s.children.filter(isOpen);
  return `waiting on ${open.length} delegated ${open.length === 1 ? 'child' : 'children'}: ${open.map((c) => childName(spec, c)).join(', ')}`;
}

/** Blocked because it waits on its children (not a rate limit). */
const blockedOnChildren = (s: CarriedView): boolean => s.state === 'blocked' && s.waitingOnChildren;
export const waitingOnChildren = (ctx: AgentContext): boolean => blockedOnChildren(ctx.core.s);

/**
 * The agent reported a turn with `awaitChildren`: it has nothing to do until its open children
 * deliver, so it is `blocked` (the system resolves it), not idle. Without open children, or with a
 * done-claim waiting, it stays running.
 */
export function awaitChildrenActions({ s, spec }: RuleInput): AgentAction[] {
  if (s.state !== 'running' || s.doneClaim !== null || !s.children.some(isOpen)) return [];
  return transitionThen(s.state, 'block', childrenWaitReason(s, spec), { kind: 'waitingOnChildren', waiting: true });
}

/**
 * The wait is over (the last child ended, the agent reported again, a human steered): running
 * again, and the idle watchdog counts silence only from `now` (the wait was not idleness).
 */
export function endChildrenWaitActions({ s, now }: RuleInput, cause: string): AgentAction[] {
  if (!blockedOnChildren(s)) return [];
  const over: AgentAction = { kind: 'waitingOnChildren', waiting: false };
  // A `block` signal holds it too (held.ts): blocked on that alone until it ends.
  if (s.heldBy !== undefined) return [over, { kind: 'stateReason', reason: s.heldBy }];
  return [over, { kind: 'idleFrom', at: now }, { kind: 'transition', event: 'unblock', cause }];
}

/** Admit queued children while the mode's concurrency cap allows. */
export function admitNextActions({ s, spec }: Pick<RuleInput, 's' | 'spec'>): AgentAction[] {
  const room = DELEGATION_CAPS[spec.delegation.mode] - s.children.filter((c) => c.state === 'running').length;
  return s.children
    .filter((c) => c.state === 'queued')
    .slice(0, Math.max(0, room))
    .map((c) => ({ kind: 'admitChild', workflowId: c.workflowId }));
}

/** The subtree goes with its parent: every open child is asked to stop (it drains with its grace period). */
export function stopChildrenActions({ s, spec }: Pick<RuleInput, 's' | 'spec'>, reason: string): AgentAction[] {
  return s.children
    .filter((c) => isOpen(c) && !c.stopSent)
    .map((c) => ({ kind: 'stopChild', workflowId: c.workflowId, reason: `parent ${spec.agentId}: ${reason}` }));
}

export function* stopChildren(ctx: AgentContext, reason: string): Steps<void> {
  yield stopChildrenActions(ruleInput(ctx), reason);
}

/** Child side: after each turn its parent hears what it has spent (the parent's budget covers its subtree). */
export function spendReportActions({ s, spec, now }: RuleInput): AgentAction[] {
  if (!spec.parent) return [];
  const total = spendOf({ s }, now);
  return [
    {
      kind: 'signal',
      workflowId: spec.parent.workflowId,
      signal: { name: 'childSpend', payload: { agentId: spec.agentId, tokens: total.tokens, costUsd: total.costUsd, turns: total.turns } },
    },
  ];
}

/** Child side: the parent admitted this queued child (or it left `queued` otherwise). */
export function admittedActions({ s }: RuleInput): AgentAction[] {
  return s.state === 'queued' ? [{ kind: 'transition', event: 'slot-granted', cause: 'its parent admitted it' }] : [];
}

export function* admitted(ctx: AgentContext): Steps<void> {
  yield admittedActions(ruleInput(ctx));
}

/**
 * Held by the system: a `block` signal says something other than a human holds the agent (a mesh
 * holds a worker whose patch conflicts until its rebase turn). Like a rate limit or a wait on
 * delegated children, the agent is `blocked` with the caller's reason: a driven agent starts no
 * turn and the idle watchdog does not count, until the wait ends: a `block` signal with phase
 * `end`, or a steer (new input: the mesh's rebase request is one). A human's interrupt or resume
 * takes over from the wait; a stop or an abort ends the agent as from any live state.
 *
 * Only the holder may hold: a `block` (start or end) is accepted only with the token the agent was
 * started with (AgentSpec `safety.holdToken`; a mesh sets one per worker). An agent started without
 * one refuses every `block`. The token keeps an agent from holding itself by accident or on a whim
 * (its own shell can reach the Temporal server its hooks use); it is no secret from anyone who can
 * read the workflow's history (the spec is its input). A refused `block` is recorded in
 * `status.refused`, with a reason that never repeats a token.
 *
 * A hold is bounded: after `safety.maxHeldMs` it ends and the agent awaits a human (escalated),
 * and every notification channel hears. A held external agent (hooked, or reporting through the
 * API) still runs elsewhere: the turns it reports are judged on the ladder as if it were running.
 */
import { transitionThen, type AgentAction, type RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import { act } from './effects.js';
import { childrenWaitReason } from './delegation.js';
import { heldBySignal as heldBySignalCore, holdDeadline } from './hold-state.js';
import { spanText } from './blocking.js';

/** Blocked because a `block` signal holds it (it may wait on something else too: a rate limit, children). */
export const heldBySignal = (ctx: AgentContext): boolean => heldBySignalCore(ctx.core);

/**
 * Why a `block` carrying `given` is refused by an agent whose holder's token is `expected`, or
 * null when it is the holder's. Never repeats either token.
 */
export function holderProblem(expected: string | undefined, given: string | undefined): string | null {
  if (expected === undefined) return 'no holder: this agent was started without safety.holdToken, so no block holds it';
  if (given === undefined) return "a block needs its holder's token (token): none was given";
  if (!sameToken(expected, given)) return "token: not this agent's holder's token";
  return null;
}

/** Compares every character, whatever the first difference (no early exit on a near guess). */
function sameToken(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < a.length; i += 1) diff |= a.charCodeAt(i) ^ b.charCodeAt(i % Math.max(1, b.length));
  return diff === 0;
}

type Block = { phase?: 'start' | 'end'; reason: string; token?: string };

/** The `block` signal (validated). */
export function blockActions(r: RuleInput, p: Block): AgentAction[] {
  const { s, spec, now } = r;
  const problem = holderProblem(spec.safety.holdToken, p.token);
  if (problem) return refuse(`${p.phase === 'end' ? 'end of a block' : 'block'} refused: ${problem}`);
  if (p.phase === 'end') {
    if (!heldBySignalCore(r)) return refuse(`end of a block, but nothing holds the agent (it is ${s.state})`);
    return endHoldActions(r, `its wait ended: ${p.reason}`);
  }
  // A new hold starts its bound; a block while already held changes the reason, not the bound.
  const startsHold = !heldBySignalCore(r);
  if (s.state === 'blocked') {
    // Already blocked (a rate-limit backoff, its children): it stays blocked until both waits end.
    const reason = s.heldBy === undefined ? `${s.stateReason ?? 'blocked'}; then ${p.reason}` : p.reason;
    return [
      { kind: 'stateReason', reason },
      { kind: 'holdFor', reason: p.reason, since: startsHold ? now : undefined },
    ];
  }
  return transitionThen(s.state, 'block', p.reason, { kind: 'holdFor', reason: p.reason, since: now });
}

const refuse = (reason: string): AgentAction[] => [{ kind: 'refuse', what: 'block', reason }];

/**
 * The hold is over (a `block` end, a steer): running again unless it still waits on its children,
 * and the idle watchdog counts silence only from now (the wait was not idleness). A pending
 * rate-limit retry runs now.
 */
export function endHoldActions(r: RuleInput, cause: string): AgentAction[] {
  const { s, spec, now } = r;
  if (!heldBySignalCore(r)) return [{ kind: 'releaseHold' }];
  if (s.waitingOnChildren) return [{ kind: 'releaseHold' }, { kind: 'stateReason', reason: childrenWaitReason(s, spec) }];
  return [{ kind: 'releaseHold' }, { kind: 'idleFrom', at: now }, { kind: 'transition', event: 'unblock', cause }];
}

export function endHold(ctx: AgentContext, cause: string): void {
  act(ctx, (r) => endHoldActions(r, cause));
}

/** The hold has run past its bound (safety.maxHeldMs). */
export const holdExpired = (ctx: AgentContext): boolean => {
  const deadline = holdDeadline(ctx.core);
  return deadline !== null && ctx.ports.now() >= deadline;
};

/**
 * The hold ran past its bound: whoever holds the agent is stuck or gone. The agent awaits a human
 * (escalated, like the ladder's last step: `warden resume` or a steer-and-resume runs it again,
 * `warden abort` ends it) and every channel hears; it does not run on by itself, since its holder
 * had a reason to stop it.
 */
export function expireHoldActions({ s, spec, now }: RuleInput): AgentAction[] {
  const heldFor = now - (s.heldSince ?? now);
  const reason = `held for ${spanText(heldFor)}, past safety.maxHeldMs (${spanText(spec.safety.maxHeldMs)}): ${s.heldBy ?? 'a block signal'}`;
  return [
    { kind: 'releaseWaits' }, // a human takes over from every wait
    { kind: 'newEpoch' },
    { kind: 'awaitFor', cause: 'escalation', reason },
    ...transitionThen(
      s.state,
      'escalate',
      reason,
      { kind: 'log', level: 'warn', message: 'hold past its bound: the agent awaits a human', meta: { event: 'escalation', agentId: spec.agentId, reason } },
      { kind: 'notify', alert: { event: 'escalation', reason } },
    ),
  ];
}

export function expireHold(ctx: AgentContext): void {
  act(ctx, expireHoldActions);
}

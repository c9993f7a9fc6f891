/**
 * The agent's own CLI waits for its human: a permission prompt, an idle prompt (Claude Code's
 * Notification hook, Codex's PermissionRequest). The agent is `awaiting-input` with the reason,
 * the notification channels hear it once per wait (a repeated hook event changes nothing but a
 * better reason), and the next tool call, prompt or reported turn makes it `running` again.
 *
 * It is not a problem warden found: the ladder does not move, and the wait is never idleness
 * (awaiting-input is not an active state; the idle clock starts over when the wait ends).
 *
 * Its CLI's turn ended on an API error (Claude Code's StopFailure hook): one its human must fix
 * (authentication, billing, an invalid request: kind `api-error`) is such a wait; a rate-limited or
 * overloaded model (kind `rate-limit`) is not the human's to fix: the agent is `blocked` with the
 * reason, no alert, and its next tool call, prompt or turn (the CLI going on) makes it `running`.
 */
import type { z } from 'zod';
import type { HumanWaitSchema } from '../contract/turn-schemas.js';
import { transition, type AgentState } from '../contract/states.js';
import { transitionThen, type AgentAction, type RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import { ruleInput } from './effects.js';
import type { Steps } from './steps.js';
import type { CarriedView } from './state.js';

export type HumanWait = z.output<typeof HumanWaitSchema>;

/** Whether the agent is waiting for its human at its own CLI's prompt. */
export const waitingForHuman = (s: CarriedView): boolean => s.state === 'awaiting-input' && s.awaitingCause === 'human';

/** The reason shown and sent, from the payload's kind and reason. */
export function humanWaitReason(p: HumanWait): string {
  if (p.reason) return p.reason;
  if (p.kind === 'permission') return 'waiting for permission';
  if (p.kind === 'idle') return 'waiting for input';
  if (p.kind === 'api-error') return "its CLI's turn ended on an API error";
  if (p.kind === 'rate-limit') return "its CLI's model is rate-limited";
  return 'waiting for a human';
}

/** `start`: awaiting-input, and one alert; `end`: running again. */
export function* humanWait(ctx: AgentContext, p: HumanWait): Steps<void> {
  const r = ruleInput(ctx); // the live state: each step decides on what the one before left
  if (p.phase === 'end') yield endHumanWaitActions(r, 'its human answered');
  else if (p.kind === 'rate-limit') yield cliRateLimitedActions(r, humanWaitReason(p));
  else {
    if (blockedByCli(r.s)) yield endCliBlockActions(r, 'it reported another error'); // a rate limit, then an error its human must fix
    yield humanWaitStartActions(r, p);
  }
}

/** A wait for its human starts (its CLI's rate limit, if any, is over): awaiting-input, and one alert. */
export function humanWaitStartActions({ s }: RuleInput, p: HumanWait): AgentAction[] {
  const reason = humanWaitReason(p);
  if (waitingForHuman(s)) {
    // The same wait, told again (an idle prompt after a permission prompt): no second alert. A
    // permission prompt names what is pending, so its reason replaces a vaguer one.
    return (p.kind === 'permission' || p.kind === 'api-error') && s.stateReason !== reason ? [{ kind: 'stateReason', reason }] : [];
  }
  if (s.state !== 'running' && s.state !== 'spawning')
    return [{ kind: 'refuse', what: 'humanWait', reason: `the agent is ${s.state}; only a running agent waits for its human` }];
  return transitionThen(
    s.state,
    'human-wait',
    reason,
    { kind: 'awaitingCause', cause: 'human' },
    { kind: 'notify', alert: { event: 'awaiting-input', reason } },
  );
}

/** Blocked because its own CLI's model is rate-limited (see cliRateLimitedActions). */
export const blockedByCli = (s: CarriedView): boolean => s.state === 'blocked' && s.cliBlocked !== undefined;

/** Its CLI's turn ended on a rate-limited or overloaded model: `blocked` with the reason, no alert. */
export function cliRateLimitedActions({ s, spec }: RuleInput, reason: string): AgentAction[] {
  if (spec.driver)
    return [{ kind: 'refuse', what: 'humanWait', reason: `agent is driven by warden (${spec.driver.kind}); warden retries its rate-limited turns itself` }];
  if (blockedByCli(s)) {
    // The same wait, told again: a newer reason.
    const explain = s.heldBy === undefined && !s.waitingOnChildren;
    return [{ kind: 'cliBlocked', reason }, ...(explain ? [{ kind: 'stateReason', reason } as const] : [])];
  }
  if (s.state !== 'running' && s.state !== 'spawning')
    return [{ kind: 'refuse', what: 'humanWait', reason: `the agent is ${s.state}; only a running agent is blocked by its CLI's rate limit` }];
  const block = (from: AgentState) => transitionThen(from, 'block', reason, { kind: 'cliBlocked', reason });
  if (s.state === 'running') return block('running');
  // Its very first turn failed: it did start (its CLI runs), it is blocked from there.
  const started = transition(s.state, 'started');
  return [{ kind: 'transition', event: 'started', cause: "its CLI's first turn ended on an API error" }, ...(started.ok ? block(started.to) : [])];
}

/**
 * The agent moved again (a tool call, a prompt, a turn): running, with the idle clock starting
 * `now`. (After its CLI's rate limit the agent is `blocked`, never awaiting its human.)
 */
export function endHumanWaitActions(r: RuleInput, cause: string): AgentAction[] {
  const { s, now } = r;
  if (blockedByCli(s)) return endCliBlockActions(r, cause);
  const stale: AgentAction[] = s.cliBlocked !== undefined ? [{ kind: 'cliBlocked', reason: undefined }] : [];
  if (!waitingForHuman(s)) return stale;
  return [...stale, ...transitionThen(s.state, 'human-answered', cause, { kind: 'awaitingCause', cause: null }, { kind: 'idleFrom', at: now })];
}

/** Its CLI went on after a rate limit: running again, unless something else (a hold, its children) still blocks it. */
function endCliBlockActions({ s, now }: RuleInput, cause: string): AgentAction[] {
  const over: AgentAction = { kind: 'cliBlocked', reason: undefined };
  if (!blockedByCli(s) || s.heldBy !== undefined || s.waitingOnChildren) return [over];
  return [over, { kind: 'idleFrom', at: now }, { kind: 'transition', event: 'unblock', cause: `its CLI went on (${cause})` }];
}

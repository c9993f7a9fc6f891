/**
 * The agent's own CLI waits for its human: a permission prompt, an idle prompt (Claude Code's
 * Notification hook, Codex's PermissionRequest). The agent is `awaiting-input` with the reason,
 * the notification channels hear it once per wait (a repeated hook event changes nothing but a
 * better reason), and the next tool call, prompt or reported turn makes it `running` again.
 *
 * It is not a problem warden found: the ladder does not move, and the wait is never idleness
 * (awaiting-input is not an active state; the idle clock starts over when the wait ends).
 */
import type { z } from 'zod';
import type { HumanWaitSchema } from '../contract/turn-schemas.js';
import type { AgentContext } from './context.js';
import { fire, refuse } from './core.js';
import { notify } from './notify.js';
import type { CarriedView } from './state.js';
import { explainState, setAwaitingCause } from './slices/lifecycle.js';
import { restartIdleClock } from './slices/turns.js';

export type HumanWait = z.output<typeof HumanWaitSchema>;

/** Whether the agent is waiting for its human at its own CLI's prompt. */
export const waitingForHuman = (s: CarriedView): boolean => s.state === 'awaiting-input' && s.awaitingCause === 'human';

/** The reason shown and sent, from the payload's kind and reason. */
export function humanWaitReason(p: HumanWait): string {
  if (p.reason) return p.reason;
  if (p.kind === 'permission') return 'waiting for permission';
  if (p.kind === 'idle') return 'waiting for input';
  return 'waiting for a human';
}

/** `start`: awaiting-input, and one alert; `end`: running again. */
export function humanWait(ctx: AgentContext, p: HumanWait): void {
  if (p.phase === 'end') {
    endHumanWait(ctx, 'its human answered');
    return;
  }
  const { s } = ctx.core;
  const reason = humanWaitReason(p);
  if (waitingForHuman(s)) {
    // The same wait, told again (an idle prompt after a permission prompt): no second alert. A
    // permission prompt names what is pending, so its reason replaces a vaguer one.
    if (p.kind === 'permission' && s.stateReason !== reason) explainState(s, reason);
    return;
  }
  if (s.state !== 'running' && s.state !== 'spawning') return refuse(ctx, 'humanWait', `the agent is ${s.state}; only a running agent waits for its human`);
  if (!fire(ctx, 'human-wait', reason)) return;
  setAwaitingCause(s, 'human');
  notify(ctx, { event: 'awaiting-input', reason });
}

/** The agent moved again (a tool call, a prompt, a turn): running, with the idle clock starting now. */
export function endHumanWait(ctx: AgentContext, cause: string): void {
  const { s } = ctx.core;
  if (!waitingForHuman(s)) return;
  if (!fire(ctx, 'human-answered', cause)) return;
  setAwaitingCause(s, null);
  restartIdleClock(s, ctx.ports.now());
}

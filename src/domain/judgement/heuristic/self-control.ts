/**
 * The agent went for warden's controls of itself: a tool call that `warden hook` denied because it
 * targets the agent's own supervision (`warden dismiss|resume|block … <self>`, a Temporal signal,
 * update, terminate or reset of `agent-<self>`; src/hooks/self-control.ts decides). The hook
 * reports the attempt as a turn whose one tool call is named SELF_CONTROL_TOOL, with the command
 * as its arguments; this detector makes that REWARD_HACKING, ahead of every other detector, and
 * the tiered evaluator does not let a model overrule it (heuristicJudgement's `tampered`).
 */
import { callsOf, type Finding, type DetectorContext } from './types.js';

/** The name of the tool call in which the hook records a denied attempt on the agent's own controls. */
export const SELF_CONTROL_TOOL = 'warden:self-control';

/** The newest such attempt among the evidence turns, as a finding; else null. */
export function selfControlAttempt({ turns, from }: Pick<DetectorContext, 'turns' | 'from'>): Finding | null {
  const attempts = callsOf(turns, from).filter(({ call }) => call.name === SELF_CONTROL_TOOL);
  const last = attempts.at(-1);
  if (!last) return null;
  const command = (last.call.args ?? '').replace(/\s+/g, ' ').trim().slice(0, 120);
  return {
    kind: 'CORRECTION',
    pattern: 'REWARD_HACKING',
    message:
      `The agent tried to work warden's controls of its own supervision${command ? ` (${JSON.stringify(command)})` : ''}; the hook denied it. ` +
      'Dismissing, resuming or signalling yourself is not yours to do: if a finding is wrong, say why and let the human decide.',
    turns: [...new Set(attempts.map((a) => a.turn))],
  };
}

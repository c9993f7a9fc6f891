/**
 * What a hold (held.ts) means for the rest of the core, read from the state alone: whether a
 * `block` signal holds the agent, when that hold runs out, and whether the turns a held agent
 * reports are still judged. No imports but types, so the scheduler and supervision can ask.
 */
import type { AgentSpec } from '../contract/schemas.js';
import type { CarriedView } from './state.js';

/** What these questions read: the carried state and the spec (an AgentCore, or a rule's input). */
type Core = { readonly s: CarriedView; readonly spec: AgentSpec };

/** Blocked because a `block` signal holds it (it may wait on something else too: a rate limit, children). */
export const heldBySignal = (core: Core): boolean => core.s.state === 'blocked' && core.s.heldBy !== undefined;

/**
 * When the current hold runs out (safety.maxHeldMs after it began), or null: nothing holds the
 * agent, or the hold has no start time.
 */
export function holdDeadline(core: Core): number | null {
  if (!heldBySignal(core) || core.s.heldSince === undefined) return null;
  return core.s.heldSince + core.spec.safety.maxHeldMs;
}

/**
 * A held external agent (hooked, or reporting through the API) still runs elsewhere and reports
 * its turns: they are judged on the ladder as if it were running. A held driven agent starts no
 * turn (a mesh worker waiting for its rebase turn), so nothing changes for it.
 */
export const judgesHeldTurns = (core: Core): boolean => !core.spec.driver && holdDeadline(core) !== null;

/** Turns are counted for evaluation and verdicts applied: running, or held while it reports turns. */
export const judging = (core: Core): boolean => core.s.state === 'running' || judgesHeldTurns(core);

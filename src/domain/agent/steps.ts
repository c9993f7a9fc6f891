/**
 * Rules that decide in steps, and the one place their steps are carried out.
 *
 * A reported turn passes several rules in order, and each decides on the state the rules before it
 * left. Such a handler is a generator (reporting.ts `reportTurn`): it yields each step's actions
 * and goes on only after they were carried out, so it writes nothing but through its slices'
 * functions and decides nothing it does not yield. The shell drives it with `run` (workflows/
 * agent.ts); so do the unit tests (test/helpers/report.ts), with the same executor.
 */
import type { Whisper } from '../contract/schemas.js';
import type { AgentAction } from './actions.js';
import type { AgentContext } from './context.js';
import { apply, takeWhispers } from './effects.js';

/** Every queued whisper goes to the agent now; the step that yields it gets them back. */
export interface DeliverWhispers {
  kind: 'deliverWhispers';
}

/** One step's actions, in order. */
export type StepAction = AgentAction | DeliverWhispers;

/** A handler that decides in steps: yields each step's actions, receives what the step delivered, returns its result. */
export type Steps<R> = Generator<readonly StepAction[], R, Whisper[]>;

/** Drive `steps` to its end, carrying out each step's actions before the next step decides. */
export function run<R>(ctx: AgentContext, steps: Steps<R>): R {
  let next = steps.next([]);
  while (!next.done) next = steps.next(carryOut(ctx, next.value));
  return next.value;
}

function carryOut(ctx: AgentContext, actions: readonly StepAction[]): Whisper[] {
  let delivered: Whisper[] = [];
  for (const a of actions) {
    if (a.kind === 'deliverWhispers') delivered = takeWhispers(ctx);
    else apply(ctx, [a]);
  }
  return delivered;
}

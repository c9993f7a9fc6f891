/**
 * External reporting: an agent running elsewhere reports each turn with the `reportTurn` update
 * and receives, in the same round trip, every whisper queued for it. Turn ids make a report
 * idempotent (a re-sent turn gets the whispers it got the first time); reports from an older
 * generation of the agent are stale and dropped.
 */
import { TurnSchema, describeZodError, type Turn, type Whisper } from '../contract/schemas.js';
import type { ReportTurnResult } from '../contract/status.js';
import { isTerminal } from '../contract/states.js';
import { turnReportProblem } from '../contract/limits.js';
import { isUndecodable, undecodableReason } from '../contract/undecodable.js';
import { pushWindow, rememberId } from '../judgement/window.js';
import { boundedWindow } from './bytes.js';
import type { RuleInput } from './actions.js';
import type { AgentContext } from './context.js';
import type { Steps } from './steps.js';
import { awaitChildrenActions, endChildrenWaitActions, spendReportActions } from './delegation.js';
import { budgetActions } from './rails.js';
import { evaluationCountActions } from './supervision.js';
import { endHumanWaitActions } from './human-wait.js';
import { claimDoneActions } from './verification.js';
import { compactionOnReportActions, deliverHandoffActions, pendingCompaction } from './compaction.js';
import { isPaused, type CarriedView } from './state.js';
import { markDrained, markInterruptPending } from './slices/lifecycle.js';
import { countTurn, seeGeneration, setWindow, turnReportedAt } from './slices/turns.js';
import { rememberDelivery } from './slices/whispers.js';
import { recordTurnSpend } from './slices/spend.js';

/** How many turns' deliveries are remembered for answering a re-sent report. */
export const KEEP_DELIVERIES = 20;

/** The update's validator (synchronous: throwing rejects the update before it enters history). Returns the parsed turn. */
export function validateReport(ctx: AgentContext, input: unknown): Turn {
  const { s, spec } = ctx.core;
  // Before the schema: the raw argument is what the accepted event would store.
  const problem = isUndecodable(input) ? `undecodable payload: ${undecodableReason(input)}` : turnReportProblem(input);
  if (problem) throw new Error(`invalid turn: ${problem}`);
  const r = TurnSchema.safeParse(input);
  if (!r.success) throw new Error(`invalid turn: ${describeZodError(r.error)}`);
  if (isTerminal(s.state)) throw new Error(`agent ${spec.agentId} is ${s.state}; it takes no more turns`);
  if (spec.driver) throw new Error(`agent ${spec.agentId} is driven by warden (driver ${spec.driver.kind}); it takes no reported turns`);
  return r.data;
}

/**
 * Hands the validator's parse of a turn to the handler of the same update, so a live turn is
 * parsed once, not twice. Keyed by update id and taken once: a handler that finds no parse for its
 * own update (in replay validators do not run; or the slot holds another update's) parses the turn
 * itself, with the same result.
 */
export function validatedTurnSlot(): { put(updateId: string | undefined, turn: Turn): void; take(updateId: string | undefined): Turn | undefined } {
  let slot: { updateId: string; turn: Turn } | null = null;
  return {
    put(updateId, turn) {
      slot = updateId === undefined ? null : { updateId, turn };
    },
    take(updateId) {
      const held = slot;
      slot = null;
      return held !== null && updateId !== undefined && held.updateId === updateId ? held.turn : undefined;
    },
  };
}

/**
 * The update's handler. `validated`: the validator's parse of this same input (validatedTurnSlot), when it ran.
 *
 * Each rule decides on the state as the rules before it left it, and returns actions (actions.ts);
 * this handler yields them step by step and the shell carries each step out (steps.ts `run`)
 * before the next rule decides, in this order, which is the order of the commands a recorded
 * history replays.
 */
export function* reportTurn(ctx: AgentContext, input: unknown, validated?: Turn): Steps<ReportTurnResult> {
  const { s, spec } = ctx.core;
  const turn = validated ?? (TurnSchema.safeParse(input).data as Turn);
  const now = ctx.ports.now();
  ctx.core.run.lastGapMs = s.lastTurnAt === null ? null : now - s.lastTurnAt;
  turnReportedAt(s, now);
  if (turn.generation !== undefined) {
    if (turn.generation < s.generation) return { ...reply(ctx, false, false, []), stale: true };
    seeGeneration(s, turn.generation);
  }
  if (turn.id !== undefined && s.recentIds.includes(turn.id)) {
    const earlier = s.deliveries.find((d) => d.turnId === turn.id);
    return reply(ctx, false, true, earlier?.whispers ?? [], handoffSentWith(s, turn.id));
  }
  if (s.state === 'spawning') yield [{ kind: 'transition', event: 'started', cause: 'first turn reported' }];
  const r: RuleInput = { s, spec, now }; // the state as each rule finds it, after the rules before it
  yield endHumanWaitActions(r, 'it reported a turn'); // its human answered its CLI's prompt
  yield endChildrenWaitActions(r, 'it reported a turn'); // a parent that was waiting on its children is working again
  yield compactionOnReportActions(r, turn.id); // the fresh context's first turn (compaction.ts)
  yield* recordTurn(ctx, turn, now);
  // A done-claim: ends the agent, or waits for its check (verification.ts).
  if (turn.done) yield claimDoneActions(r);
  if (turn.awaitChildren) yield awaitChildrenActions(r); // nothing to do until its children deliver: blocked
  yield budgetActions(r, (id) => ctx.ports.patched(id)).actions; // before the agent's next turn: the reply says stop
  const whispers = yield [{ kind: 'deliverWhispers' }];
  if (turn.id !== undefined && whispers.length > 0) {
    rememberDelivery(s, turn.id, whispers, KEEP_DELIVERIES);
  }
  yield deliverHandoffActions(r, turn.id);
  const pending = pendingCompaction(s);
  return reply(ctx, true, false, whispers, pending ? { handoff: pending.handoff } : undefined);
}

/** The reply that carried a compaction's handoff carries it again. */
function handoffSentWith(s: CarriedView, turnId: string): { handoff: string } | undefined {
  return s.compaction?.deliveredWith === turnId ? { handoff: s.compaction.handoff } : undefined;
}

/** A turn happened (reported, or run by the driver) at `now`: count it, window it, maybe queue an evaluation. */
export function* recordTurn(ctx: AgentContext, turn: Turn, now: number): Steps<void> {
  const { s, spec } = ctx.core;
  countTurn(s, turn.id !== undefined ? rememberId(s.recentIds, turn.id) : null);
  recordTurnSpend(s, turn, now);
  setWindow(s, boundedWindow(pushWindow(s.window, turn, spec.supervisor.windowSize)));
  if (s.state === 'cancelling') markDrained(s);
  const r: RuleInput = { s, spec, now };
  yield spendReportActions(r); // its parent hears what it has spent
  yield evaluationCountActions(r);
}

function reply(ctx: AgentContext, accepted: boolean, duplicate: boolean, whispers: Whisper[], compact?: { handoff: string }): ReportTurnResult {
  const { s } = ctx.core;
  const interrupt = s.interruptPending;
  if (accepted) markInterruptPending(s, false);
  return {
    accepted,
    duplicate,
    whispers,
    paused: isPaused(s),
    stop: s.state === 'cancelling',
    interrupt,
    state: s.state,
    ...(s.doneClaim ? { verifying: true } : {}),
    ...(compact ? { compact } : {}),
  };
}

/**
 * What the agent core's rules decide, as data. A rule reads the carried state (read-only), the
 * spec and the time it is given, and returns actions; the one executor, effects.ts `apply`, carries
 * them out in order: state through the slices' functions, commands through the ports. (The mesh's
 * policy works the same way: src/domain/mesh/policy.ts returns TaskActions, meshWorkflow runs them.)
 *
 * The order of a rule's actions is the order of its effects: a history replays only when the
 * workflow's commands (signals, notifications, a cancelled turn) come in the order it recorded.
 */
import type { AgentEvent, AgentState } from '../contract/states.js';
import { transition } from '../contract/states.js';
import type { AgentSpec, Whisper, WhisperType } from '../contract/schemas.js';
import type { DriverSession } from '../contract/activity-types.js';
import type { BudgetName } from './budgets.js';
import type { Compaction } from './compaction-state.js';
import type { EvalJob } from './slices/judgement.js';
import type { EvaluationAction } from './evaluation-effects.js';
import type { AgentSignal } from './context.js';
import type { Alert } from './notify.js';
import type { CarriedView } from './state.js';
import type { TelemetryValue } from './telemetry.js';

/**
 * What a rule reads: the carried state (read-only: every write is an action), the spec, and the
 * time the shell gives it (workflow time stands still within one handler or loop step).
 */
export interface RuleInput {
  readonly s: CarriedView;
  readonly spec: AgentSpec;
  readonly now: number;
}

export type AgentAction =
  // The state table, and what it refuses:
  /** Through the state table; a refused event is recorded as refused and changes nothing. */
  | { kind: 'transition'; event: AgentEvent; cause: string }
  /** A signal or request is refused: recorded (status.refused) and logged (`silent`: recorded only). */
  | { kind: 'refuse'; what: string; reason: string; silent?: true }
  // What the agent, its channels, its children and its operator hear:
  | { kind: 'whisper'; type: WhisperType; text: string }
  /** Every configured channel hears (notify.ts: an incident, or a notification of its own). */
  | { kind: 'notify'; alert: Alert }
  /** A telemetry event (telemetry.ts): names and numbers only; free text apart, in `text`. */
  | { kind: 'event'; name: string; attrs: Record<string, TelemetryValue>; text?: Record<string, string> }
  /** A line in the worker's log (a decision worth an operator's eye). */
  | { kind: 'log'; level: 'info' | 'warn' | 'error'; message: string; meta: Record<string, unknown> }
  | { kind: 'signal'; workflowId: string; signal: AgentSignal }
  /** A queued child is admitted: it runs, and its workflow gets the `admit` signal. */
  | { kind: 'admitChild'; workflowId: string }
  /** An open child is asked to stop (once): the `stop` signal, with this reason. */
  | { kind: 'stopChild'; workflowId: string; reason: string }
  | { kind: 'cancelTurn' }
  // State, each through its slice's function: the lifecycle,
  | { kind: 'stateReason'; reason: string | null }
  | { kind: 'awaitingCause'; cause: 'escalation' | 'interrupt' | 'human' | null }
  /** It awaits a human for `cause`, and `reason` is why it is paused. */
  | { kind: 'awaitFor'; cause: 'escalation' | 'interrupt'; reason: string }
  /** Whatever it awaited is over. */
  | { kind: 'clearAwaiting' }
  /** A human paused it, with this reason. */
  | { kind: 'pausedFor'; reason: string }
  /** Its next reply tells it it was interrupted. */
  | { kind: 'interruptPending' }
  /** A signal whose payload failed its schema (status.invalidSignals), or one this workflow does not define. */
  | { kind: 'invalidSignal'; what: string; reason: string }
  /** The agent's heartbeat, of this generation (undefined: the one it has). */
  | { kind: 'heartbeat'; at: number; generation: number | undefined }
  /** A stop was accepted: its reason, the end of its drain, and whether anything is left to drain. */
  | { kind: 'stopping'; reason: string; deadline: number; drained: boolean }
  /** A budget paused the agent, with this reason. */
  | { kind: 'budgetPaused'; reason: string }
  | { kind: 'budgetsWarned'; budgets: BudgetName[] }
  /** A human resumed it: a budget still reached pauses it again before its next turn. */
  | { kind: 'budgetPauseOver' }
  /** A child reported what it has spent (the parent's budget covers its subtree). */
  | { kind: 'childSpend'; agentId: string; spent: { tokens: number; costUsd: number; turns: number } }
  // the idle clock and the waits,
  /** Silence counts from `at`: the idle watchdog re-arms. */
  | { kind: 'idleFrom'; at: number }
  | { kind: 'cliBlocked'; reason: string | undefined }
  | { kind: 'waitingOnChildren'; waiting: boolean }
  /** A `block` signal holds it for `reason`; `since`: when the bound starts (undefined: keep it). */
  | { kind: 'holdFor'; reason: string; since: number | undefined }
  /** A hold (held.ts) is over: a human takes over from it. */
  | { kind: 'releaseHold' }
  /** A human took over from every wait: on children, a hold, its CLI's rate limit. */
  | { kind: 'releaseWaits' }
  // judgement,
  /** A new evaluation epoch (effects.ts `startEpoch`): nothing queued runs, nothing running is applied. */
  | { kind: 'newEpoch' }
  /** Nothing queued may run any more; with `recount`, the count towards the next one starts over too. */
  | { kind: 'dropEvaluations'; recount: boolean }
  /** One more turn counts towards the next interval evaluation. */
  | { kind: 'countTowardsEvaluation' }
  /** That turn made one due: the count starts over, and `job` waits (superseding one still waiting). */
  | { kind: 'queueEvaluation'; job: EvalJob }
  /** Turns before `turn` are no evidence any more. */
  | { kind: 'evidenceFrom'; turn: number }
  /** The ladder starts over at step 0. */
  | { kind: 'restartLadder' }
  /** A human judged what came before: the window and its deliveries are forgotten, evidence starts at `turn`. */
  | { kind: 'judgedBefore'; turn: number }
  /** A human dismissed the newest flagged verdict as a false alarm (dismissal.ts). */
  | { kind: 'dismissal'; note: string | null }
  /** The ladder's queued whispers the agent has not received are withdrawn (a failed check's [VERIFY] stays). */
  | { kind: 'withdrawLadderWhispers' }
  /** A human resumed or aborted the agent after an escalation: its case is labelled so. */
  | { kind: 'decideEscalation'; decision: 'resumed' | 'aborted'; note: string | null }
  // driven turns' failures,
  /** A turn failed with `cause`: one more failure in a row. */
  | { kind: 'turnFailure'; cause: string }
  /** The failed turn's whispers wait for its retry (null: none wait any more, the retry took them). */
  | { kind: 'retryWhispers'; whispers: Whisper[] | null }
  /** The whispers queued now join those that wait for the retry (they are delivered with it). */
  | { kind: 'deliverForRetry' }
  /** The recent failures' times, as restart intensity keeps them. */
  | { kind: 'failures'; failures: number[] }
  // compaction and done-claims.
  | { kind: 'compaction'; compaction: Compaction }
  | { kind: 'session'; session: DriverSession | null }
  | { kind: 'doneClaim'; claim: { turn: number; at: number } }
  // an evaluation's result (evaluation-effects.ts).
  | EvaluationAction;

/** Whether the state table takes `event` in `state` (a rule decides what follows a transition by it). */
export const moves = (state: AgentState, event: AgentEvent): boolean => transition(state, event).ok;

/** A transition, and what follows it only if the table takes it (a refused one is still recorded). */
export function transitionThen(state: AgentState, event: AgentEvent, cause: string, ...then: AgentAction[]): AgentAction[] {
  return [{ kind: 'transition', event, cause }, ...(moves(state, event) ? then : [])];
}

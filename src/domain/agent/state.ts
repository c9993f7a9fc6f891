/**
 * The agent's state: one typed object carried verbatim across continue-as-new (`CarriedState`),
 * plus what lives only in the current run (`RunState`: the running turn, evaluation in flight,
 * fire-and-forget work still pending). `AgentCore` bundles them with the parsed spec.
 *
 * The carried format is a contract with running histories: old runs continue into new code, so
 * fields are only ever added (with a default in `freshState`), never renamed or removed.
 */
import type { Spend } from './budgets.js';
import type { AgentSpec } from '../contract/schemas.js';
import { freshVerification, type VerificationState } from './verification-state.js';
import { freshWaiting, type WaitingState } from './waiting-state.js';
import { freshCompaction, type CompactionState } from './compaction-state.js';
import { freshSessionEnd, type SessionEndState } from './session-end-state.js';
import { freshSubagents, type SubagentState } from './subagent-state.js';
import { freshLinks, type LinkState } from './link-state.js';
import { freshNotify, type NotifyState } from './notify-state.js';
import { effectiveThreshold } from '../judgement/ladder.js';
import { freshTeaching, type TeachingState } from './teaching-state.js';
import { RUN_LIMITS, type RunLimits } from './run-limits.js';
import type { TelemetryEvent } from './telemetry.js';
import { freshLifecycle, startQueued, type LifecycleSlice } from './slices/lifecycle.js';
import { freshTurns, type TurnsSlice } from './slices/turns.js';
import { freshWhispers, type WhispersSlice } from './slices/whispers.js';
import { freshJudgement, type JudgementSlice } from './slices/judgement.js';
import { freshSpend, type SpendSlice } from './slices/spend.js';
import { freshDriven, type DrivenSlice } from './slices/driven.js';
import { freshDelegation, type DelegationSlice } from './slices/delegation.js';

export type { EvalJob } from './slices/judgement.js';
export type { Delivery } from './slices/whispers.js';
export type { ChildRecord } from './slices/delegation.js';
export { SPEND_BUCKET_MS, SPEND_BUCKETS, addSpend, type SpendBucket } from './slices/spend.js';
export { KEEP_RECORDS, keepLast, iso } from './records.js';

/**
 * Everything the agent's supervision needs, carried verbatim across continue-as-new: one flat
 * object on the wire, cut into slices (slices/*.ts and the *-state.ts mixins), each declared with
 * its initial value and the only functions that assign its fields (docs/developing/architecture.md,
 * "State slices"; test/unit/slice-ownership.test.ts holds it). The fields declared here are the
 * run's own bookkeeping across continue-as-new, assigned only here.
 */
export interface CarriedState
  extends LifecycleSlice,
    TurnsSlice,
    WhispersSlice,
    JudgementSlice,
    SpendSlice,
    DrivenSlice,
    DelegationSlice,
    TeachingState,
    VerificationState,
    WaitingState,
    CompactionState,
    LinkState,
    SessionEndState,
    SubagentState,
    NotifyState {
  runs: number;
  /** When supervision started (wall-clock budget). */
  startedAt: number;
  /**
   * Set only in the continue-as-new input: the search attribute values the previous run had last
   * published. The server copies them into the new run, so the new run upserts only what differs
   * from them (null: a fresh agent, or a run continued from a history recorded before this field).
   */
  publishedAtContinue: Omit<Published, 'details'> | null;
}

/** The carried state as the code that only reads it takes it: every write goes through its slice's functions. */
export type CarriedView = Readonly<CarriedState>;

/** The last values published as search attributes and details. */
export type Published = { state: string; step: number; paused: boolean; details: string; spendBucket: number; spendAt: number };

export { RUN_LIMITS, type RunLimits } from './run-limits.js';

export interface RunState {
  turnRunning: boolean; // a driven turn is running (its cancellation scope is open)
  evaluating: boolean; // an evaluation activity is in flight (and a done-claim's verification, verification.ts)
  verifying?: boolean;
  epoch: number; // bumped whenever a human intervenes, so an evaluation that started before it is not applied
  /** The last values published (details text, search attributes), so unchanged ones are not sent again. */
  published: Published;
  /** When this run continues as new (RUN_LIMITS; tests may set others). */
  runLimits: RunLimits;
  /** The gap before the latest turn this run saw (ms; run-limits.ts quietMoment). */
  lastGapMs: number | null;
  /** Telemetry events recorded since the last commit (telemetry.ts), and how many were dropped. */
  outbox: TelemetryEvent[];
  outboxDropped: number;
  /** Of LATER_SEARCH_ATTRIBUTES, those this run started with: the only ones of them it sends (visibility.ts). */
  laterAttributes: readonly string[];
}

export interface AgentCore {
  spec: AgentSpec;
  /** The escalation threshold in force (never below 3). */
  threshold: number;
  s: CarriedState;
  run: RunState;
  /** Temporal's ids for this run, for notifications. */
  workflowId: string;
  runId: string;
}

export function freshState(now: number): CarriedState {
  return {
    ...freshLifecycle(),
    ...freshTurns(),
    ...freshWhispers(),
    ...freshJudgement(),
    ...freshSpend(),
    ...freshDriven(),
    ...freshDelegation(),
    runs: 1,
    startedAt: now,
    publishedAtContinue: null,
    ...freshTeaching(),
    ...freshVerification(),
    ...freshWaiting(),
    ...freshCompaction(),
    ...freshSessionEnd(),
    ...freshSubagents(),
    ...freshLinks(),
    ...freshNotify(),
  };
}

/** A new run continuing an earlier one: the carried state, with defaults for fields added since. */
export function resumeState(carried: CarriedState, now: number): CarriedState {
  return { ...freshState(now), ...carried, runs: carried.runs + 1 };
}

/** The core of one run: a fresh agent, or one continued from `carried`. */
export function createCore(
  spec: AgentSpec,
  ids: { workflowId: string; runId: string; laterAttributes?: readonly string[] },
  now: number,
  carried?: CarriedState,
): AgentCore {
  const s = carried ? resumeState(carried, now) : freshState(now);
  if (!carried && spec.startQueued) startQueued(s);
  const published = s.publishedAtContinue;
  s.publishedAtContinue = null; // meaningful only in the input that carried it
  return {
    spec,
    threshold: effectiveThreshold(spec.supervisor.escalationThreshold),
    s,
    run: {
      turnRunning: false,
      evaluating: false,
      epoch: 0,
      // A continued run starts with the search attributes its previous run published (the server
      // copies them); the details text is not copied, so it is always set again.
      published: published
        ? { ...published, details: '' }
        : { state: '', step: -1, paused: false, details: '', spendBucket: 0, spendAt: Number.NEGATIVE_INFINITY },
      runLimits: { ...RUN_LIMITS },
      lastGapMs: null,
      outbox: [],
      laterAttributes: ids.laterAttributes ?? [],
      outboxDropped: 0,
    },
    workflowId: ids.workflowId,
    runId: ids.runId,
  };
}

export const isPaused = (s: CarriedView): boolean => s.state === 'paused-by-user' || (s.state === 'awaiting-input' && s.awaitingCause !== 'human'); // by a human, or waiting for one (not its own CLI's prompt)

/** What the agent has spent by `now`; a parent's spend covers its whole subtree and its CLI's sub-agents. */
export function spendOf(core: { s: CarriedView }, now: number): Spend {
  const { s } = core;
  const sub = Object.values(s.childSpend);
  const cli = s.subagentSpend;
  return {
    tokens: s.tokensIn + s.tokensOut + cli.tokensIn + cli.tokensOut + sub.reduce((a, c) => a + c.tokens, 0),
    costUsd: s.costUsd + cli.costUsd + sub.reduce((a, c) => a + c.costUsd, 0),
    turns: s.turns,
    wallClockMs: now - s.startedAt,
  };
}

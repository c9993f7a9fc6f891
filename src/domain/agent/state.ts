/**
 * The agent's state: one typed object carried verbatim across continue-as-new (`CarriedState`),
 * plus what lives only in the current run (`RunState`: the running turn, evaluation in flight,
 * fire-and-forget work still pending). `AgentCore` bundles them with the parsed spec.
 *
 * The carried format is a contract with running histories: old runs continue into new code, so
 * fields are only ever added (with a default in `freshState`), never renamed or removed.
 */
import type { Spend } from './budgets.js';
import type { AgentSpec, Turn, Whisper, WhisperType } from '../contract/schemas.js';
import type { AgentStatus, RefusalRecord, TransitionRecord } from '../contract/status.js';
import { freshVerification, type VerificationState } from './verification-state.js';
import { freshWaiting, type WaitingState } from './waiting-state.js';
import { freshCompaction, type CompactionState } from './compaction-state.js';
import { freshSessionEnd, type SessionEndState } from './session-end-state.js';
import { freshLinks, type LinkState } from './link-state.js';
import type { DriverSession } from '../contract/activity-types.js';
import { effectiveThreshold, initialLadder, type LadderState } from '../judgement/ladder.js';
import type { AgentState } from '../contract/states.js';
import { freshTeaching, type TeachingState } from './teaching-state.js';
import { RUN_LIMITS, type RunLimits } from './run-limits.js';
import { emptyEvaluatorSpend, type EvaluatorSpend } from '../judgement/tiered.js'; // evaluator spend, apart from the agent's

export interface EvalJob {
  reason: 'interval' | 'idle';
  turns: Turn[];
  idleMs?: number;
  /** The number (1-based, counting every turn of the agent) of `turns[0]`. Absent in jobs carried from older runs. */
  firstTurn?: number;
}

/** A whisper reached the agent right before its turn number `beforeTurn`. */
export interface Delivery {
  beforeTurn: number;
  type: WhisperType;
  text: string;
}

export interface ChildRecord {
  agentId: string;
  workflowId: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  reason: string | null;
  /** A stop was already sent (once is enough; a second could overtake the first's reason). */
  stopSent?: boolean;
}

/** Everything the agent's supervision needs, carried verbatim across continue-as-new (dismissals and cases: dismissal.ts; compaction: compaction.ts; links: links.ts). */
export interface CarriedState extends TeachingState, VerificationState, WaitingState, CompactionState, LinkState, SessionEndState {
  state: AgentState;
  stateReason: string | null;
  pauseReason: string | null;
  /** Why the agent is awaiting input: the ladder escalated, a human interrupted it, or its own CLI waits for its human (human-wait.ts). */
  awaitingCause: 'escalation' | 'interrupt' | 'human' | null;
  ladder: LadderState;
  window: Turn[];
  recentIds: string[];
  deliveries: { turnId: string; whispers: Whisper[] }[];
  turns: number;
  turnsSinceEval: number;
  evaluations: AgentStatus['evaluations'];
  lastVerdict: AgentStatus['lastVerdict'];
  lastSkipReason: string | null;
  pendingWhispers: Whisper[];
  whispersDelivered: number;
  whisperSeq: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  evaluatorSpend: EvaluatorSpend;
  evalQueue: EvalJob[];
  /** A stop was requested: the drain ends by this time. */
  stopDeadline: number | null;
  stopReason: string | null;
  /** External agents: a turn boundary was reached after the stop (the drain is over). */
  drained: boolean;
  /** The next reportTurn reply tells the agent it was interrupted. */
  interruptPending: boolean;
  lastTurnAt: number | null;
  lastHeartbeatAt: number | null;
  /** The idle watchdog already evaluated this silence; it re-arms with the next turn or resume. */
  idleChecked: boolean;
  transitions: TransitionRecord[];
  refused: RefusalRecord[];
  invalidSignals: number;
  runs: number;
  session: DriverSession | null; // driven: the driver's session (e.g. a codex session id)
  /** Driven mode: the stop's drain timeout passed and the running turn was cancelled. */
  drainTimedOut: boolean;
  /** When supervision started (wall-clock budget). */
  startedAt: number;
  /** Times of recent failed turns (restart intensity). */
  failures: number[];
  /** The newest agent generation seen; older reports are stale. */
  generation: number;
  /** Driven mode: the whispers of a failed turn, delivered again with its retry. */
  retryWhispers: Whisper[] | null;
  /** Delegation (parent side): the children and what each has spent. */
  children: ChildRecord[];
  childSpend: Record<string, { tokens: number; costUsd: number; turns: number }>;
  /** Delegation (child side): the parent has admitted this queued child. */
  admitted: boolean;
  /** A finished child's checked result: inline, or a content-addressed reference. */
  result: AgentStatus['result'];
  /** The first turn (by number) that may serve as evidence for the ladder: turns before it were
   * already judged by a flagged evaluation, or came before the last whisper reached the agent. */
  evidenceFrom: number;
  /** Whispers delivered to the agent within the window, so evaluators see where each one landed. */
  deliveredAt: Delivery[];
  /** Silence counts from here at the earliest: a resume (time spent paused is not idleness). */
  idleFrom: number | null;
  /** Driven mode: why the last turn failed (cleared by the next turn that succeeds). */
  lastTurnError: string | null;
  /** Driven mode: failed turns since the last one that succeeded. */
  consecutiveFailures: number;
  /** Driven mode: time spent blocked by rate limits since the last finished turn (blocking.ts). */
  blockedMs?: number;
  /** Driven mode: rate-limited turns in a row (blocking.ts), carried so the backoff goes on growing across continue-as-new. */
  rateLimited?: number;
  /** Spend per minute over the last hour (oldest first, at most SPEND_BUCKETS): `warden top`'s burn rate. */
  spendHistory: SpendBucket[];
  /**
   * Set only in the continue-as-new input: the search attribute values the previous run had last
   * published. The server copies them into the new run, so the new run upserts only what differs
   * from them (null: a fresh agent, or a run continued from a history recorded before this field).
   */
  publishedAtContinue: Omit<Published, 'details'> | null;
}

/** The last values published as search attributes and details. */
export type Published = { state: string; step: number; paused: boolean; details: string; spendBucket: number; spendAt: number };

/** Spend within one bucket of SPEND_BUCKET_MS, starting at `at` (ms). */
export interface SpendBucket {
  at: number;
  tokens: number;
  costUsd: number;
}
export const SPEND_BUCKET_MS = 60_000;
export const SPEND_BUCKETS = 60;
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
    state: 'spawning',
    stateReason: 'workflow started',
    pauseReason: null,
    awaitingCause: null,
    ladder: initialLadder(),
    window: [],
    recentIds: [],
    deliveries: [],
    turns: 0,
    turnsSinceEval: 0,
    evaluations: { total: 0, ok: 0, flagged: 0, skipped: 0 },
    lastVerdict: null,
    lastSkipReason: null,
    pendingWhispers: [],
    whispersDelivered: 0,
    whisperSeq: 0,
    tokensIn: 0,
    tokensOut: 0,
    costUsd: 0,
    evaluatorSpend: emptyEvaluatorSpend(),
    evalQueue: [],
    stopDeadline: null,
    stopReason: null,
    drained: false,
    interruptPending: false,
    lastTurnAt: null,
    lastHeartbeatAt: null,
    idleChecked: false,
    transitions: [],
    refused: [],
    invalidSignals: 0,
    runs: 1,
    session: null,
    drainTimedOut: false,
    startedAt: now,
    failures: [],
    generation: 0,
    retryWhispers: null,
    children: [],
    childSpend: {},
    admitted: false,
    result: null,
    evidenceFrom: 1,
    deliveredAt: [],
    idleFrom: null,
    lastTurnError: null,
    consecutiveFailures: 0,
    spendHistory: [],
    publishedAtContinue: null,
    ...freshTeaching(),
    ...freshVerification(),
    ...freshWaiting(),
    ...freshCompaction(),
    ...freshSessionEnd(),
    ...freshLinks(),
  };
}

/** A new run continuing an earlier one: the carried state, with defaults for fields added since. */
export function resumeState(carried: CarriedState, now: number): CarriedState {
  return { ...freshState(now), ...carried, runs: carried.runs + 1 };
}

/** The core of one run: a fresh agent, or one continued from `carried`. */
export function createCore(spec: AgentSpec, ids: { workflowId: string; runId: string }, now: number, carried?: CarriedState): AgentCore {
  const s = carried ? resumeState(carried, now) : freshState(now);
  if (!carried && spec.startQueued) {
    s.state = 'queued';
    s.stateReason = 'waiting for a concurrency slot of its parent';
  }
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
    },
    ...ids,
  };
}

export const isPaused = (s: CarriedState): boolean => s.state === 'paused-by-user' || (s.state === 'awaiting-input' && s.awaitingCause !== 'human'); // by a human, or waiting for one (not its own CLI's prompt)

export const KEEP_RECORDS = 10; // how many transitions and refusals status keeps

export const keepLast = <T>(list: T[], item: T, n = KEEP_RECORDS): T[] => [...list, item].slice(-n);
export const iso = (ms: number): string => new Date(ms).toISOString();

/** What the agent has spent by `now`; a parent's spend covers its whole subtree. */
export function spendOf(core: AgentCore, now: number): Spend {
  const { s } = core;
  const sub = Object.values(s.childSpend);
  return {
    tokens: s.tokensIn + s.tokensOut + sub.reduce((a, c) => a + c.tokens, 0),
    costUsd: s.costUsd + sub.reduce((a, c) => a + c.costUsd, 0),
    turns: s.turns,
    wallClockMs: now - s.startedAt,
  };
}

/** Add a turn's spend to the history at `now`: one bucket per minute, the last hour kept. */
export function addSpend(history: readonly SpendBucket[], now: number, tokens: number, costUsd: number): SpendBucket[] {
  const at = Math.floor(now / SPEND_BUCKET_MS) * SPEND_BUCKET_MS;
  const kept = history.filter((b) => b.at > at - SPEND_BUCKETS * SPEND_BUCKET_MS);
  const last = kept.at(-1);
  if (last && last.at === at) return [...kept.slice(0, -1), { at, tokens: last.tokens + tokens, costUsd: last.costUsd + costUsd }];
  return [...kept, { at, tokens, costUsd }];
}

/**
 * The mesh's durable state: tasks, their attempts, tick history, gate results, integrated patches
 * and the monitoring log. Lives in meshWorkflow; the `meshStatus` query returns it whole.
 */
import type { MeshTask, TaskMode, Tunables } from './config.js';
import type { AttemptCheck } from './check.js';
import type { AttemptGating, GateName, Gates } from './gates.js';
import type { AttemptHedge } from './hedge.js';
import type { AttemptMonitor } from './monitor.js';
import type { AttemptWaits } from './waits.js';

/** The states a task shows on the mesh dashboard. */
export const MESH_TASK_STATES = [
  'queued',
  'spawned',
  'acked',
  'running',
  'waiting_checkpoint',
  'stalled',
  'restarting',
  'taking_over',
  'needs_reemit',
  'needs_rebase',
  'applying_patch',
  'integrated',
  'done',
  'failed',
] as const;
export type MeshTaskState = (typeof MESH_TASK_STATES)[number];

export const MESH_PHASES = ['setting-up', 'running', 'awaiting-input', 'validating', 'ready', 'applied', 'cancelled', 'failed'] as const;
export type MeshPhase = (typeof MESH_PHASES)[number];

/**
 * One attempt at a task. Its fields are cut by who decides them, and only that file writes them
 * (test/unit/mesh-attempt-ownership.test.ts): what the ticks saw (monitor.ts), the gates and
 * readiness (gates.ts), what the mesh asked the agent for and waits on (waits.ts), the task's own
 * check (check.ts), the hedge (hedge.ts); here, who the attempt is and where it stands.
 */
export interface Attempt extends AttemptMonitor, AttemptGating, AttemptWaits, AttemptCheck, AttemptHedge {
  attempt: number;
  kind: 'worker' | 'takeover';
  mode: TaskMode;
  agentId: string;
  workflowId: string;
  branch: string;
  worktree: string;
  checkpointPath: string;
  patchPath: string;
  spawnedAt: number;
  state: MeshTaskState;
  closed: boolean;
  reason: string | null;
  /** A replaced attempt whose worktree and branch were removed (workflow time; absent otherwise). */
  removedAt?: number | null;
  /**
   * The holder's token the mesh gave this attempt's agent (its AgentSpec safety.holdToken): the mesh
   * sends it with its `block`. Left out of the status query (`publicState`); absent in older runs.
   */
  holdToken?: string;
}

/** What is known of an attempt when it is spawned: who it is, where it works, what its diff is taken against, and when. */
export type AttemptStart = Pick<
  Attempt,
  'attempt' | 'kind' | 'mode' | 'agentId' | 'workflowId' | 'branch' | 'worktree' | 'checkpointPath' | 'patchPath' | 'diffBase' | 'spawnedAt'
>;

/** A just-spawned attempt: `start` with `gates` to pass and nothing seen yet (no status, no patch, not acked, not ready, open). */
export function blankAttempt(start: AttemptStart, gates: Gates): Attempt {
  return {
    ...start,
    lastTickAt: null,
    lastSeenAt: null,
    lastStatus: null,
    statusSeen: 0,
    lastPatchStat: null,
    patchSeen: 0,
    lastCheckpointMtime: null,
    checkpointNudgedAt: null,
    unrel: 0,
    acked: false,
    gates,
    state: 'spawned',
    waitingFor: null,
    reemits: 0,
    draftNotBefore: 0,
    outputWaits: 0,
    turnsSeen: 0,
    ready: false,
    patchSha: null,
    patchFiles: [],
    agentEnded: null,
    closed: false,
    reason: null,
  };
}

/** The attempt's place in the task state table (what the dashboard shows for it). */
export function moveTo(a: Attempt, state: MeshTaskState): void {
  a.state = state;
}

/** Closed: the mesh is done with it (replaced, lost a hedge, its task ended), with the reason. */
export function closeAttempt(a: Attempt, reason: string): void {
  a.closed = true;
  a.reason = reason;
}

/** Its worktree and branch were removed (workflow time). */
export function markRemoved(a: Attempt, at: number): void {
  a.removedAt = at;
}

/** The holder's token the mesh gives the attempt's agent (it sends it with its `block`). */
export function giveHoldToken(a: Attempt, token: string): void {
  a.holdToken = token;
}

export interface TaskRecord {
  task: MeshTask;
  state: MeshTaskState;
  attempts: Attempt[];
  ackRestarts: number;
  restarts: number;
  tookOver: boolean;
  firstSpawnAt: number | null;
  integratedCommit: string | null;
  integratedAttempt: number | null;
  next: string;
  reason: string | null;
  /** Integrated, but not everything was as the contract asks (gate O): one line each (absent in older runs). */
  warnings?: string[];
  /** A failed task: the gate that failed it, if one did (absent in older runs). */
  failedGate?: GateName | null;
  /** A failed task: its last attempt's final message as last seen, at most 1,000 characters (absent in older runs). */
  lastOutput?: string | null;
  /** The task's check failed this many times, over all its attempts (absent in older runs). */
  checkFailures?: number;
}

export interface LogEntry {
  at: number;
  text: string;
}

export interface MeshStatus {
  runId: string;
  repo: string;
  phase: MeshPhase;
  phaseReason: string | null;
  tunables: Tunables;
  validate: string | null;
  base: string | null;
  userBranch: string | null;
  integrationBranch: string;
  integrationDir: string | null;
  integrationHead: string | null;
  startedAt: number;
  ticks: number;
  lastTickAt: number | null;
  conflicts: number;
  conflictBudget: number;
  tasks: TaskRecord[];
  /** Tick entries and enforcement events (STALL DETECTED, TIMEOUT ESCALATION, …), oldest first, bounded. */
  log: LogEntry[];
  validation: { ok: boolean; exitCode: number | null; output: string; at: number } | null;
  applied: { commit: string; branch: string; at: number } | null;
  spend: Record<string, { tokens: number; costUsd: number; turns: number }>;
}

export const OPEN_STATES: readonly MeshTaskState[] = MESH_TASK_STATES.filter((s) => s !== 'integrated' && s !== 'done' && s !== 'failed');
export const isOpen = (t: TaskRecord) => OPEN_STATES.includes(t.state);
/**
 * Attempts replaced by a later one, or beaten by a hedge, whose agents have ended: their worktrees
 * can go (not the integrated or done one; a failed task keeps its last).
 */
export const removableAttempts = (tasks: readonly TaskRecord[]): Array<[TaskRecord, Attempt]> =>
  tasks.flatMap((r) =>
    r.attempts
      .filter(
        (a) =>
          a.closed &&
          a.agentEnded !== null &&
          !a.removedAt &&
          (a !== r.attempts.at(-1) || r.state === 'integrated' || r.state === 'done') &&
          r.integratedAttempt !== a.attempt &&
          !(r.state === 'done' && a.reason === 'done'),
      )
      .map((a): [TaskRecord, Attempt] => [r, a]),
  );
/** The task's newest live attempt (with hedging there may be more: see liveAttempts). */
export const activeAttempt = (t: TaskRecord): Attempt | undefined => [...t.attempts].reverse().find((a) => !a.closed);
/** The task's live attempts, oldest first (one, unless the task is hedged). */
export const liveAttempts = (t: TaskRecord): Attempt[] => t.attempts.filter((a) => !a.closed);
/** The live attempt whose patch passed the gates and waits to integrate (the oldest, if several), if any. */
export const readyAttempt = (t: TaskRecord): Attempt | undefined => t.attempts.find((a) => !a.closed && a.ready);
/** The live attempt a held rebase request goes to: the one whose patch did not apply (else the newest live one). */
export const rebaseTarget = (t: TaskRecord): Attempt | undefined => t.attempts.find((a) => !a.closed && a.state === 'needs_rebase') ?? activeAttempt(t);

/** The state as the status query shows it: without the attempts' holder tokens (the mesh's alone to send). */
export function publicState(s: MeshStatus): MeshStatus {
  if (!s.tasks.some((r) => r.attempts.some((a) => a.holdToken !== undefined))) return s;
  return { ...s, tasks: s.tasks.map((r) => ({ ...r, attempts: r.attempts.map(({ holdToken: _token, ...a }) => a) })) };
}

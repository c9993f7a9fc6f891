/**
 * The mesh's durable state: tasks, their attempts, tick history, gate results, integrated patches
 * and the monitoring log. Lives in meshWorkflow; the `meshStatus` query returns it whole.
 */
import type { MeshTask, TaskMode, Tunables } from './config.js';
import type { GateName, Gates } from './gates.js';

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

export interface Attempt {
  attempt: number;
  kind: 'worker' | 'takeover';
  mode: TaskMode;
  agentId: string;
  workflowId: string;
  branch: string;
  worktree: string;
  checkpointPath: string;
  patchPath: string;
  /** The commit the attempt's diff is taken against (the base, or the integration head after a rebase request). */
  diffBase: string;
  spawnedAt: number;
  lastTickAt: number | null;
  lastSeenAt: number | null;
  lastStatus: string | null;
  statusSeen: number;
  lastPatchStat: string | null;
  patchSeen: number;
  lastCheckpointMtime: number | null;
  /** Workflow time of the tick that last saw the status or the patch draft change (absent in older runs). */
  progressAt?: number | null;
  /** The first edit target: `seen` once a tick saw a real change in the patch draft, `missed` once the rule fired (absent before either). */
  firstEdit?: 'seen' | 'missed' | null;
  checkpointNudgedAt: number | null;
  unrel: number;
  acked: boolean;
  gates: Gates;
  state: MeshTaskState;
  /** The patch sha when a rebase, re-emit or (after a failed task check) a new patch was requested: the next one must differ. */
  /** `since`: the first tick (workflow time) that found it unchanged after the request (absent in older runs). */
  waitingFor: { what: 'rebase' | 'reemit' | 'check'; sha: string | null; ticks: number; since?: number | null } | null;
  reemits: number;
  /** Warden drafts this attempt's patch only from a checkpoint written after this (epoch ms). */
  draftNotBefore: number;
  /** Ticks that found the attempt done but its final message not (yet) in the deliverable format. */
  outputWaits: number;
  /** Workflow time of the first tick that found it done but its final message not in the format (absent in older runs). */
  outputWaitSince?: number | null;
  /** The agent's turn count at the last tick (a new turn means the agent was seen). */
  turnsSeen: number;
  /** Gates A, O, D and S passed on a finished attempt: it waits for its turn to integrate. */
  ready: boolean;
  /** The patch draft as last seen: its sha and the files it touches. */
  patchSha: string | null;
  patchFiles: string[];
  /** The sha of the draft whose gates passed: integration applies that draft or refuses (absent in older runs). */
  gatedSha?: string | null;
  /** The agent workflow ended (its final state), or null while it runs. */
  agentEnded: string | null;
  /** The agent escalated or was paused (it waits for a human), as its status says; absent or null otherwise. */
  agentNote?: string | null;
  /** The agent's final message as last seen (its last 1,000 characters; absent in older runs). */
  lastOutput?: string | null;
  /** Gates D, S passed but the final message lacks the deliverable sections: integrated with this warning (absent in older runs). */
  warning?: string | null;
  closed: boolean;
  reason: string | null;
  /** A replaced attempt whose worktree and branch were removed (workflow time; absent otherwise). */
  removedAt?: number | null;
  /** It missed the ack SLA or stalled and was kept on with a hedge (another attempt) beside it (absent otherwise). */
  hedged?: boolean;
  /** The task's own check (its `verify` command) on this attempt's last gated patch (absent otherwise). */
  check?: TaskCheckResult | null;
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

/** One run of a task's check command in the attempt's worktree. */
export interface TaskCheckResult {
  command: string;
  /** The patch draft it checked. */
  sha: string | null;
  passed: boolean;
  exitCode: number | null;
  timedOut: boolean;
  outputTail: string;
  at: number;
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

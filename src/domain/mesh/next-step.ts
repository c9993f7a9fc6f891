/**
 * The mesh's scheduler: what the mesh workflow's loop does next, decided from the mesh state and
 * the loop's own few facts (where it is in its round, a cancel, the held rebase requests). The
 * shell (workflows/mesh/loop.ts) carries out each step with Temporal calls and asks again, as the
 * agent's loop does with src/domain/agent/next-step.ts.
 *
 * One round: a cancel ends the mesh; a spent time budget integrates what is ready and fails the
 * rest; a long history continues as new (only between rounds, with nothing in flight); queued
 * tasks are spawned up to the cap; then the mesh waits one tick, observes every live attempt and
 * integrates what is ready; a conflict past the budget waits for a human. When no task is open
 * the mesh validates, is ready, waits for `apply` or a cancel, and cleans up.
 */
import { tickMs } from './rules.js';
import { isOpen, liveAttempts, type MeshStatus } from './state.js';

/** Where the loop is in its round (the shell sets it after each step). */
export type MeshStage = 'setup' | 'round' | 'spawning' | 'settled' | 'waited' | 'ticked' | 'finish' | 'ready' | 'clean-up' | 'end';

/** The loop's own state besides MeshStatus; carried across continue-as-new with it. */
export interface MeshLoop {
  at: MeshStage;
  /** A cancel's reason, once asked. */
  cancel: string | null;
  /** Something changed (an attempt's agent ended): tick now rather than at the interval. */
  wake: boolean;
  /** Rebase requests not sent yet (past the conflict budget), by task index. */
  heldRebase: Record<string, string>;
  /** Alerts sent so far (their notify workflows are numbered). */
  alerts: number;
  /** Runs this mesh continued as new so far. */
  continued: number;
  /** Attempts started by an earlier run whose agents had not ended: this run learns their end from ticks. */
  adopted: string[];
}

export const newLoop = (): MeshLoop => ({ at: 'setup', cancel: null, wake: false, heldRebase: {}, alerts: 0, continued: 0, adopted: [] });

/** When a mesh run continues as new: history events or bytes, whichever comes first (or the server's suggestion). */
export interface MeshRunLimits {
  events: number;
  bytes: number;
}
/** A mesh's history grows by a dozen events a tick and its observations are large: 1,000 events or 2 MB. */
export const MESH_RUN_LIMITS: MeshRunLimits = { events: 1_000, bytes: 2 * 1024 * 1024 };

/** What the shell knows about the run's history. */
export interface MeshHistory {
  historyLength: number;
  historySize: number;
  continueAsNewSuggested: boolean;
}

export type MeshStep =
  | { kind: 'setup' }
  /** Close every attempt, fail the open tasks, publish `cancelled`; then clean up. */
  | { kind: 'cancel' }
  /** Integrate what is ready, fail the open tasks; then finish. */
  | { kind: 'time-budget' }
  | { kind: 'continue-as-new' }
  /** Start the first attempt of this task (1-based index). */
  | { kind: 'spawn'; task: number }
  /** The wave is spawned: queued tasks say they wait for a slot; publish. */
  | { kind: 'settle' }
  /** Wait for the tick (or a wake or a cancel). */
  | { kind: 'wait'; timeoutMs: number }
  /** Observe every live attempt, enforce the rules, integrate what is ready, publish. */
  | { kind: 'tick' }
  /** A conflict past the budget: wait for resume or cancel, then send the held rebase requests. */
  | { kind: 'await-human' }
  /** No task open: close every attempt, validate, publish `ready`, notify. */
  | { kind: 'finish' }
  /** Ready: wait for `apply` or a cancel. */
  | { kind: 'await-apply' }
  | { kind: 'clean-up' }
  | { kind: 'end' };

export const timeBudgetSpent = (s: Pick<MeshStatus, 'tunables' | 'startedAt'>, now: number): boolean =>
  s.tunables.timeBudget !== undefined && now - s.startedAt >= s.tunables.timeBudget;

/** Live attempts across the open tasks (hedges count: each is a worker). */
export const liveCount = (s: Pick<MeshStatus, 'tasks'>): number => s.tasks.filter(isOpen).reduce((n, x) => n + liveAttempts(x).length, 0);

/** The next task to spawn (the first queued one, in task order) if a slot is free, else null. */
export function spawnCandidate(s: Pick<MeshStatus, 'tasks' | 'tunables'>): number | null {
  if (liveCount(s) >= s.tunables.cap) return null;
  return s.tasks.find((r) => r.state === 'queued' && r.attempts.length === 0)?.task.index ?? null;
}

/**
 * Continue as new between rounds when the history is long, but only with nothing in flight that
 * the new run could not pick up: no held rebase request, and every closed attempt's agent seen
 * ended (the new run learns of live attempts' ends from its ticks).
 */
export function shouldContinueAsNew(s: MeshStatus, loop: MeshLoop, h: MeshHistory | null, limits: MeshRunLimits): boolean {
  if (!h || s.phase !== 'running' || Object.keys(loop.heldRebase).length) return false;
  if (s.tasks.some((r) => r.attempts.some((a) => a.closed && a.agentEnded === null))) return false;
  return h.continueAsNewSuggested || h.historyLength >= limits.events || h.historySize >= limits.bytes;
}

/** The end of a round (or after a wave): cancel, finish, or the next round's first step. */
function ending(loop: MeshLoop): MeshStep {
  return loop.cancel ? { kind: 'cancel' } : { kind: 'finish' };
}

function spawnOrSettle(s: MeshStatus): MeshStep {
  const task = spawnCandidate(s);
  return task === null ? { kind: 'settle' } : { kind: 'spawn', task };
}

function round(s: MeshStatus, loop: MeshLoop, now: number, h: MeshHistory | null, limits: MeshRunLimits): MeshStep {
  if (loop.cancel) return { kind: 'cancel' };
  if (timeBudgetSpent(s, now)) return { kind: 'time-budget' };
  if (shouldContinueAsNew(s, loop, h, limits)) return { kind: 'continue-as-new' };
  return spawnOrSettle(s);
}

/** `h` null: continue-as-new is off (before the first round, see workflows/mesh/loop.ts). */
export function nextStep(s: MeshStatus, loop: MeshLoop, now: number, h: MeshHistory | null, limits: MeshRunLimits = MESH_RUN_LIMITS): MeshStep {
  switch (loop.at) {
    case 'setup':
      return { kind: 'setup' };
    case 'round':
      return round(s, loop, now, h, limits);
    case 'spawning':
      return spawnOrSettle(s);
    case 'settled':
      return s.tasks.some(isOpen) ? { kind: 'wait', timeoutMs: tickMs(s.tunables) } : ending(loop);
    case 'waited':
      return loop.cancel ? { kind: 'cancel' } : { kind: 'tick' };
    case 'ticked':
      return s.phase === 'awaiting-input' ? { kind: 'await-human' } : round(s, loop, now, h, limits);
    case 'finish':
      return ending(loop);
    case 'ready':
      return { kind: 'await-apply' };
    case 'clean-up':
      return { kind: 'clean-up' };
    case 'end':
      return { kind: 'end' };
  }
}

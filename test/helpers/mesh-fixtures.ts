/**
 * Pure mesh fixtures for unit tests (no git, no server): a worker task, an attempt and a task record
 * with every field as a fresh spawn leaves it (blankAttempt, as workflows/mesh/attempts.ts spawns), a
 * running mesh holding task records, the tunables of the tick-rule tables, and a seeded PRNG for the
 * property tests. The git and workflow helpers for integration tests are in ./mesh.ts.
 */
import { resolveTasks, TunablesSchema, type MeshTask, type TaskMode } from '../../src/domain/mesh/config.js';
import { initialGates } from '../../src/domain/mesh/gates.js';
import { blankAttempt, type Attempt, type MeshStatus, type TaskRecord } from '../../src/domain/mesh/state.js';

/** The tick-rule tables' tunables: ticks every 1 s, ack SLA 3 s, patch draft timeout 60 s, checkpoint interval 10 s (stall time 2 s). */
export const TICK_TUNABLES = TunablesSchema.parse({ tickInterval: '1s', ackSla: '3s', patchDraftTimeout: '60s', checkpointInterval: '10s' });

/** One resolved worker task titled `t` (slug `1-t`), not verified. */
export function meshTask(mode: TaskMode = 'patch-first', scope: string[] = []): MeshTask {
  const [task] = resolveTasks([{ title: 't', agent: 'worker', mode, skills: [], scope, verify: false }]);
  return task!;
}

/** The first worker attempt at `task`, just spawned and not yet seen, with `over` on top. */
export function freshAttempt(task: MeshTask, over: Partial<Attempt> = {}): Attempt {
  const start = {
    attempt: 1,
    kind: 'worker' as const,
    mode: task.mode,
    agentId: 'r.1-t.a1',
    workflowId: 'agent-r.1-t.a1',
    branch: 'b',
    worktree: '/w',
    checkpointPath: '/c',
    patchPath: '/p',
    diffBase: 'base',
    spawnedAt: 0,
  };
  return { ...blankAttempt(start, initialGates(task, false)), ...over };
}

/** The record of `task`, spawned at 0 with `attempts`, with `over` on top. */
export function taskRecord(task: MeshTask, attempts: Attempt[], over: Partial<TaskRecord> = {}): TaskRecord {
  return {
    task,
    state: 'spawned',
    attempts,
    ackRestarts: 0,
    restarts: 0,
    tookOver: false,
    firstSpawnAt: 0,
    integratedCommit: null,
    integratedAttempt: null,
    next: '',
    reason: null,
    ...over,
  };
}

/** A spawned worker task (`task`) and its one fresh attempt (`a`). */
export function record(mode: 'patch-first' | 'analysis-only' = 'patch-first', scope: string[] = []): { task: TaskRecord; a: Attempt } {
  const t = meshTask(mode, scope);
  const a = freshAttempt(t);
  return { task: taskRecord(t, [a]), a };
}

/** Mesh `r`, running with the tick-rule tunables and no ticks yet, holding `tasks`, with `over` on top. */
export function meshStatus(tasks: TaskRecord[], over: Partial<MeshStatus> = {}): MeshStatus {
  return {
    runId: 'r',
    repo: '/r',
    phase: 'running',
    phaseReason: null,
    tunables: TICK_TUNABLES,
    validate: null,
    base: 'b',
    userBranch: 'main',
    integrationBranch: 'mesh/r/integration',
    integrationDir: '/i',
    integrationHead: 'b',
    startedAt: 0,
    ticks: 0,
    lastTickAt: null,
    conflicts: 0,
    conflictBudget: 3,
    tasks,
    log: [],
    validation: null,
    applied: null,
    spend: {},
    ...over,
  };
}

/** mulberry32: a tiny seeded PRNG in [0, 1), so a property test's failure reproduces from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

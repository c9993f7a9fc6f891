/**
 * The mesh's telemetry events: its attempts started and finished (with their outcome), their gate
 * results, integration, and the mesh's end, for the worker to export as OpenTelemetry log records
 * (docs/operating/observability.md). The mesh shell hands each to the same Temporal sink as the
 * agents' events (`otel.event`): not a command, not in history, not called while a workflow replays.
 *
 * `attrs` holds ids, numbers and enumerations only; free text (a reason, which may quote what an
 * agent wrote or a check printed) goes in `text`, which the worker exports only when its operator
 * opts in (WARDEN_OTEL_INCLUDE_TEXT). Task titles and the tasks' text are never exported.
 */
import { formatGates, GATE_NAMES, type Gates } from './gates.js';
import { liveAttempts, type Attempt, type MeshStatus, type TaskRecord } from './state.js';

export type MeshTelemetryValue = string | number | boolean;

export interface MeshTelemetryEvent {
  name: string;
  attrs: Record<string, MeshTelemetryValue>;
  text?: Record<string, string>;
}

/**
 * How an attempt ended: `integrated`; `done` (analysis-only); `refused` (its patch was refused while
 * another attempt carries on); `hedge-lost` (another attempt won the task); `task-failed`;
 * `replaced` (it needed a rebase after its agent ended: a new attempt takes its place); `closed`
 * (by the tick rules: restarted, taken over, given up); or closed as the mesh finished, failed or
 * was cancelled.
 */
export const ATTEMPT_OUTCOMES = [
  'integrated',
  'done',
  'refused',
  'hedge-lost',
  'task-failed',
  'replaced',
  'closed',
  'mesh-finished',
  'mesh-failed',
  'mesh-cancelled',
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

const attemptAttrs = (runId: string, r: TaskRecord, a: Attempt) => ({
  'warden.mesh.run.id': runId,
  'warden.mesh.task': r.task.index,
  'warden.mesh.attempt': a.attempt,
  'warden.mesh.attempt.kind': a.kind,
  'warden.agent.id': a.agentId,
});

/** An attempt's agent was started; a hedge is one started beside a live attempt of the same task. */
export function attemptStarted(runId: string, r: TaskRecord, a: Attempt): MeshTelemetryEvent {
  return {
    name: 'warden.mesh.attempt.started',
    attrs: { ...attemptAttrs(runId, r, a), 'warden.mesh.attempt.mode': a.mode, 'warden.mesh.attempt.hedge': liveAttempts(r).some((x) => x !== a) },
  };
}

/** An attempt was closed. */
export function attemptFinished(runId: string, r: TaskRecord, a: Attempt, outcome: AttemptOutcome, reason: string): MeshTelemetryEvent {
  return {
    name: 'warden.mesh.attempt.finished',
    attrs: { ...attemptAttrs(runId, r, a), 'warden.mesh.attempt.outcome': outcome, 'warden.mesh.gates': formatGates(a.gates) },
    text: { 'warden.mesh.attempt.reason': reason },
  };
}

export interface GateSnapshot {
  gates: Gates;
  ready: boolean;
}

export const gateSnapshot = (a: Attempt): GateSnapshot => ({ gates: { ...a.gates }, ready: a.ready });

/**
 * The gates' result, when there is a new one since `before`: the attempt passed them (it is ready
 * to integrate), or a gate failed. Null when neither.
 */
export function gateResult(runId: string, r: TaskRecord, a: Attempt, before: GateSnapshot): MeshTelemetryEvent | null {
  const failed = GATE_NAMES.filter((g) => a.gates[g] === 'fail' && before.gates[g] !== 'fail');
  const passed = a.ready && !before.ready;
  if (!passed && failed.length === 0) return null;
  return {
    name: 'warden.mesh.gates',
    attrs: {
      ...attemptAttrs(runId, r, a),
      'warden.mesh.gates': formatGates(a.gates),
      'warden.mesh.gates.passed': passed,
      ...(failed.length ? { 'warden.mesh.gate.failed': failed.join(',') } : {}),
    },
  };
}

/** A gated patch was applied to the integration branch (`merged`), refused, or did not apply (`conflict`). */
export function integration(
  runId: string,
  r: TaskRecord,
  a: Attempt,
  outcome: 'merged' | 'refused' | 'conflict',
  s: Pick<MeshStatus, 'conflicts' | 'conflictBudget'>,
  reason?: string,
): MeshTelemetryEvent {
  return {
    name: 'warden.mesh.integration',
    attrs: {
      ...attemptAttrs(runId, r, a),
      'warden.mesh.integration.outcome': outcome,
      'warden.mesh.patch.files': a.patchFiles.length,
      ...(outcome === 'conflict' ? { 'warden.mesh.conflicts': s.conflicts, 'warden.mesh.conflict_budget': s.conflictBudget } : {}),
    },
    ...(reason ? { text: { 'warden.mesh.integration.reason': reason } } : {}),
  };
}

/** The mesh's workflow ended (applied, cancelled or failed): its tasks by how they ended, its attempts, how long it ran. */
export function meshFinished(s: MeshStatus, now: number): MeshTelemetryEvent {
  const count = (...states: string[]) => s.tasks.filter((r) => states.includes(r.state)).length;
  return {
    name: 'warden.mesh.finished',
    attrs: {
      'warden.mesh.run.id': s.runId,
      'warden.mesh.phase': s.phase,
      'warden.mesh.tasks': s.tasks.length,
      'warden.mesh.tasks.integrated': count('integrated'),
      'warden.mesh.tasks.done': count('done'),
      'warden.mesh.tasks.failed': count('failed'),
      'warden.mesh.attempts': s.tasks.reduce((n, r) => n + r.attempts.length, 0),
      'warden.mesh.conflicts': s.conflicts,
      'warden.mesh.duration_ms': Math.max(0, now - s.startedAt),
    },
    ...(s.phaseReason ? { text: { 'warden.mesh.phase.reason': s.phaseReason } } : {}),
  };
}

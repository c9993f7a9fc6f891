/**
 * The mesh shell's context and its small Temporal calls: the log, the phase and its one commit
 * point (the WardenState search attribute and the dashboard), fire-and-forget signals to the workers (counted, so the mesh does not end before they
 * are sent), closing an attempt, and alerts through the notify workflow.
 */
import { getExternalWorkflowHandle, log, proxySinks, setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { MeshSpec } from '../../src/domain/mesh/config.js';
import type { MeshLoop, MeshRunLimits } from '../../src/domain/mesh/next-step.js';
import { meshAlert } from '../../src/domain/mesh/notify.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import { closeAttempt, type Attempt, type MeshPhase, type MeshStatus, type TaskRecord } from '../../src/domain/mesh/state.js';
import { attemptFinished, type AttemptOutcome, type MeshTelemetryEvent } from '../../src/domain/mesh/telemetry.js';
import { WardenState } from '../../src/domain/contract/search-attributes.js';
import * as m from '../../src/messages/agent.js';
import { startNotifyChild } from '../notify.js';
import type { WardenSinks } from '../ports.js';

const KEEP_LOG = 200;

export interface MeshShell {
  spec: MeshSpec;
  s: MeshStatus;
  loop: MeshLoop;
  limits: MeshRunLimits;
  /** Signals and alerts handed over but not yet sent. */
  pending: number;
  publishedPhase: string;
  /** Block signals to held workers (by agent id), until sent: the rebase request goes only after its block. */
  holds?: Map<string, Promise<void>>;
}

export const hhmmss = (ms: number) => new Date(ms).toISOString().slice(11, 19);
export const now = () => Date.now();

export function record(sh: MeshShell, text: string): void {
  const { log: entries } = sh.s;
  entries.push({ at: now(), text });
  if (entries.length > KEEP_LOG) entries.splice(0, entries.length - KEEP_LOG);
}

/** Sets the phase (state only): it becomes visible at the next commit. */
export function setPhase(sh: MeshShell, phase: MeshPhase, reason?: string | null): void {
  [sh.s.phase, sh.s.phaseReason] = [phase, reason ?? null];
}

/**
 * The mesh's one commit point: publishes the phase (WardenState, when it changed since last
 * published) and the dashboard. Called at the end of every handler, once per main-loop step, and
 * before a wait or an alert the phase must be visible for, continue-as-new and completion.
 */
export function commit(sh: MeshShell): void {
  const { s } = sh;
  if (sh.spec.searchAttributes && sh.publishedPhase !== s.phase) upsertSearchAttributes([{ key: WardenState, value: s.phase }]);
  sh.publishedPhase = s.phase;
  setCurrentDetails(renderDashboard(s, now(), { logLines: 10 }));
}

/** A handler that commits when it ends (an async one once its promise settles). */
export const committed =
  <A extends unknown[], R>(sh: MeshShell, handler: (...args: A) => R) =>
  (...args: A): R => {
    let settling: Promise<unknown> | null = null;
    const done = () => commit(sh);
    try {
      const result = handler(...args);
      if (result instanceof Promise) settling = result;
      return (settling ? settling.finally(done) : result) as R;
    } finally {
      if (!settling) done();
    }
  };

/** Send a signal, counted until sent; the promise settles once it is sent (or failed, logged). */
export function signalSent(sh: MeshShell, workflowId: string, send: () => Promise<void>): Promise<void> {
  sh.pending += 1;
  return send()
    .catch((err: unknown) => log.warn('mesh signal failed', { to: workflowId, error: String(err) }))
    .finally(() => {
      sh.pending -= 1;
    });
}

/** Send a signal without waiting for it. */
export function signal(sh: MeshShell, workflowId: string, send: () => Promise<void>): void {
  void signalSent(sh, workflowId, send);
}

export const steer = (sh: MeshShell, a: Attempt, text: string) =>
  signal(sh, a.workflowId, () => getExternalWorkflowHandle(a.workflowId).signal(m.steerSignal, { text }));

/**
 * A telemetry event to the worker's OpenTelemetry export (src/domain/mesh/telemetry.ts), through the
 * agents' sink: no command, nothing in history, not called while the workflow replays.
 */
export function emit(e: MeshTelemetryEvent | null): void {
  if (e) proxySinks<WardenSinks>().otel.event(e);
}

/** The task an attempt belongs to. */
const taskOf = (sh: MeshShell, a: Attempt): TaskRecord | undefined => sh.s.tasks.find((r) => r.attempts.includes(a));

export function close(sh: MeshShell, a: Attempt, reason: string, outcome: AttemptOutcome): void {
  if (a.closed) return;
  closeAttempt(a, reason);
  const r = taskOf(sh, a);
  if (r) emit(attemptFinished(sh.spec.runId, r, a, outcome, reason));
  if (a.agentEnded === null)
    signal(sh, a.workflowId, () =>
      getExternalWorkflowHandle(a.workflowId).signal(m.stopSignal, { reason: `mesh ${sh.spec.runId}: ${reason}`, drainTimeoutMs: 0 }),
    );
}

export function closeAll(sh: MeshShell, reason: string, outcome: AttemptOutcome): void {
  for (const r of sh.s.tasks) for (const a of r.attempts) close(sh, a, reason, outcome);
}

export type AlertWhat = 'mesh awaiting input' | 'mesh ready' | 'mesh failed';

/** Alerts through the notify workflow, as the agent's (IRC and webhook formats, its retries); counted. */
export function alert(sh: MeshShell, reason: string, what: AlertWhat = 'mesh awaiting input'): void {
  signal(sh, 'webhooks', async () => {
    const { spec } = sh;
    if (spec.notify.log) log.warn(what, { runId: spec.runId, reason });
    // The mesh's own event kind (its title and answer).
    const kind = what === 'mesh ready' ? 'mesh-ready' : what === 'mesh failed' ? 'mesh-failed' : 'mesh-awaiting-input';
    const info = workflowInfo();
    const event = meshAlert({ runId: spec.runId, workflowId: info.workflowId, temporalRunId: info.runId, reason, at: now(), notify: spec.notify, kind });
    if (event) await startNotifyChild(event, ++sh.loop.alerts).catch((err: unknown) => log.warn('mesh alert not started', { error: String(err) }));
  });
}

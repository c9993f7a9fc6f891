/**
 * The agent's telemetry events: what happened to it (state changes, whispers, alerts, budgets,
 * human controls), for the worker to export as OpenTelemetry log records. The rules record an
 * event into the run's outbox; the commit point (visibility.ts `commit`) hands the outbox to the
 * `telemetry` port, which the workflow shell implements with a Temporal sink: not a command, not in
 * history, and not called while a workflow replays. Nothing here is carried across continue-as-new.
 *
 * `attrs` holds names, numbers and enumerations only; free text (a reason, a whisper, a human's
 * note, which may quote what the agent wrote) goes in `text`, which the worker exports only when
 * its operator opts in (WARDEN_OTEL_INCLUDE_TEXT).
 */
import type { AgentEvent, AgentState } from '../contract/states.js';
import type { Whisper } from '../contract/schemas.js';
import type { AgentAction } from './actions.js';
import type { AgentContext } from './context.js';

export type TelemetryValue = string | number | boolean;

export interface TelemetryEvent {
  /** `warden.agent.state_change`, `warden.whisper.queued`, … (docs/operating/observability.md). */
  name: string;
  attrs: Record<string, TelemetryValue>;
  /** Free text: exported only when the worker's operator opts in. */
  text?: Record<string, string>;
}

/** At most this many events wait for the next commit; older ones are dropped (and counted). */
export const MAX_OUTBOX = 100;

/** Record one event for the next commit. */
export function recordEvent(ctx: AgentContext, name: string, attrs: Record<string, TelemetryValue>, text?: Record<string, string>): void {
  const { run, spec } = ctx.core;
  if (run.outbox.length >= MAX_OUTBOX) {
    run.outbox.shift();
    run.outboxDropped += 1;
  }
  run.outbox.push({ name, attrs: { 'warden.agent.id': spec.agentId, ...attrs }, ...(text && { text }) });
}

/** The commit point: every recorded event leaves through the telemetry port, in order. */
export function flushTelemetry(ctx: AgentContext): void {
  const { run, spec } = ctx.core;
  if (run.outboxDropped > 0) {
    ctx.ports.telemetry({ name: 'warden.telemetry.dropped', attrs: { 'warden.agent.id': spec.agentId, 'warden.telemetry.dropped': run.outboxDropped } });
    run.outboxDropped = 0;
  }
  if (run.outbox.length === 0) return;
  const events = run.outbox;
  run.outbox = [];
  for (const e of events) ctx.ports.telemetry(e);
}

/** The state table moved the agent. */
export function recordStateChange(ctx: AgentContext, from: AgentState, to: AgentState, event: AgentEvent, cause: string): void {
  recordEvent(
    ctx,
    'warden.agent.state_change',
    { 'warden.agent.state.previous': from, 'warden.agent.state': to, 'warden.agent.event': event },
    { 'warden.agent.state.reason': cause },
  );
}

/** A whisper was queued for, or delivered to, the agent. */
export function recordWhisper(ctx: AgentContext, stage: 'queued' | 'delivered', w: Whisper): void {
  recordEvent(
    ctx,
    `warden.whisper.${stage}`,
    { 'warden.whisper.type': w.type, 'warden.whisper.id': w.id, 'warden.turns': ctx.core.s.turns },
    { 'warden.whisper.text': w.text },
  );
}

/** Human (or parent-agent) controls whose outcome is an event: the rest (heartbeats, spend) are not. */
export const CONTROLS = ['steer', 'interrupt', 'stop', 'pause', 'resume', 'abort', 'dismiss'] as const;

/** A control signal was taken (`applied`) or refused: its event, with the state the control left. */
export function controlEvent(state: AgentState, control: string, applied: boolean, note: string | undefined): AgentAction {
  return {
    kind: 'event',
    name: 'warden.control',
    attrs: { 'warden.control': control, 'warden.control.applied': applied, 'warden.agent.state': state },
    ...(note ? { text: { 'warden.control.note': note } } : {}),
  };
}

/**
 * The ports through which the agent core acts on the world. The workflow shell (workflows/ports.ts)
 * implements them with Temporal calls; unit tests implement them with a fake clock and recorders.
 * Every port is fire-and-forget: the core never awaits, so every rule stays a plain function.
 */
import type { NotifyWorkflowInput } from '../notify/notify.js';
import type { JoinIncidentInput } from '../notify/incident-activity.js';

/** What the core asks for when an escalation joins an incident (the shell adds the fallback notify id). */
export type IncidentRequest = Omit<JoinIncidentInput, 'fallbackWorkflowId'>;
import type { SearchAttributeKey } from '../contract/search-attributes.js';
import type { AgentCore } from './state.js';
import type { PatchId } from '../contract/patches.js';
import type { TelemetryEvent } from './telemetry.js';

export type SearchAttributeUpdate = { key: SearchAttributeKey<string>; value: string | number | boolean };

export type { PatchId } from '../contract/patches.js';

/** Signals one agent sends another (delegation). */
export type AgentSignal =
  | { name: 'admit'; payload: Record<string, never> }
  | { name: 'stop'; payload: { reason: string; drainTimeoutMs: number } }
  | { name: 'childSpend'; payload: { agentId: string; tokens: number; costUsd: number; turns: number } };

export interface Logger {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

export interface AgentPorts {
  /** Workflow time (deterministic in the shell). */
  now(): number;
  log: Logger;
  /** The Web UI's "current details" text. */
  setDetails(markdown: string): void;
  upsertSearchAttributes(updates: SearchAttributeUpdate[]): void;
  /** Temporal's `patched(id)`: true outside replay and in histories recorded with the change. */
  patched(id: PatchId): boolean;
  /** Start the delivery of one alert (a notifyWorkflow child the agent does not wait for); returns its delivery id (the child's workflow id). */
  startNotification(input: NotifyWorkflowInput): string;
  /**
   * An escalation with a cause joins the incident of its cause (one alert for one cause), through
   * an activity the agent does not wait for; if that fails, the alert goes out alone. Returns the
   * delivery id the alert has if it goes out alone (its own notify workflow's id).
   */
  joinIncident(input: IncidentRequest): string;
  /** Signal another agent's workflow (delegation); the workflow does not end before it is sent. */
  signalAgent(workflowId: string, signal: AgentSignal): void;
  /** Cancel the running driven turn, if any (its process gets its grace period). */
  cancelTurn(): void;
  /** Hand one telemetry event to the worker (a Temporal sink: no command, silent in replay). Only the commit point calls it. */
  telemetry(event: TelemetryEvent): void;
}

/** The core of one run with its ports: what every core function takes. */
export interface AgentContext {
  core: AgentCore;
  ports: AgentPorts;
}

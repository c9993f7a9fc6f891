/**
 * The ports through which the agent core acts on the world. The workflow shell (workflows/ports.ts)
 * implements them with Temporal calls; unit tests implement them with a fake clock and recorders.
 * Every port is fire-and-forget: the core never awaits, so every rule stays a plain function.
 */
import type { NotifyWorkflowInput } from '../notify/notify.js';
import type { SearchAttributeKey } from '../contract/search-attributes.js';
import type { AgentCore } from './state.js';

export type SearchAttributeUpdate = { key: SearchAttributeKey<string>; value: string | number | boolean };

/**
 * The ids of workflow changes that alter replay, asked with `ctx.ports.patched(id)` (Temporal's
 * `patched()`). The committed histories are this version's baseline; a change made after it adds
 * its id here with one line on what it changed (docs/versioning.md).
 */
export type PatchId =
  /** Interrupt ends a blocked wait (awaiting-input) instead of being refused. */
  | 'interrupt-while-blocked'
  /** A steer while a turn waits to be retried joins the input of the retry. */
  | 'steer-joins-retry'
  /** A rate-limited agent blocked for safety.maxBlockedMs in all fails (circuit open). */
  | 'blocked-time-limit'
  /** A long run of an agent whose turns come back to back continues as new at a quiet moment, not at once (src/domain/agent/run-limits.ts). */
  | 'continue-at-quiet-moment'
  /** The mesh continues as new when its history is long (workflows/mesh/loop.ts), runs from before never do. */
  | 'mesh-continue-as-new'
  /** A mesh removes the worktree and branch of a replaced attempt once its agent ended (workflows/mesh/attempts.ts). */
  | 'mesh-attempt-cleanup'
  /** A replaced attempt whose agent ends after the mesh is ready is removed then, not only at clean-up (workflows/mesh/loop.ts). */
  | 'mesh-removal-while-ready'
  /** A mesh holding a rebase request for a human tells the agent of the worker with a block signal (workflows/mesh/attempts.ts). */
  | 'mesh-rebase-hold'
  /** The verify command of a mesh task runs on its gated patch before integration (workflows/mesh/tick.ts). */
  | 'mesh-task-check'
  /** Any change to a protected file (not only a deletion or lost assertions) fails a done-claim (src/domain/agent/verification.ts). */
  | 'protect-any-change'
  /** A mesh task's check runs in a worktree warden makes from the integration head plus the gated patch (meshTaskCheck), not in the worker's (workflows/mesh/check.ts). */
  | 'mesh-check-on-integration'
  /** A mesh attempt with no real change in its patch draft by the first edit target is restarted (src/domain/mesh/rules.ts, asked when it would fire). */
  | 'mesh-first-edit-target'
  /** A mesh with a hedge budget over 1 keeps an attempt that misses the ack SLA or stalls and starts a hedge beside it (workflows/mesh/tick.ts). */
  | 'mesh-hedging'
  /** A `block` needs the holder's token (safety.holdToken), a hold ends after safety.maxHeldMs, and a held external agent's turns are judged (src/domain/agent/held.ts). */
  | 'block-holder'
  /** A mesh gives each worker a holder token and sends it with its `block` (workflows/mesh/attempts.ts). */
  | 'mesh-holder-token';

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
  /** Start the delivery of one alert (a notifyWorkflow child the agent does not wait for). */
  startNotification(input: NotifyWorkflowInput): void;
  /** Signal another agent's workflow (delegation); the workflow does not end before it is sent. */
  signalAgent(workflowId: string, signal: AgentSignal): void;
  /** Cancel the running driven turn, if any (its process gets its grace period). */
  cancelTurn(): void;
}

/** The core of one run with its ports: what every core function takes. */
export interface AgentContext {
  core: AgentCore;
  ports: AgentPorts;
}

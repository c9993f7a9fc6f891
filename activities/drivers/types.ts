/**
 * One interface for every driver (driven mode): run one turn of the agent, as a process or a call,
 * and describe what happened as a Turn. The workflow runs one turn at a time as an activity.
 */
import type { Logger } from 'pino';
import type { DriverSession, TurnResult } from '../../src/domain/contract/activity-types.js';
import type { DriverConfig, Turn, Whisper } from '../../src/domain/contract/schemas.js';

export type { DriverSession, TurnResult };

export interface TurnRequest {
  agentId: string;
  /** The original task. */
  task: string;
  /** 1-based number of this turn. */
  turnNumber: number;
  /**
   * What the agent is told this turn: the task on the first turn, a continuation otherwise, with
   * the whispers and steering queued since the last turn rendered in front (`[CORRECTION] …`,
   * `[steering] …`), all together.
   */
  input: string;
  /** The whispers delivered with this turn (already rendered into `input`). */
  whispers: Whisper[];
  /** What the previous turn's result left in `session`; null on the first turn. */
  session: DriverSession | null;
  /** The agent's working directory, kept across turns and worker restarts. */
  workDir: string;
  /** The agent's private state directory (CODEX_HOME, …), kept across turns and worker restarts. */
  homeDir: string;
  /** The marker a model-driven agent puts at the start of its final message when the task is done. */
  doneMarker: string;
  /** A delegated child's allowed tools (empty or absent: any). Drivers that can enforce it do. */
  toolAllowlist?: string[];
  /**
   * Compaction (the ladder's last resort): this turn starts a fresh context — never resume the
   * previous session — whose first input is `input` (the handoff, after any queued whispers).
   */
  compact?: { handoff: string };
}

export interface DriverContext {
  /** Aborted when the turn is cancelled (interrupt, stop after the drain timeout, abort). */
  signal: AbortSignal;
  /** SIGTERM → this long → SIGKILL of the whole process group. Never a hard kill without it. */
  killGraceMs: number;
  /** Report liveness (and optionally the partial turn so far). Call at least every few seconds. */
  heartbeat(partial?: Partial<Turn>): void;
  log: Logger;
}

export interface Driver {
  readonly name: string;
  /**
   * Run one turn. On cancellation, stop the agent (process group: SIGTERM, grace, SIGKILL), wait
   * until it is gone, and resolve with the partial turn and `interrupted: true` — do not throw.
   * Throw only for a real failure of the turn.
   */
  runTurn(req: TurnRequest, ctx: DriverContext): Promise<TurnResult>;
}

export type DriverFactory<K extends DriverConfig['kind']> = (config: Extract<DriverConfig, { kind: K }>) => Driver;

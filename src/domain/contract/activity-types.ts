/** The activity contract between the workflow (deterministic) and activities/ (side effects). */
import type { AskReason, EvaluationSpend, Tier } from './evaluation.js';
import type { DriverConfig, EvaluatorConfig, Turn, Verdict, WebhookChannel, Whisper, WhisperType } from './schemas.js';

/** One protected file changed since the start commit (git's status letter: A, M, D, R, C, T). */
export interface ProtectedChange {
  path: string;
  status: string;
  /** Lines added and removed (numstat; absent for binary files). */
  added?: number;
  deleted?: number;
  /** Assertion lines the diff removes and adds. */
  assertionsRemoved: number;
  assertionsAdded: number;
}

export interface EvaluateInput {
  agentId: string;
  task: string;
  turns: Turn[];
  reason: 'interval' | 'idle';
  idleMs?: number;
  evaluator: EvaluatorConfig;
  model: string;
  /** The activity's own deadline; it stops its evaluator a little before this. */
  timeoutMs: number;
  /**
   * Index into `turns` of the first turn that may serve as evidence; earlier turns are context only
   * (already judged, or from before the last whisper reached the agent). Absent: 0.
   */
  evidenceFrom?: number;
  /** A whisper reached the agent right before `turns[beforeIndex]` (`turns.length`: after the last one). */
  deliveries?: { beforeIndex: number; type: WhisperType; text: string }[];
  /** The agent's turn number (1-based, over its whole life) of `turns[0]`. Absent = 1. Verdict evidence uses these numbers. */
  firstTurnNumber?: number;
  /**
   * AgentSpec.protect: the working tree's changes to protected paths since the agent's start commit,
   * read by warden right before this evaluation (absent: no `protect`, or nothing changed).
   */
  protectedChanges?: ProtectedChange[];
}

/**
 * What every result may also say (absent in results recorded before it): which tier's verdict stood
 * (`heuristic` for the heuristic, `model` for codex/openai/command; for `tiered` whichever decided),
 * what the model call cost, and for `tiered` why the model was asked (null: it was not) and why its
 * answer was not used.
 */
export interface EvaluateResultExtras {
  tier?: Tier;
  spend?: EvaluationSpend;
  asked?: AskReason | null;
  modelError?: string;
}

export type EvaluateResult =
  | ({ kind: 'verdict'; verdict: Verdict; evaluator: string; durationMs: number } & EvaluateResultExtras)
  | ({ kind: 'skipped'; reason: string; evaluator: string; durationMs: number } & EvaluateResultExtras);

export const NOTIFICATION_EVENTS = [
  'escalation',
  'budget-exhausted',
  'budget-warning',
  'circuit-open',
  'orphaned',
  'awaiting-input',
  'mesh-ready',
  'mesh-failed',
  'mesh-awaiting-input',
  'group-budget-exhausted',
] as const;
/** The mesh's own alerts (`agentId` is `mesh-<run>`): what a human does next is a `warden mesh` verb. */
export const MESH_EVENTS = ['mesh-ready', 'mesh-failed', 'mesh-awaiting-input'] as const;
export type MeshEvent = (typeof MESH_EVENTS)[number];
export interface NotificationEvent {
  event: (typeof NOTIFICATION_EVENTS)[number];
  agentId: string;
  workflowId: string;
  runId: string;
  task: string;
  step: number;
  /** escalation: the verdict that escalated and the ESCALATION whisper. */
  verdict?: Verdict;
  whisper?: string;
  /** escalation: its number, as status counts them (`escalations`): the one its action links answer. */
  escalation?: number;
  /** Every event: one line saying what happened (which budget, how many failures, how long silent). */
  reason: string;
  at: string;
  /** One alert for one cause: the agents that escalated on the same evidence (workflows/incident.ts). */
  incident?: IncidentSummary;
}

/** One agent named in an incident's notification. */
export interface IncidentAgent {
  agentId: string;
  workflowId: string;
  task: string;
  step: number;
  /** Its escalation's number: the one its action links answer. */
  escalation?: number;
  verdict?: Verdict;
  reason: string;
  at: string;
}

/** What an incident's notification says: the cause, and the agents it names. */
export interface IncidentSummary {
  /** The cause's fingerprint (the incident workflow is `warden-incident-<id>`). */
  id: string;
  command: string;
  error: string;
  repo: string;
  branch: string;
  /** The agents this notification names: every agent of the first, the new ones of a follow-up. */
  agents: IncidentAgent[];
  /** Agents in the incident so far, these included. */
  total: number;
  /** A follow-up: agents that joined after the first notification went out. */
  followUp: boolean;
}

export interface NotifyWebhookInput {
  channel: WebhookChannel;
  event: NotificationEvent;
}

/** Opaque per-agent state a driver carries from turn to turn (e.g. a codex/claude session id). */
export type DriverSession = Record<string, string | number | boolean | null>;

/** One driven turn, as the workflow asks for it (activities/turn.ts resolves the directories). */
export interface RunTurnInput {
  agentId: string;
  task: string;
  turnNumber: number;
  input: string;
  whispers: Whisper[];
  session: DriverSession | null;
  driver: DriverConfig;
  /** Explicit working directory, else a per-agent one under $WARDEN_HOME. */
  workDir?: string;
  killGraceMs: number;
  doneMarker: string;
  /** A child's allowed tools (empty: any); drivers that can enforce it do. */
  toolAllowlist?: string[];
  /**
   * Compaction (the ladder's last resort): start a fresh context (no session: `session` is null)
   * whose first input is this handoff (`input` holds it, after any queued whispers).
   */
  compact?: { handoff: string };
}

export interface TurnResult {
  turn: Turn;
  session: DriverSession | null;
  /** The agent says the task is complete. */
  done: boolean;
  /** The turn was cut short by cancellation; `turn` holds the partial output. */
  interrupted?: boolean;
  /** With `done`: the agent's result (a delegated child's deliverable), if it gave one. */
  result?: unknown;
}

export interface CheckResultInput {
  agentId: string;
  result: unknown;
  schema?: Record<string, unknown>;
}

/** A result small enough stays inline in history; a larger one is stored content-addressed. */
export type CheckResultOutput = { ok: true; inline?: unknown; ref?: { sha256: string; bytes: number; path: string } } | { ok: false; errors: string };

/** Where a verification or the start commit is read: resolved by the activity (activities/verify.ts). */
export interface VerifyPlace {
  agentId: string;
  /** verify.cwd, if given. */
  cwd?: string;
  /** A driven agent's working directory (spec.driven.workDir, else its per-agent one). */
  driven: boolean;
  workDir?: string;
}

/** Check a done-claim: the protected paths' diff against `baseCommit`, then the verify command. */
export interface VerifyInput extends VerifyPlace {
  command: string | null;
  timeoutMs: number;
  protect: string[];
  /** The commit the agent started from; null: not a git repository (no protected-path evidence). */
  baseCommit: string | null;
}

export interface VerifyOutput {
  /** Null: no command configured (protect only). */
  exitCode: number | null;
  passed: boolean;
  /** The command ran past its timeout and its process group was killed. */
  timedOut: boolean;
  outputTail: string;
  durationMs: number;
  cwd: string;
  protectedChanges: ProtectedChange[];
  /** Why the protected paths could not be read (no start commit, git failed), else absent. */
  protectedError?: string;
}

export interface BaselineOutput {
  /** HEAD of the agent's working directory, or null with the reason. */
  commit: string | null;
  reason?: string;
  cwd: string;
}

export interface WardenActivities {
  evaluate(input: EvaluateInput): Promise<EvaluateResult>;
  notifyWebhook(input: NotifyWebhookInput): Promise<{ status: number }>;
  runTurn(input: RunTurnInput): Promise<TurnResult>;
  checkResult(input: CheckResultInput): Promise<CheckResultOutput>;
  verifyDone(input: VerifyInput): Promise<VerifyOutput>;
  startCommit(input: VerifyPlace): Promise<BaselineOutput>;
  /** The protected paths' changes, read before an evaluation (no command runs). */
  protectedDiff(input: ProtectedDiffInput): Promise<ProtectedDiffOutput>;
}

/** What `protectedDiff` reads: the protected paths' changes against the start commit. */
export type ProtectedDiffInput = Pick<VerifyInput, keyof VerifyPlace | 'protect' | 'baseCommit'>;
export type ProtectedDiffOutput = Pick<VerifyOutput, 'protectedChanges' | 'protectedError'>;

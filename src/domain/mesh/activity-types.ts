/** The activity contract between meshWorkflow (deterministic) and activities/mesh (git, files, processes). */
import type { MeshTask, Tunables } from './config.js';
import type { Observation } from './rules.js';

export interface MeshSetupInput {
  runId: string;
  repo: string;
  tasks: MeshTask[];
  tunables: Tunables;
  validate: string | null;
  driver: string;
}
export interface MeshSetupOutput {
  repo: string;
  base: string;
  userBranch: string;
  integrationBranch: string;
  integrationDir: string;
  integrationHead: string;
  runDir: string;
  manifestPath: string;
}

export interface PrepareAttemptInput {
  repo: string;
  runId: string;
  slug: string;
  attempt: number;
  /** The commit the worktree branch starts from. */
  from: string;
}
export interface PrepareAttemptOutput {
  worktree: string;
  branch: string;
  checkpointPath: string;
  patchPath: string;
}

export interface ObserveTarget {
  key: string;
  checkpointPath: string;
  patchPath: string;
  worktree: string;
  diffBase: string;
  /**
   * When warden drafts the patch from the worktree's diff: `always` (a direct-edit attempt: every
   * tick), `when-done` (a patch-first worker that wrote none: once its checkpoint says done, newer
   * than `draftNotBefore`, and never over a draft the worker wrote), `never` (analysis-only).
   */
  draftFromWorktree: 'always' | 'when-done' | 'never';
  /** Epoch ms: a `when-done` draft needs a checkpoint written after this (e.g. after a rebase request). */
  draftNotBefore: number;
  workflowId: string;
  /** Which deliverable format the final message must have (gate O). */
  kind: 'worker' | 'explorer';
}
export interface ObserveResult extends Observation {
  key: string;
  /** The agent workflow's state (status query), or null if it could not be asked. */
  agentState: string | null;
  /** When the agent escalated or is paused (it will not act until a human answers it): what it says, else null. */
  agentNote?: string | null;
  patchText: string | null;
}

export interface IntegrateInput {
  integrationDir: string;
  patchPath: string;
  key: string;
  message: string;
  /** The sha of the draft whose gates passed (ObserveResult.patch.sha): a draft changed since is refused. */
  expectSha?: string | null;
  /**
   * The integration head the workflow recorded (the last task integrated): the integration
   * worktree is reset to it before applying, so nothing a dead attempt staged is swept in.
   * Absent in older runs.
   */
  head?: string | null;
}
/** `refused`: git (or warden) refuses the patch for safety, or it is not the draft that was gated: no rebase can fix that. */
export type IntegrateOutput =
  | { applied: true; head: string; already: boolean }
  | { applied: false; error: string; conflictingFiles: string[]; refused?: boolean };

export interface ValidateInput {
  integrationDir: string;
  command: string;
  timeoutMs: number;
}
export interface ValidateOutput {
  ok: boolean;
  exitCode: number | null;
  output: string;
}

/**
 * A task's check on a gated patch: in a worktree warden makes for it (never the worker's), from the
 * integration head plus exactly the gated patch bytes (`expectSha`), removed afterwards.
 */
export interface TaskCheckInput {
  integrationDir: string;
  patchPath: string;
  /** The sha of the draft whose gates passed: a draft changed since is not checked (the check fails). */
  expectSha: string | null;
  /** The integration head the workflow recorded; when the patch does not apply there, `diffBase` (the commit the worker started from). */
  head: string | null;
  diffBase: string;
  /** The attempt (`<run>.<slug>.a<n>`): names the check's worktree and marks its processes. */
  key: string;
  command: string;
  timeoutMs: number;
}
export interface TaskCheckOutput {
  exitCode: number | null;
  passed: boolean;
  timedOut: boolean;
  outputTail: string;
  /** The commit the patch was applied on for the check (null: the check could not run). */
  checkedOn: string | null;
}

export interface ApplyInput {
  repo: string;
  runId: string;
  integrationBranch: string;
  userBranch: string;
}

export interface CleanupInput {
  repo: string;
  runId: string;
}
/** What was removed: worktree paths and branch names (empty on a retry that finds nothing left). */
export interface CleanupOutput {
  worktrees: string[];
  branches: string[];
}

/** One replaced attempt: its worktree and branch, found from the run, task slug and attempt number. */
export interface RemoveAttemptInput {
  repo: string;
  runId: string;
  slug: string;
  attempt: number;
}
/** What was removed (empty on a retry that finds nothing left). */
export interface RemoveAttemptOutput {
  worktree: string | null;
  branch: string | null;
}

export interface MeshActivities {
  meshSetup(input: MeshSetupInput): Promise<MeshSetupOutput>;
  meshPrepareAttempt(input: PrepareAttemptInput): Promise<PrepareAttemptOutput>;
  meshObserve(input: { targets: ObserveTarget[] }): Promise<ObserveResult[]>;
  meshIntegrate(input: IntegrateInput): Promise<IntegrateOutput>;
  meshValidate(input: ValidateInput): Promise<ValidateOutput>;
  meshTaskCheck(input: TaskCheckInput): Promise<TaskCheckOutput>;
  meshApply(input: ApplyInput): Promise<{ commit: string; branch: string }>;
  meshCleanup(input: CleanupInput): Promise<CleanupOutput>;
  meshRemoveAttempt(input: RemoveAttemptInput): Promise<RemoveAttemptOutput>;
}

/**
 * meshWorkflow: one driven agentWorkflow child per task, each in its own git worktree, spawned in
 * waves up to the cap (the rest queued, visibly); durable-timer ticks verify every attempt's
 * artifacts and enforce the tick rules (src/domain/mesh/rules.ts); finished patches pass the gates
 * and are applied one by one in task order onto the integration branch; a patch that does not
 * apply sends a rebase request to the same agent, within the conflict budget. `apply` merges the
 * integration branch into the user's branch. All state is here (and carried across
 * continue-as-new), so a worker or server crash loses nothing. Deterministic: git and files only
 * in activities/mesh. The scheduler is src/domain/mesh/next-step.ts; this is its shell.
 */
import { ActivityFailure, condition } from '@temporalio/workflow';
import { MeshInputSchema, resolveTasks, type MeshInput } from '../../src/domain/mesh/config.js';
import { MESH_RUN_LIMITS, newLoop } from '../../src/domain/mesh/next-step.js';
import { markFailed } from '../../src/domain/mesh/policy.js';
import { isOpen, type MeshStatus } from '../../src/domain/mesh/state.js';
import { meshFinished } from '../../src/domain/mesh/telemetry.js';
import { installHandlers } from './handlers.js';
import { quiet } from './end.js';
import { runLoop } from './loop.js';
import { alert, closeAll, commit, emit, now, record, setPhase, type MeshShell } from './shell.js';

function initialStatus(spec: ReturnType<typeof MeshInputSchema.parse>): MeshStatus {
  const t = spec.tunables;
  return {
    runId: spec.runId,
    repo: spec.repo,
    phase: 'setting-up',
    phaseReason: null,
    tunables: t,
    validate: spec.validate ?? null,
    base: null,
    userBranch: null,
    integrationBranch: `mesh/${spec.runId}/integration`,
    integrationDir: null,
    integrationHead: null,
    startedAt: now(),
    ticks: 0,
    lastTickAt: null,
    conflicts: 0,
    conflictBudget: t.conflictBudget,
    tasks: resolveTasks(spec.tasks).map((task) => ({
      task,
      state: 'queued',
      attempts: [],
      ackRestarts: 0,
      restarts: 0,
      tookOver: false,
      firstSpawnAt: null,
      integratedCommit: null,
      integratedAttempt: null,
      next: 'wait for a slot',
      reason: null,
    })),
    log: [],
    validation: null,
    applied: null,
    spend: {},
  };
}

export async function meshWorkflow(input: MeshInput): Promise<MeshStatus> {
  const spec = MeshInputSchema.parse(input);
  const carried = spec.continued;
  const sh: MeshShell = {
    spec,
    s: carried ? carried.status : initialStatus(spec),
    loop: carried ? carried.loop : newLoop(),
    limits: spec.runLimits ?? MESH_RUN_LIMITS,
    pending: 0,
    publishedPhase: '',
  };
  const { s } = sh;
  installHandlers(sh);
  if (carried) commit(sh); // the carried phase and dashboard, before the first wait
  try {
    await runLoop(sh, { ...input, continued: undefined });
  } catch (err) {
    // A mesh activity that fails for good ends the mesh `failed`, named, and tells the webhooks.
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = `${err.activityType ?? 'a mesh activity'} failed: ${(err.cause?.message ?? err.message).slice(0, 400)}`;
    closeAll(sh, `mesh failed: ${reason}`, 'mesh-failed');
    for (const r of s.tasks.filter(isOpen)) markFailed(r, `mesh failed: ${reason}`);
    record(sh, `MESH FAILED: ${reason}; its workers were stopped`);
    setPhase(sh, 'failed', reason);
    commit(sh); // visible before the alert
    alert(sh, `mesh failed: ${reason}`, 'mesh failed');
  }
  await condition(quiet(sh));
  commit(sh); // before completion
  emit(meshFinished(s, now()));
  return s;
}

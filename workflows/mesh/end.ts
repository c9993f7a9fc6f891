/**
 * The mesh's ending steps: finish (close every attempt, gate V, `ready`), wait for apply (removing
 * replaced attempts whose agents end meanwhile), clean up after apply or cancel, and continue as new.
 */
import { ActivityFailure, allHandlersFinished, condition, continueAsNew, log, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { MeshActivities } from '../../src/domain/mesh/activity-types.js';
import { fitMeshCarried } from '../../src/domain/mesh/carried.js';
import type { MeshInput } from '../../src/domain/mesh/config.js';
import { setGate } from '../../src/domain/mesh/gates.js';
import { readyReason } from '../../src/domain/mesh/policy.js';
import { removableAttempts } from '../../src/domain/mesh/state.js';
import { awaitAdoptedEnds } from './adopted.js';
import { acts, removeReplaced } from './attempts.js';
import { alert, closeAll, commit, now, record, setPhase, type MeshShell } from './shell.js';

const validation = proxyActivities<Pick<MeshActivities, 'meshValidate'>>({ startToCloseTimeout: '11m', retry: { maximumAttempts: 1 } });

/** Every handler finished and every signal handed over. */
export const quiet = (sh: MeshShell) => () => allHandlersFinished() && sh.pending === 0;

/** No task open: every attempt closes, gate V runs on the integration branch, the mesh is ready. */
export async function finish(sh: MeshShell): Promise<void> {
  const { s, spec } = sh;
  closeAll(sh, 'mesh finished', 'mesh-finished');
  if (spec.validate && s.tasks.some((r) => r.state === 'integrated')) {
    setPhase(sh, 'validating');
    commit(sh); // visible during validation
    const v = await validation.meshValidate({ integrationDir: s.integrationDir!, command: spec.validate, timeoutMs: 600_000 });
    s.validation = { ...v, at: now() };
    for (const r of s.tasks) if (r.state === 'integrated') setGate(r.attempts.find((a) => a.attempt === r.integratedAttempt)!, 'V', v.ok ? 'ok' : 'fail');
    record(sh, `VALIDATION ${v.ok ? 'passed' : `failed (exit ${v.exitCode})`}: ${spec.validate}`);
  }
  setPhase(sh, 'ready', readyReason(s));
  commit(sh); // visible before the alert
  alert(sh, `mesh ready: ${s.phaseReason}`, 'mesh ready');
}

/**
 * Ready: wait for apply or a cancel. A replaced attempt whose agent ends meanwhile (it may end after
 * the last task integrated) has its worktree and branch removed then, not only at clean-up.
 */
export async function awaitApply(sh: MeshShell): Promise<void> {
  const { s, loop, spec } = sh;
  const decided = () => s.applied !== null || loop.cancel !== null;
  const removeLate = !spec.keepWorktrees;
  for (;;) {
    await condition(() => decided() || (removeLate && removableAttempts(s.tasks).length > 0));
    if (decided()) return;
    await removeReplaced(sh);
    commit(sh); // a wait inside the step
  }
}

/** After apply or cancel: the workers end (or 2 minutes pass), then their worktrees and the run's branches go. */
export async function cleanUp(sh: MeshShell): Promise<void> {
  const { s, spec } = sh;
  if (spec.keepWorktrees) return record(sh, 'KEPT worktrees and branches (keepWorktrees)');
  if (sh.loop.adopted.length) await awaitAdoptedEnds(sh);
  await condition(() => s.tasks.every((r) => r.attempts.every((a) => a.agentEnded !== null)), '2m');
  try {
    const r = await acts.meshCleanup({ repo: s.repo, runId: spec.runId });
    record(sh, `CLEANED UP: removed ${r.worktrees.length} worktrees and branches ${r.branches.join(', ') || '(none)'}`);
  } catch (err) {
    record(sh, `CLEANUP FAILED: ${err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : String(err)}`);
  }
}

/** A long history: the mesh continues as new with its state; live attempts are adopted by the next run. */
export async function continueMesh(sh: MeshShell, input: MeshInput): Promise<void> {
  await condition(quiet(sh));
  const { s, loop } = sh;
  const adopted = s.tasks.flatMap((r) => r.attempts.filter((a) => a.agentEnded === null).map((a) => a.agentId));
  record(
    sh,
    `CONTINUED AS NEW after ${workflowInfo().historyLength} history events (run ${loop.continued + 1}); ${adopted.length} live attempt${adopted.length === 1 ? '' : 's'} carried`,
  );
  log.info('mesh continuing as new', { runId: s.runId, historyLength: workflowInfo().historyLength, historySize: workflowInfo().historySize });
  const fitted = fitMeshCarried(s);
  if (fitted.trimmed.length) {
    const { bytesBefore, bytesAfter, trimmed } = fitted;
    log.warn('mesh state over its byte budget: detail trimmed before continue-as-new', { runId: s.runId, bytesBefore, bytesAfter, trimmed });
  }
  commit(sh);
  const carried = { status: fitted.status, loop: { ...loop, at: 'round' as const, wake: false, continued: loop.continued + 1, adopted } };
  await continueAsNew<(i: MeshInput) => Promise<unknown>>({ ...input, continued: carried });
}

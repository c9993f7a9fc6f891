/**
 * The mesh's main loop: ask the scheduler for the next step (src/domain/mesh/next-step.ts) and
 * carry it out with Temporal calls: setup, spawns, tick timers, observation and integration,
 * waiting for a human or for `apply`, validation, clean-up, continue-as-new.
 */
import { ActivityFailure, allHandlersFinished, condition, continueAsNew, log, patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { MeshActivities } from '../../src/domain/mesh/activity-types.js';
import { fitMeshCarried } from '../../src/domain/mesh/carried.js';
import type { MeshInput } from '../../src/domain/mesh/config.js';
import { nextStep, type MeshHistory } from '../../src/domain/mesh/next-step.js';
import { markFailed, readyReason } from '../../src/domain/mesh/policy.js';
import { isOpen, rebaseTarget, removableAttempts } from '../../src/domain/mesh/state.js';
import { acts, fail, removeReplaced, sendRebase, spawn } from './attempts.js';
import { alert, closeAll, now, publish, record, type MeshShell } from './shell.js';
import { awaitAdoptedEnds, integrate, tick } from './tick.js';

const validation = proxyActivities<Pick<MeshActivities, 'meshValidate'>>({ startToCloseTimeout: '11m', retry: { maximumAttempts: 1 } });

/** Every handler finished and every signal handed over. */
export const quiet = (sh: MeshShell) => () => allHandlersFinished() && sh.pending === 0;

/** The history as the server reports it; null while continue-as-new is off (histories from before it). */
function history(canContinue: boolean): MeshHistory | null {
  if (!canContinue) return null;
  const info = workflowInfo();
  return { historyLength: info.historyLength, historySize: info.historySize, continueAsNewSuggested: info.continueAsNewSuggested };
}

/** Runs until the mesh ends (returns) or continues as new (throws ContinueAsNew). */
export async function runLoop(sh: MeshShell, input: MeshInput): Promise<void> {
  const { s, loop, spec } = sh;
  let canContinue: boolean | null = null;
  for (;;) {
    // Asked once per run, at its first round: a run replayed from before continue-as-new never continues.
    if (canContinue === null && (loop.at === 'round' || loop.at === 'ticked')) canContinue = patched('mesh-continue-as-new');
    const step = nextStep(s, loop, now(), history(canContinue === true), sh.limits);
    switch (step.kind) {
      case 'setup': {
        const setup = await acts.meshSetup({
          runId: spec.runId,
          repo: spec.repo,
          tasks: s.tasks.map((r) => r.task),
          tunables: s.tunables,
          validate: spec.validate ?? null,
          driver: spec.driver.kind,
        });
        Object.assign(s, {
          repo: setup.repo,
          base: setup.base,
          userBranch: setup.userBranch,
          integrationDir: setup.integrationDir,
          integrationHead: setup.integrationHead,
        });
        record(
          sh,
          `MANIFEST written: ${setup.manifestPath} (${s.tasks.length} tasks, cap ${s.tunables.cap}, base ${setup.base.slice(0, 12)} on ${setup.userBranch})`,
        );
        publish(sh, 'running');
        loop.at = 'round';
        continue;
      }
      case 'time-budget':
        record(sh, `TIME BUDGET: ${Math.round(s.tunables.timeBudget! / 1000)}s spent; integrating what is ready, returning best-effort partial results`);
        await integrate(sh);
        for (const r of s.tasks.filter(isOpen)) fail(sh, r, 'time budget spent');
        loop.at = 'finish';
        continue;
      case 'continue-as-new':
        await continueMesh(sh, input);
        return;
      case 'spawn':
        await spawn(sh, s.tasks[step.task - 1]!, 'worker', s.base!);
        loop.at = 'spawning';
        continue;
      case 'settle':
        for (const r of s.tasks) if (r.state === 'queued') r.next = 'wait for a slot';
        publish(sh);
        loop.at = 'settled';
        continue;
      case 'wait':
        await condition(() => loop.cancel !== null || loop.wake, step.timeoutMs);
        loop.wake = false;
        loop.at = 'waited';
        continue;
      case 'tick':
        await tick(sh);
        await integrate(sh);
        await removeReplaced(sh);
        publish(sh);
        loop.at = 'ticked';
        continue;
      case 'await-human':
        await condition(() => loop.cancel !== null || s.phase !== 'awaiting-input');
        for (const r of s.tasks) if (loop.heldRebase[String(r.task.index)] && rebaseTarget(r)) await sendRebase(sh, r, rebaseTarget(r)!);
        loop.at = 'round';
        continue;
      case 'cancel':
        closeAll(sh, `mesh cancelled: ${loop.cancel}`);
        for (const r of s.tasks.filter(isOpen)) markFailed(r, `cancelled: ${loop.cancel}`);
        record(sh, `CANCELLED: ${loop.cancel}`);
        publish(sh, 'cancelled', loop.cancel);
        loop.at = 'clean-up';
        continue;
      case 'finish':
        await finish(sh);
        loop.at = 'ready';
        continue;
      case 'await-apply':
        await awaitApply(sh);
        if (!s.applied) publish(sh, 'cancelled', loop.cancel);
        loop.at = 'clean-up';
        continue;
      case 'clean-up':
        await cleanUp(sh);
        loop.at = 'end';
        continue;
      case 'end':
        return;
    }
  }
}

/** No task open: every attempt closes, gate V runs on the integration branch, the mesh is ready. */
async function finish(sh: MeshShell): Promise<void> {
  const { s, spec } = sh;
  closeAll(sh, 'mesh finished');
  if (spec.validate && s.tasks.some((r) => r.state === 'integrated')) {
    publish(sh, 'validating');
    const v = await validation.meshValidate({ integrationDir: s.integrationDir!, command: spec.validate, timeoutMs: 600_000 });
    s.validation = { ...v, at: now() };
    for (const r of s.tasks) if (r.state === 'integrated') r.attempts.find((a) => a.attempt === r.integratedAttempt)!.gates.V = v.ok ? 'ok' : 'fail';
    record(sh, `VALIDATION ${v.ok ? 'passed' : `failed (exit ${v.exitCode})`}: ${spec.validate}`);
  }
  publish(sh, 'ready', readyReason(s));
  alert(sh, `mesh ready: ${s.phaseReason}`, 'mesh ready');
}

/**
 * Ready: wait for apply or a cancel. A replaced attempt whose agent ends meanwhile (it may end after
 * the last task integrated) has its worktree and branch removed then, not only at clean-up.
 */
async function awaitApply(sh: MeshShell): Promise<void> {
  const { s, loop, spec } = sh;
  const decided = () => s.applied !== null || loop.cancel !== null;
  const removeLate = !spec.keepWorktrees && patched('mesh-removal-while-ready');
  for (;;) {
    await condition(() => decided() || (removeLate && removableAttempts(s.tasks).length > 0));
    if (decided()) return;
    await removeReplaced(sh);
    publish(sh);
  }
}

/** After apply or cancel: the workers end (or 2 minutes pass), then their worktrees and the run's branches go. */
async function cleanUp(sh: MeshShell): Promise<void> {
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
  publish(sh);
}

/** A long history: the mesh continues as new with its state; live attempts are adopted by the next run. */
async function continueMesh(sh: MeshShell, input: MeshInput): Promise<void> {
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
  const carried = { status: fitted.status, loop: { ...loop, at: 'round' as const, wake: false, continued: loop.continued + 1, adopted } };
  await continueAsNew<(i: MeshInput) => Promise<unknown>>({ ...input, continued: carried });
}

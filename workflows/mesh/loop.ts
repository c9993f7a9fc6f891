/**
 * The mesh's main loop: ask the scheduler for the next step (src/domain/mesh/next-step.ts) and
 * carry it out with Temporal calls: setup, spawns, tick timers, observation and integration,
 * waiting for a human or for `apply`, validation, clean-up, continue-as-new.
 */
import { condition, workflowInfo } from '@temporalio/workflow';
import type { MeshInput } from '../../src/domain/mesh/config.js';
import { nextStep, type MeshHistory } from '../../src/domain/mesh/next-step.js';
import { markFailed } from '../../src/domain/mesh/policy.js';
import { isOpen, rebaseTarget } from '../../src/domain/mesh/state.js';
import { acts, fail, removeReplaced, sendRebase, spawn } from './attempts.js';
import { closeAll, commit, now, record, setPhase, type MeshShell } from './shell.js';
import { integrate } from './integrate.js';
import { tick } from './tick.js';
import { awaitApply, cleanUp, continueMesh, finish } from './end.js';

/** The history as the server reports it; null while continue-as-new is off (before the first round). */
function history(canContinue: boolean): MeshHistory | null {
  if (!canContinue) return null;
  const info = workflowInfo();
  return { historyLength: info.historyLength, historySize: info.historySize, continueAsNewSuggested: info.continueAsNewSuggested };
}

/** Runs until the mesh ends (returns) or continues as new (throws ContinueAsNew); commits once per step. */
export async function runLoop(sh: MeshShell, input: MeshInput): Promise<void> {
  const { s, loop, spec } = sh;
  let canContinue = false;
  for (;;) {
    // A run continues as new only once it reached its first round.
    if (!canContinue && (loop.at === 'round' || loop.at === 'ticked')) canContinue = true;
    const step = nextStep(s, loop, now(), history(canContinue), sh.limits);
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
        setPhase(sh, 'running');
        loop.at = 'round';
        break;
      }
      case 'time-budget':
        record(sh, `TIME BUDGET: ${Math.round(s.tunables.timeBudget! / 1000)}s spent; integrating what is ready, returning best-effort partial results`);
        await integrate(sh);
        for (const r of s.tasks.filter(isOpen)) fail(sh, r, 'time budget spent');
        loop.at = 'finish';
        break;
      case 'continue-as-new':
        await continueMesh(sh, input);
        return;
      case 'spawn':
        await spawn(sh, s.tasks[step.task - 1]!, 'worker', s.base!);
        loop.at = 'spawning';
        break;
      case 'settle':
        for (const r of s.tasks) if (r.state === 'queued') r.next = 'wait for a slot';
        loop.at = 'settled';
        break;
      case 'wait':
        await condition(() => loop.cancel !== null || loop.wake, step.timeoutMs);
        loop.wake = false;
        loop.at = 'waited';
        break;
      case 'tick':
        await tick(sh);
        await integrate(sh);
        await removeReplaced(sh);
        loop.at = 'ticked';
        break;
      case 'await-human':
        await condition(() => loop.cancel !== null || s.phase !== 'awaiting-input');
        for (const r of s.tasks) if (loop.heldRebase[String(r.task.index)] && rebaseTarget(r)) await sendRebase(sh, r, rebaseTarget(r)!);
        loop.at = 'round';
        break;
      case 'cancel':
        closeAll(sh, `mesh cancelled: ${loop.cancel}`, 'mesh-cancelled');
        for (const r of s.tasks.filter(isOpen)) markFailed(r, `cancelled: ${loop.cancel}`);
        record(sh, `CANCELLED: ${loop.cancel}`);
        setPhase(sh, 'cancelled', loop.cancel);
        loop.at = 'clean-up';
        break;
      case 'finish':
        await finish(sh);
        loop.at = 'ready';
        break;
      case 'await-apply':
        await awaitApply(sh);
        if (!s.applied) setPhase(sh, 'cancelled', loop.cancel);
        loop.at = 'clean-up';
        break;
      case 'clean-up':
        await cleanUp(sh);
        loop.at = 'end';
        break;
      case 'end':
        return;
    }
    commit(sh); // once per step
  }
}

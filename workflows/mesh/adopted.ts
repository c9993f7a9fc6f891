/**
 * Attempts adopted across continue-as-new: a continued run cannot await the agents an earlier run
 * started, so it asks their status (meshObserve) to learn which have ended: at each tick (tick.ts)
 * and, after apply or cancel, before clean-up (end.ts). Also what a tick observes of an attempt.
 */
import { sleep } from '@temporalio/workflow';
import { isTerminal, type AgentState } from '../../src/domain/contract/states.js';
import type { ObserveTarget } from '../../src/domain/mesh/activity-types.js';
import { sawAgentEnd } from '../../src/domain/mesh/monitor.js';
import type { Attempt } from '../../src/domain/mesh/state.js';
import { acts } from './attempts.js';
import type { MeshShell } from './shell.js';

/** What meshObserve reads of attempt `a`. */
export const target = (a: Attempt): ObserveTarget => ({
  key: a.agentId,
  checkpointPath: a.checkpointPath,
  patchPath: a.patchPath,
  worktree: a.worktree,
  diffBase: a.diffBase,
  draftFromWorktree: a.mode === 'analysis-only' ? 'never' : a.mode === 'direct-edit' ? 'always' : 'when-done',
  draftNotBefore: a.draftNotBefore,
  workflowId: a.workflowId,
  kind: a.mode === 'analysis-only' ? 'explorer' : 'worker',
});

/** Attempts started by an earlier run of this mesh whose end this run cannot await (it asks their status). */
const adoptedUnended = (sh: MeshShell): Attempt[] =>
  sh.s.tasks.flatMap((r) => r.attempts.filter((a) => a.agentEnded === null && sh.loop.adopted.includes(a.agentId)));

/** Continued runs only: learn which adopted attempts' agents ended; true when none is left running. */
export async function learnEnds(sh: MeshShell): Promise<boolean> {
  const open = adoptedUnended(sh);
  if (!open.length) return true;
  const seen = await acts.meshObserve({ targets: open.map(target) });
  for (const a of open) {
    const st = seen.find((x) => x.key === a.agentId)?.agentState ?? null;
    if (st && isTerminal(st as AgentState)) sawAgentEnd(a, st);
  }
  return adoptedUnended(sh).length === 0;
}

/** After apply or cancel, a continued run polls its adopted attempts (at most ~2 minutes). */
export async function awaitAdoptedEnds(sh: MeshShell): Promise<void> {
  for (let i = 0; i < 24 && !(await learnEnds(sh)); i++) await sleep('5s');
}

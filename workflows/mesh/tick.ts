/**
 * One tick (observe every live attempt, enforce the tick rules) and integration in task order.
 * The policy is src/domain/mesh/policy.ts and rules.ts; this file runs the actions they return.
 */
import { ActivityFailure, CancellationScope, condition, isCancellation, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { WardenActivities } from '../../src/domain/contract/activity-types.js';
import { isTerminal, type AgentState } from '../../src/domain/contract/states.js';
import type { ObserveTarget } from '../../src/domain/mesh/activity-types.js';
import { checkActivityTimeoutMs, checkDue, checkInput, checkOutcome } from '../../src/domain/mesh/check.js';
import { endsAttempt, losers, settleAttempt } from '../../src/domain/mesh/hedge.js';
import { liveCount } from '../../src/domain/mesh/next-step.js';
import { integrationOutcome, lastOutputOf, tickTask } from '../../src/domain/mesh/policy.js';
import { rebaseRequest, tickLine } from '../../src/domain/mesh/render.js';
import { integrationTurn, taskState } from '../../src/domain/mesh/rules.js';
import { activeAttempt, isOpen, liveAttempts, readyAttempt, type Attempt, type TaskRecord } from '../../src/domain/mesh/state.js';
import { acts, fail, holdForRebase, sendRebase, spawn } from './attempts.js';
import { alert, close, hhmmss, now, publish, record, steer, type MeshShell } from './shell.js';

/** A file list for one log line: at most ~300 characters. */
const shortList = (xs: string[]) => {
  const text = xs.join(', ');
  return text.length <= 300 ? text : `${text.slice(0, 280)}, … (${xs.length} files)`;
};

const target = (a: Attempt): ObserveTarget => ({
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
    if (st && isTerminal(st as AgentState)) a.agentEnded = st;
  }
  return adoptedUnended(sh).length === 0;
}

/** After apply or cancel, a continued run polls its adopted attempts (at most ~2 minutes). */
export async function awaitAdoptedEnds(sh: MeshShell): Promise<void> {
  for (let i = 0; i < 24 && !(await learnEnds(sh)); i++) await sleep('5s');
}

export async function tick(sh: MeshShell): Promise<void> {
  const { s } = sh;
  const t = s.tunables;
  if (sh.loop.adopted.length) await learnEnds(sh);
  const live = s.tasks.flatMap((r) => (isOpen(r) ? liveAttempts(r).map((a) => [r, a] as const) : []));
  s.ticks += 1;
  s.lastTickAt = now();
  if (!live.length) return;
  const seen = await acts.meshObserve({ targets: live.map(([, a]) => target(a)) });
  for (const [r, a] of live) {
    const o = seen.find((x) => x.key === a.agentId)!;
    if (a.closed || !isOpen(r)) continue;
    const cp = o.checkpoint.parse?.ok ? o.checkpoint.parse.checkpoint : null;
    record(sh, tickLine(a, cp ? `${cp.statusCode}: ${cp.statusDetail}` : null, cp !== null, o.patch));
    a.patchSha = o.patch.sha;
    a.patchFiles = o.patch.files;
    a.lastOutput = lastOutputOf(o, a.lastOutput);
    if ((o.agentNote ?? null) !== (a.agentNote ?? null)) {
      a.agentNote = o.agentNote ?? null;
      record(sh, a.agentNote ? `AGENT NEEDS A HUMAN task ${r.task.index} ${a.agentId}: ${a.agentNote}` : `AGENT RESUMED task ${r.task.index} ${a.agentId}`);
    }
    if (a.ready) {
      // Finished and gated: waiting for its turn (or for its task check, if the last one could not run).
      if (checkDue(r, a) && patched('mesh-task-check')) await taskCheck(sh, r, a);
      continue;
    }
    // The first edit target acts only in runs that took its patch (asked when it would fire).
    const actions = tickTask(r, a, o, now(), t, { firstEdit: () => patched('mesh-first-edit-target') });
    // Hedging (a budget over 1) only in runs that know it: a run recorded before it replays as one attempt per task.
    const budget = t.hedgeBudget > 1 && endsAttempt(actions) && patched('mesh-hedging') ? t.hedgeBudget : 1;
    for (const x of settleAttempt(r, a, actions, { budget, meshLive: liveCount(s), cap: t.cap })) {
      if (x.kind === 'log') record(sh, x.text);
      else if (x.kind === 'steer') steer(sh, a, x.text);
      else if (x.kind === 'close') close(sh, a, x.reason);
      else if (x.kind === 'spawn') await spawn(sh, r, x.attempt, a.diffBase);
      else fail(sh, r, x.reason);
    }
    if (checkDue(r, a) && patched('mesh-task-check')) await taskCheck(sh, r, a);
    const turn = integrationTurn(s.tasks);
    const cur = activeAttempt(r) ?? a;
    if (isOpen(r))
      r.next =
        cur !== a
          ? `ack by ${hhmmss(cur.spawnedAt + t.ackSla)}`
          : a.ready
            ? turn === r.task.index
              ? 'integrate'
              : `integrate after task ${turn}`
            : a.waitingFor
              ? `await ${a.waitingFor.what === 'check' ? 'a new patch (check failed)' : a.waitingFor.what}`
              : a.acked
                ? 'tick'
                : `ack by ${hhmmss(a.spawnedAt + t.ackSla)}`;
  }
  for (const r of s.tasks) r.state = taskState(r);
}

export async function integrate(sh: MeshShell): Promise<void> {
  const { s, spec } = sh;
  for (let turn = integrationTurn(s.tasks); turn !== null; turn = integrationTurn(s.tasks)) {
    const r = s.tasks[turn - 1]!;
    const a = readyAttempt(r);
    if (!a?.ready || s.phase === 'awaiting-input' || (checkDue(r, a) && patched('mesh-task-check'))) return;
    const lost = losers(r, a);
    if (a.mode === 'analysis-only') {
      [r.state, r.next] = ['done', '-'];
      close(sh, a, 'done');
      record(sh, `DONE task ${r.task.index} ${r.task.slug} (analysis-only)`);
      closeLosers(sh, r.task.index, lost);
      continue;
    }
    r.state = 'applying_patch';
    const message = `mesh ${spec.runId}: task ${r.task.index} ${r.task.slug} (attempt ${a.attempt})`;
    const res = await acts.meshIntegrate({
      integrationDir: s.integrationDir!,
      patchPath: a.patchPath,
      key: a.agentId,
      message,
      expectSha: a.gatedSha ?? a.patchSha,
      head: s.integrationHead,
    });
    const out = integrationOutcome(r, a, res, s);
    if (res.applied) {
      s.integrationHead = res.head;
      [r.state, r.integratedCommit, r.integratedAttempt, r.next] = ['integrated', res.head, a.attempt, '-'];
      record(
        sh,
        `INTEGRATED task ${r.task.index} ${r.task.slug} attempt ${a.attempt}: ${s.integrationBranch} at ${res.head.slice(0, 12)} (${shortList(a.patchFiles)})${a.warning ? ' with a warning' : ''}`,
      );
      close(sh, a, 'integrated');
      closeLosers(sh, r.task.index, lost);
      continue;
    }
    if (out.kind === 'fail') {
      // Refused while a hedge runs: this attempt goes, the task carries on with the others.
      if (liveAttempts(r).length > 1) {
        record(sh, `CLOSED task ${r.task.index} attempt ${a.attempt} (${out.reason}); another attempt carries on`);
        close(sh, a, out.reason);
        r.state = taskState(r);
      } else fail(sh, r, out.reason);
      continue;
    }
    record(
      sh,
      `PATCH DID NOT APPLY task ${r.task.index} attempt ${a.attempt}: ${res.conflictingFiles.join(', ') || res.error.split('\n')[0]} (conflict ${s.conflicts}/${s.conflictBudget})`,
    );
    sh.loop.heldRebase[String(r.task.index)] = rebaseRequest({
      conflictingFiles: res.conflictingFiles,
      error: res.error,
      integrationBranch: s.integrationBranch,
      head: s.integrationHead!,
      patchPath: a.patchPath,
    });
    if (out.kind === 'await-human') {
      r.next = 'wait for a human';
      publish(sh, 'awaiting-input', out.reason);
      alert(sh, out.reason); // counted: the mesh does not end before it is sent
      holdForRebase(sh, r, a, out.reason);
      return;
    }
    await sendRebase(sh, r, a);
    return;
  }
}

/**
 * The task's own check (its `verify` command) on a gated patch, in the attempt's worktree, through
 * the done-claim activity (timeout, output tail, the operator's environment, stale runs killed). It
 * heartbeats: a warden worker that dies mid-check is noticed and the check runs again; a cancel of
 * the mesh cancels it. The decision is src/domain/mesh/check.ts.
 */
async function taskCheck(sh: MeshShell, r: TaskRecord, a: Attempt): Promise<void> {
  const { verifyDone } = proxyActivities<Pick<WardenActivities, 'verifyDone'>>({
    startToCloseTimeout: checkActivityTimeoutMs(r),
    heartbeatTimeout: '15s',
    retry: { maximumAttempts: 3, initialInterval: '1s' },
  });
  record(sh, `CHECK task ${r.task.index} ${a.agentId}: ${r.task.check!.command}`);
  r.next = 'check';
  // A cancel of the mesh cancels the check (its process group is killed); the attempt stays unchecked.
  const scope = new CancellationScope();
  let settled = false;
  const running = scope.run(() => verifyDone(checkInput(r, a)));
  running.then(
    () => (settled = true),
    () => (settled = true),
  );
  await condition(() => settled || sh.loop.cancel !== null);
  if (!settled) scope.cancel();
  let out: Parameters<typeof checkOutcome>[2];
  try {
    out = await running;
  } catch (err) {
    if (isCancellation(err)) return record(sh, `CHECK CANCELLED task ${r.task.index} ${a.agentId}: the mesh is cancelled`);
    const why = err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : String(err);
    out = { exitCode: null, passed: false, timedOut: false, outputTail: `warden could not run the check: ${why}` };
  }
  if (a.closed || !isOpen(r)) return;
  const x = checkOutcome(r, a, out, now(), sh.s.tunables);
  if (x.kind === 'fail') return fail(sh, r, x.reason);
  record(sh, x.log);
  if (x.kind === 'retry') {
    steer(sh, a, x.steer);
    r.next = 'await a new patch (check failed)';
  }
}

/** The hedges that lost: closed (their agents stopped); their worktrees go once their agents end. */
function closeLosers(sh: MeshShell, task: number, lost: Array<[Attempt, string]>): void {
  for (const [x, reason] of lost) {
    record(sh, `HEDGE LOST: task ${task} attempt ${x.attempt} closed: ${reason}`);
    close(sh, x, reason);
  }
}

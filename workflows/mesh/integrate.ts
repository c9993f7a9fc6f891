/**
 * Integration in task order: the ready attempt's gated patch is applied to the integration branch
 * (an activity); the outcome (src/domain/mesh/policy.ts) integrates, fails, asks for a rebase or
 * waits for a human past the conflict budget. Hedges that lost are closed.
 */
import { checkDue } from '../../src/domain/mesh/check.js';
import { losers } from '../../src/domain/mesh/hedge.js';
import { integrationOutcome } from '../../src/domain/mesh/policy.js';
import { rebaseRequest } from '../../src/domain/mesh/render.js';
import { integrationTurn, taskState } from '../../src/domain/mesh/rules.js';
import { liveAttempts, readyAttempt, type Attempt } from '../../src/domain/mesh/state.js';
import { integration } from '../../src/domain/mesh/telemetry.js';
import { acts, fail, holdForRebase, sendRebase } from './attempts.js';
import { alert, close, commit, emit, record, setPhase, type MeshShell } from './shell.js';

/** A file list for one log line: at most ~300 characters. */
const shortList = (xs: string[]) => {
  const text = xs.join(', ');
  return text.length <= 300 ? text : `${text.slice(0, 280)}, … (${xs.length} files)`;
};

export async function integrate(sh: MeshShell): Promise<void> {
  const { s, spec } = sh;
  for (let turn = integrationTurn(s.tasks); turn !== null; turn = integrationTurn(s.tasks)) {
    const r = s.tasks[turn - 1]!;
    const a = readyAttempt(r);
    if (!a?.ready || s.phase === 'awaiting-input' || checkDue(r, a)) return;
    const lost = losers(r, a);
    if (a.mode === 'analysis-only') {
      [r.state, r.next] = ['done', '-'];
      close(sh, a, 'done', 'done');
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
      emit(integration(spec.runId, r, a, 'merged', s));
      close(sh, a, 'integrated', 'integrated');
      closeLosers(sh, r.task.index, lost);
      continue;
    }
    if (out.kind === 'fail') {
      emit(integration(spec.runId, r, a, 'refused', s, out.reason));
      // Refused while a hedge runs: this attempt goes, the task carries on with the others.
      if (liveAttempts(r).length > 1) {
        record(sh, `CLOSED task ${r.task.index} attempt ${a.attempt} (${out.reason}); another attempt carries on`);
        close(sh, a, out.reason, 'refused');
        r.state = taskState(r);
      } else fail(sh, r, out.reason);
      continue;
    }
    record(
      sh,
      `PATCH DID NOT APPLY task ${r.task.index} attempt ${a.attempt}: ${res.conflictingFiles.join(', ') || res.error.split('\n')[0]} (conflict ${s.conflicts}/${s.conflictBudget})`,
    );
    emit(integration(spec.runId, r, a, 'conflict', s, res.conflictingFiles.join(', ') || res.error.split('\n')[0]));
    sh.loop.heldRebase[String(r.task.index)] = rebaseRequest({
      conflictingFiles: res.conflictingFiles,
      error: res.error,
      integrationBranch: s.integrationBranch,
      head: s.integrationHead!,
      patchPath: a.patchPath,
    });
    if (out.kind === 'await-human') {
      r.next = 'wait for a human';
      setPhase(sh, 'awaiting-input', out.reason);
      commit(sh); // visible before the alert and the wait for a human
      alert(sh, out.reason); // counted: the mesh does not end before it is sent
      holdForRebase(sh, r, a, out.reason);
      return;
    }
    await sendRebase(sh, r, a);
    return;
  }
}

/** The hedges that lost: closed (their agents stopped); their worktrees go once their agents end. */
function closeLosers(sh: MeshShell, task: number, lost: Array<[Attempt, string]>): void {
  for (const [x, reason] of lost) {
    record(sh, `HEDGE LOST: task ${task} attempt ${x.attempt} closed: ${reason}`);
    close(sh, x, reason, 'hedge-lost');
  }
}

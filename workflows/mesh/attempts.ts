/**
 * Attempts: spawning one (a driven agentWorkflow child in its own worktree), replacing it
 * (restart, take-over or give up: src/domain/mesh/policy.ts), failing a task, and sending a held
 * rebase request to the same agent or a new attempt.
 */
import { ActivityFailure, getExternalWorkflowHandle, ParentClosePolicy, proxyActivities, startChild, uuid4, workflowInfo } from '@temporalio/workflow';
import type { MeshActivities } from '../../src/domain/mesh/activity-types.js';
import { initialGates } from '../../src/domain/mesh/gates.js';
import { markFailed } from '../../src/domain/mesh/policy.js';
import { sawAgentEnd } from '../../src/domain/mesh/monitor.js';
import { blankAttempt, giveHoldToken, markRemoved, removableAttempts, type Attempt, type TaskRecord } from '../../src/domain/mesh/state.js';
import { rebaseRequested } from '../../src/domain/mesh/waits.js';
import { rebaseWaitReason, workerSpec } from '../../src/domain/mesh/worker.js';
import { agentWorkflow } from '../agent.js';
import * as m from '../../src/messages/agent.js';
import { attemptStarted } from '../../src/domain/mesh/telemetry.js';
import { close, emit, hhmmss, now, record, signalSent, steer, type MeshShell } from './shell.js';

// git and file work is quick: a short timeout lets a dead worker's activity be retried soon.
export const acts = proxyActivities<MeshActivities>({ startToCloseTimeout: '20s', retry: { initialInterval: '1s', maximumAttempts: 5 } });

export async function spawn(sh: MeshShell, r: TaskRecord, kind: Attempt['kind'], from: string, note?: string): Promise<void> {
  const { s, spec } = sh;
  const t = spec.tunables;
  const n = r.attempts.length + 1;
  const prep = await acts.meshPrepareAttempt({ repo: s.repo, runId: spec.runId, slug: r.task.slug, attempt: n, from });
  const agentId = `${spec.runId}.${r.task.slug}.a${n}`;
  const a = blankAttempt(
    {
      attempt: n,
      kind,
      mode: kind === 'takeover' ? 'direct-edit' : r.task.mode,
      agentId,
      workflowId: `agent-${agentId}`,
      ...prep,
      diffBase: from,
      spawnedAt: now(),
    },
    initialGates(r.task, r.task.verify || !!r.task.check || spec.validate !== undefined),
  );
  // The worker's holder token: only the mesh may hold it (a `block` until its rebase turn).
  giveHoldToken(a, uuid4());
  r.attempts.push(a);
  r.firstSpawnAt ??= a.spawnedAt;
  r.state = 'spawned';
  r.next = `ack by ${hhmmss(a.spawnedAt + t.ackSla)}`;
  const child = workerSpec({ spec, task: r.task, attempt: a, base: s.base!, parentWorkflowId: workflowInfo().workflowId, rebaseNote: note });
  const handle = await startChild(agentWorkflow, {
    workflowId: a.workflowId,
    args: [child],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    staticSummary: `mesh ${spec.runId} task ${r.task.index} attempt ${n}${kind === 'takeover' ? ' (take-over, direct edit)' : ''}: ${r.task.title.slice(0, 140)}`,
  });
  handle.result().then(
    (st) => (sawAgentEnd(a, st.state), (sh.loop.wake = true)),
    () => (sawAgentEnd(a, 'failed'), (sh.loop.wake = true)),
  );
  record(
    sh,
    `SPAWNED task ${r.task.index} ${r.task.slug} attempt ${n}${kind === 'takeover' ? ' (take-over: direct edit)' : ''} as ${agentId} in ${a.worktree}`,
  );
  emit(attemptStarted(spec.runId, r, a));
}

export function fail(sh: MeshShell, r: TaskRecord, reason: string): void {
  for (const a of r.attempts) close(sh, a, `task failed: ${reason}`, 'task-failed');
  markFailed(r, reason);
  record(sh, `FAILED task ${r.task.index} ${r.task.slug}: ${reason}`);
}

/** The held rebase request goes to the same agent, or to a new attempt if it has ended. */
export async function sendRebase(sh: MeshShell, r: TaskRecord, a: Attempt): Promise<void> {
  const { s, loop } = sh;
  const key = String(r.task.index);
  const text = loop.heldRebase[key];
  if (!text) return;
  delete loop.heldRebase[key];
  // A held worker got a block signal: the request (a steer, which ends the hold) must not overtake it.
  if (sh.holds?.has(a.agentId)) {
    await sh.holds.get(a.agentId);
    sh.holds.delete(a.agentId);
  }
  if (a.agentEnded === null) {
    rebaseRequested(a, a.patchSha, s.integrationHead!, now());
    r.next = 'await rebase';
    record(sh, `REBASE REQUEST sent to ${a.agentId}`);
    steer(sh, a, text);
  } else {
    close(sh, a, 'rebase needed and the agent has ended', 'replaced');
    await spawn(sh, r, a.kind, s.integrationHead!, text);
  }
}

/**
 * The rebase request is held for a human (past the conflict budget): the worker's agent waits for
 * its rebase turn, so it is told with a `block` signal and shows `blocked` with the reason (no turns,
 * no evaluations meanwhile). The rebase request (a steer) ends that; closing the attempt stops it.
 */
export function holdForRebase(sh: MeshShell, r: TaskRecord, a: Attempt, why: string): void {
  if (a.agentEnded !== null || a.closed) return;
  const reason = rebaseWaitReason(sh.spec.runId, r.task.index, why);
  record(sh, `HOLDING ${a.agentId}: ${reason}`);
  sh.holds ??= new Map();
  sh.holds.set(
    a.agentId,
    signalSent(sh, a.workflowId, () =>
      getExternalWorkflowHandle(a.workflowId).signal(m.blockSignal, { reason, ...(a.holdToken ? { token: a.holdToken } : {}) }),
    ),
  );
}

/**
 * A replaced attempt's worktree and branch go once its agent has ended, not only at the end of the
 * mesh (kept with keepWorktrees).
 */
export async function removeReplaced(sh: MeshShell): Promise<void> {
  const due = sh.spec.keepWorktrees ? [] : removableAttempts(sh.s.tasks);
  if (!due.length) return;
  for (const [r, a] of due) {
    try {
      const out = await acts.meshRemoveAttempt({ repo: sh.s.repo, runId: sh.spec.runId, slug: r.task.slug, attempt: a.attempt });
      record(sh, `REMOVED replaced attempt ${a.agentId}: worktree ${out.worktree ?? '(gone)'}, branch ${out.branch ?? '(gone)'}`);
    } catch (err) {
      record(sh, `REMOVAL FAILED for ${a.agentId}: ${err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : String(err)}`);
    }
    markRemoved(a, now());
  }
}

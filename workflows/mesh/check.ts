/** A task's own check (its `verify` command) on a gated patch: the shell of src/domain/mesh/check.ts. */
import { ActivityFailure, CancellationScope, condition, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { MeshActivities } from '../../src/domain/mesh/activity-types.js';
import { checkActivityTimeoutMs, checkOutcome, taskCheckInput } from '../../src/domain/mesh/check.js';
import { isOpen, type Attempt, type TaskRecord } from '../../src/domain/mesh/state.js';
import { gateResult, gateSnapshot } from '../../src/domain/mesh/telemetry.js';
import { fail } from './attempts.js';
import { emit, now, record, steer, type MeshShell } from './shell.js';

/**
 * The task's own check (its `verify` command) on a gated patch, in a worktree warden makes from
 * the integration head plus exactly the gated patch bytes (meshTaskCheck: timeout, output tail, the
 * operator's environment, contained, stale runs killed), never in the worker's own worktree, where
 * the worker can change tests and scripts outside its patch. It heartbeats: a warden worker that dies mid-check is noticed and the check runs again; a cancel of
 * the mesh cancels it. The decision is src/domain/mesh/check.ts.
 */
export async function taskCheck(sh: MeshShell, r: TaskRecord, a: Attempt): Promise<void> {
  const { meshTaskCheck } = proxyActivities<Pick<MeshActivities, 'meshTaskCheck'>>({
    startToCloseTimeout: checkActivityTimeoutMs(r),
    heartbeatTimeout: '15s',
    retry: { maximumAttempts: 3, initialInterval: '1s' },
  });
  record(sh, `CHECK task ${r.task.index} ${a.agentId}: ${r.task.check!.command}`);
  r.next = 'check';
  // A cancel of the mesh cancels the check (its process group is killed); the attempt stays unchecked.
  const scope = new CancellationScope();
  let settled = false;
  const running = scope.run((): Promise<Parameters<typeof checkOutcome>[2]> => meshTaskCheck(taskCheckInput(r, a, sh.s.integrationDir!, sh.s.integrationHead)));
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
  const before = gateSnapshot(a);
  const x = checkOutcome(r, a, out, now(), sh.s.tunables);
  emit(gateResult(sh.spec.runId, r, a, before));
  if (x.kind === 'fail') return fail(sh, r, x.reason);
  record(sh, x.log);
  if (x.kind === 'retry') {
    steer(sh, a, x.steer);
    r.next = 'await a new patch (check failed)';
  }
}

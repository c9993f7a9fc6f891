/**
 * One tick: observe every live attempt, enforce the tick rules (src/domain/mesh/policy.ts, rules.ts,
 * hedge.ts) and run the actions they return; a gated patch's task check (check.ts). Integration in
 * task order is integrate.ts; adopted attempts (after continue-as-new) are adopted.ts.
 */
import { checkDue } from '../../src/domain/mesh/check.js';
import { endsAttempt, settleAttempt } from '../../src/domain/mesh/hedge.js';
import { sawDraft, sawNote } from '../../src/domain/mesh/monitor.js';
import { liveCount } from '../../src/domain/mesh/next-step.js';
import { lastOutputOf, tickTask } from '../../src/domain/mesh/policy.js';
import { tickLine } from '../../src/domain/mesh/render.js';
import { integrationTurn, taskState } from '../../src/domain/mesh/rules.js';
import { activeAttempt, isOpen, liveAttempts } from '../../src/domain/mesh/state.js';
import { gateResult, gateSnapshot } from '../../src/domain/mesh/telemetry.js';
import { learnEnds, target } from './adopted.js';
import { acts, fail, spawn } from './attempts.js';
import { taskCheck } from './check.js';
import { close, emit, hhmmss, now, record, steer, type MeshShell } from './shell.js';

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
    sawDraft(a, o.patch.sha, o.patch.files, lastOutputOf(o, a.lastOutput));
    if (sawNote(a, o.agentNote ?? null)) {
      record(sh, a.agentNote ? `AGENT NEEDS A HUMAN task ${r.task.index} ${a.agentId}: ${a.agentNote}` : `AGENT RESUMED task ${r.task.index} ${a.agentId}`);
    }
    if (a.ready) {
      // Finished and gated: waiting for its turn (or for its task check, if the last one could not run).
      if (checkDue(r, a)) await taskCheck(sh, r, a);
      continue;
    }
    const before = gateSnapshot(a);
    const actions = tickTask(r, a, o, now(), t);
    emit(gateResult(sh.spec.runId, r, a, before));
    // Hedging: a budget over 1 keeps the attempt that ends and starts a hedge beside it.
    const budget = t.hedgeBudget > 1 && endsAttempt(actions) ? t.hedgeBudget : 1;
    for (const x of settleAttempt(r, a, actions, { budget, meshLive: liveCount(s), cap: t.cap })) {
      if (x.kind === 'log') record(sh, x.text);
      else if (x.kind === 'steer') steer(sh, a, x.text);
      else if (x.kind === 'close') close(sh, a, x.reason, 'closed');
      else if (x.kind === 'spawn') await spawn(sh, r, x.attempt, a.diffBase);
      else fail(sh, r, x.reason);
    }
    if (checkDue(r, a)) await taskCheck(sh, r, a);
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

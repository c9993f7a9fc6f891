/**
 * meshWorkflow: one driven agentWorkflow child per task, each in its own git worktree,
 * spawned in waves up to the cap (the rest queued, visibly); durable-timer ticks verify every
 * attempt's artifacts and enforce the tick rules (src/domain/mesh/rules.ts); finished patches
 * pass the gates and are applied one by one in task order onto the integration branch; a patch
 * that does not apply sends a rebase request to the same agent, within the conflict
 * budget. `apply` merges the integration branch into the user's branch. All state is here, so a
 * worker or server crash loses nothing. Deterministic: git and files only in activities/mesh.
 */
import {
  ActivityFailure,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { MeshInputSchema, resolveTasks, type MeshInput } from '../src/domain/mesh/config.js';
import type { MeshActivities } from '../src/domain/mesh/activity-types.js';
import { initialGates } from '../src/domain/mesh/gates.js';
import { rebaseRequest, renderDashboard, tickLine } from '../src/domain/mesh/render.js';
import { workerSpec } from '../src/domain/mesh/worker.js';
import { integrationTurn, taskState, tickMs } from '../src/domain/mesh/rules.js';
import { integrationOutcome, lastOutputOf, markFailed, readyReason, replacement, tickTask } from '../src/domain/mesh/policy.js';
import { activeAttempt, isOpen, type Attempt, type MeshPhase, type MeshStatus, type TaskRecord } from '../src/domain/mesh/state.js';
import { WardenState } from '../src/domain/contract/search-attributes.js';
import { agentWorkflow } from './agent.js';
import * as m from './messages.js';
import * as mm from './mesh/messages.js';
import { startNotifyChild } from './notify.js';
import { meshAlert } from '../src/domain/mesh/notify.js';

const KEEP_LOG = 200;
const hhmmss = (ms: number) => new Date(ms).toISOString().slice(11, 19);
/** A file list for one log line: at most ~300 characters. */
const shortList = (xs: string[]) => {
  const text = xs.join(', ');
  return text.length <= 300 ? text : `${text.slice(0, 280)}, … (${xs.length} files)`;
};

// git and file work is quick: a short timeout lets a dead worker's activity be retried soon.
const acts = proxyActivities<MeshActivities>({ startToCloseTimeout: '20s', retry: { initialInterval: '1s', maximumAttempts: 5 } });
const validation = proxyActivities<Pick<MeshActivities, 'meshValidate'>>({ startToCloseTimeout: '11m', retry: { maximumAttempts: 1 } });

export async function meshWorkflow(input: MeshInput): Promise<MeshStatus> {
  const spec = MeshInputSchema.parse(input);
  const t = spec.tunables;
  const runId = spec.runId;
  const now = () => Date.now();
  const verify = (v: boolean) => v || spec.validate !== undefined;
  let alerts = 0;
  const s: MeshStatus = {
    runId, repo: spec.repo, phase: 'setting-up', phaseReason: null, tunables: t, validate: spec.validate ?? null,
    base: null, userBranch: null, integrationBranch: `mesh/${runId}/integration`, integrationDir: null, integrationHead: null,
    startedAt: now(), ticks: 0, lastTickAt: null, conflicts: 0, conflictBudget: t.conflictBudget,
    tasks: resolveTasks(spec.tasks).map((task) => ({ task, state: 'queued', attempts: [], ackRestarts: 0, restarts: 0, tookOver: false, firstSpawnAt: null, integratedCommit: null, integratedAttempt: null, next: 'wait for a slot', reason: null })),
    log: [], validation: null, applied: null, spend: {},
  };
  let cancel: string | null = null;
  let wake = false;
  let pendingSignals = 0;
  /** Rebase requests not sent yet (past the conflict budget), by task index; rebuilt identically on replay. */
  const heldRebase = new Map<number, string>();

  const record = (text: string) => {
    s.log.push({ at: now(), text });
    if (s.log.length > KEEP_LOG) s.log.splice(0, s.log.length - KEEP_LOG);
  };
  let publishedPhase = '';
  function publish(phase?: MeshPhase, reason?: string | null): void {
    if (phase) [s.phase, s.phaseReason] = [phase, reason ?? null];
    if (spec.searchAttributes && publishedPhase !== s.phase) upsertSearchAttributes([{ key: WardenState, value: s.phase }]);
    publishedPhase = s.phase;
    setCurrentDetails(renderDashboard(s, now(), { logLines: 10 }));
  }
  function signal(workflowId: string, send: () => Promise<void>): void {
    pendingSignals += 1;
    void send()
      .catch((err: unknown) => log.warn('mesh signal failed', { to: workflowId, error: String(err) }))
      .finally(() => (pendingSignals -= 1));
  }
  const steer = (a: Attempt, text: string) => signal(a.workflowId, () => getExternalWorkflowHandle(a.workflowId).signal(m.steerSignal, { text }));
  function close(a: Attempt, reason: string): void {
    if (a.closed) return;
    a.closed = true;
    a.reason = reason;
    if (a.agentEnded === null) signal(a.workflowId, () => getExternalWorkflowHandle(a.workflowId).signal(m.stopSignal, { reason: `mesh ${runId}: ${reason}`, drainTimeoutMs: 0 }));
  }

  setHandler(mm.meshStatusQuery, () => s);
  setHandler(mm.meshCancelSignal, (p) => {
    cancel ??= p?.reason ?? 'cancelled by a human';
  });
  setHandler(mm.meshResumeSignal, (p) => {
    if (s.phase !== 'awaiting-input') return;
    s.conflictBudget = s.conflicts + t.conflictBudget;
    record(`RESUMED by a human${p?.note ? `: ${p.note}` : ''}; conflict budget now ${s.conflictBudget}`);
    publish('running'); // the main loop sends the rebase requests held back
  });
  setHandler(m.childSpendSignal, (p) => {
    if (p?.agentId) s.spend[p.agentId] = { tokens: p.tokens ?? 0, costUsd: p.costUsd ?? 0, turns: p.turns ?? 0 };
  });
  setHandler(
    mm.meshApplyUpdate,
    async () => {
      const r = await acts.meshApply({ repo: s.repo, runId, integrationBranch: s.integrationBranch, userBranch: s.userBranch! });
      s.applied = { ...r, at: now() };
      record(`APPLIED: merged ${s.integrationBranch} into ${r.branch} (${r.commit.slice(0, 12)})`);
      publish('applied');
      return r;
    },
    {
      validator: () => {
        const open = s.tasks.filter(isOpen);
        if (open.length) throw new Error(`mesh ${runId} has open tasks (${open.map((x) => `${x.task.index} ${x.state}`).join(', ')}); apply refused`);
        if (s.phase !== 'ready') throw new Error(`mesh ${runId} is ${s.phase}; apply needs it ready`);
      },
    },
  );

  async function spawn(r: TaskRecord, kind: Attempt['kind'], from: string, note?: string): Promise<void> {
    const n = r.attempts.length + 1;
    const prep = await acts.meshPrepareAttempt({ repo: s.repo, runId, slug: r.task.slug, attempt: n, from });
    const agentId = `${runId}.${r.task.slug}.a${n}`;
    const a: Attempt = {
      attempt: n, kind, mode: kind === 'takeover' ? 'direct-edit' : r.task.mode, agentId, workflowId: `agent-${agentId}`, ...prep, diffBase: from,
      spawnedAt: now(), lastTickAt: null, lastSeenAt: null, lastStatus: null, statusSeen: 0, lastPatchStat: null, patchSeen: 0, lastCheckpointMtime: null,
      checkpointNudgedAt: null, unrel: 0, acked: false, gates: initialGates(r.task, verify(r.task.verify)), state: 'spawned', waitingFor: null,
      reemits: 0, draftNotBefore: 0, outputWaits: 0, turnsSeen: 0, ready: false, patchSha: null, patchFiles: [], agentEnded: null, closed: false, reason: null,
    };
    r.attempts.push(a);
    r.firstSpawnAt ??= a.spawnedAt;
    r.state = 'spawned';
    r.next = `ack by ${hhmmss(a.spawnedAt + t.ackSla)}`;
    const child = workerSpec({ spec, task: r.task, attempt: a, base: s.base!, parentWorkflowId: workflowInfo().workflowId, rebaseNote: note });
    const handle = await startChild(agentWorkflow, {
      workflowId: a.workflowId,
      args: [child],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      staticSummary: `mesh ${runId} task ${r.task.index} attempt ${n}${kind === 'takeover' ? ' (take-over, direct edit)' : ''}: ${r.task.title.slice(0, 140)}`,
    });
    handle.result().then(
      (st) => ((a.agentEnded = st.state), (wake = true)),
      () => ((a.agentEnded = 'failed'), (wake = true)),
    );
    record(`SPAWNED task ${r.task.index} ${r.task.slug} attempt ${n}${kind === 'takeover' ? ' (take-over: direct edit)' : ''} as ${agentId} in ${a.worktree}`);
  }

  /** Close the attempt and start the next one (a restart), or take over, or give up. */
  async function replace(r: TaskRecord, a: Attempt, how: 'restart' | 'takeover', reason: string): Promise<void> {
    close(a, `${how}: ${reason}`);
    const next = replacement(r, a, how, reason);
    if (next.kind === 'fail') return fail(r, next.reason);
    record(next.log);
    await spawn(r, next.attempt, a.diffBase);
  }
  function fail(r: TaskRecord, reason: string): void {
    for (const a of r.attempts) close(a, `task failed: ${reason}`);
    markFailed(r, reason);
    record(`FAILED task ${r.task.index} ${r.task.slug}: ${reason}`);
  }

  async function tick(): Promise<void> {
    const live = s.tasks.flatMap((r) => (isOpen(r) && activeAttempt(r) ? [[r, activeAttempt(r)!] as const] : []));
    s.ticks += 1;
    s.lastTickAt = now();
    if (!live.length) return;
    const seen = await acts.meshObserve({
      targets: live.map(([, a]) => ({ key: a.agentId, checkpointPath: a.checkpointPath, patchPath: a.patchPath, worktree: a.worktree, diffBase: a.diffBase, draftFromWorktree: a.mode === 'analysis-only' ? ('never' as const) : a.mode === 'direct-edit' ? ('always' as const) : ('when-done' as const), draftNotBefore: a.draftNotBefore, workflowId: a.workflowId, kind: a.mode === 'analysis-only' ? ('explorer' as const) : ('worker' as const) })),
    });
    for (const [r, a] of live) {
      const o = seen.find((x) => x.key === a.agentId)!;
      if (a.closed || !isOpen(r)) continue;
      const cp = o.checkpoint.parse?.ok ? o.checkpoint.parse.checkpoint : null;
      record(tickLine(a, cp ? `${cp.statusCode}: ${cp.statusDetail}` : null, cp !== null, o.patch));
      a.patchSha = o.patch.sha;
      a.patchFiles = o.patch.files;
      a.lastOutput = lastOutputOf(o, a.lastOutput);
      if ((o.agentNote ?? null) !== (a.agentNote ?? null)) {
        a.agentNote = o.agentNote ?? null;
        record(a.agentNote ? `AGENT NEEDS A HUMAN task ${r.task.index} ${a.agentId}: ${a.agentNote}` : `AGENT RESUMED task ${r.task.index} ${a.agentId}`);
      }
      if (a.ready) continue; // finished and gated: waiting for its turn
      for (const x of tickTask(r, a, o, now(), t)) {
        if (x.kind === 'log') record(x.text);
        else if (x.kind === 'steer') steer(a, x.text);
        else if (x.kind === 'replace') await replace(r, a, x.how, x.reason);
        else fail(r, x.reason);
      }
      const turn = integrationTurn(s.tasks);
      const cur = activeAttempt(r) ?? a;
      if (isOpen(r)) r.next = cur !== a ? `ack by ${hhmmss(cur.spawnedAt + t.ackSla)}` : a.ready ? (turn === r.task.index ? 'integrate' : `integrate after task ${turn}`) : a.waitingFor ? `await ${a.waitingFor.what}` : a.acked ? 'tick' : `ack by ${hhmmss(a.spawnedAt + t.ackSla)}`;
    }
    for (const r of s.tasks) r.state = taskState(r);
  }

  async function integrate(): Promise<void> {
    for (let turn = integrationTurn(s.tasks); turn !== null; turn = integrationTurn(s.tasks)) {
      const r = s.tasks[turn - 1]!;
      const a = activeAttempt(r);
      if (!a?.ready || s.phase === 'awaiting-input') return;
      if (a.mode === 'analysis-only') {
        r.state = 'done';
        r.next = '-';
        close(a, 'done');
        record(`DONE task ${r.task.index} ${r.task.slug} (analysis-only)`);
        continue;
      }
      r.state = 'applying_patch';
      const res = await acts.meshIntegrate({ integrationDir: s.integrationDir!, patchPath: a.patchPath, key: a.agentId, message: `mesh ${runId}: task ${r.task.index} ${r.task.slug} (attempt ${a.attempt})`, expectSha: a.gatedSha ?? a.patchSha, head: s.integrationHead });
      const out = integrationOutcome(r, a, res, s);
      if (res.applied) {
        s.integrationHead = res.head;
        [r.state, r.integratedCommit, r.integratedAttempt, r.next] = ['integrated', res.head, a.attempt, '-'];
        record(`INTEGRATED task ${r.task.index} ${r.task.slug} attempt ${a.attempt}: ${s.integrationBranch} at ${res.head.slice(0, 12)} (${shortList(a.patchFiles)})${a.warning ? ' with a warning' : ''}`);
        close(a, 'integrated');
        continue;
      }
      if (out.kind === 'fail') {
        fail(r, out.reason);
        continue;
      }
      record(`PATCH DID NOT APPLY task ${r.task.index} attempt ${a.attempt}: ${res.conflictingFiles.join(', ') || res.error.split('\n')[0]} (conflict ${s.conflicts}/${s.conflictBudget})`);
      heldRebase.set(r.task.index, rebaseRequest({ conflictingFiles: res.conflictingFiles, error: res.error, integrationBranch: s.integrationBranch, head: s.integrationHead!, patchPath: a.patchPath }));
      if (out.kind === 'await-human') {
        const reason = out.reason;
        r.next = 'wait for a human';
        publish('awaiting-input', reason);
        signal('webhooks', () => notifyAll(reason)); // counted: the mesh does not end before they are sent
        return;
      }
      await sendRebase(r, a);
      return;
    }
  }

  /** The rebase request (held in `heldRebase`) goes to the same agent, or to a new attempt if it has ended. */
  async function sendRebase(r: TaskRecord, a: Attempt): Promise<void> {
    const text = heldRebase.get(r.task.index);
    if (!text) return;
    heldRebase.delete(r.task.index);
    if (a.agentEnded === null) {
      a.waitingFor = { what: 'rebase', sha: a.patchSha, ticks: 0 };
      a.diffBase = s.integrationHead!;
      a.draftNotBefore = now();
      r.next = 'await rebase';
      record(`REBASE REQUEST sent to ${a.agentId}`);
      steer(a, text);
    } else {
      close(a, 'rebase needed and the agent has ended');
      await spawn(r, a.kind, s.integrationHead!, text);
    }
  }

  /** Alerts through the notify workflow, as the agent's (IRC and webhook formats, its retries). */
  async function notifyAll(reason: string, what: 'mesh awaiting input' | 'mesh ready' | 'mesh failed' = 'mesh awaiting input'): Promise<void> {
    if (spec.notify.log) log.warn(what, { runId, reason });
    // The mesh's own event kind (its title and answer).
    const kind = what === 'mesh ready' ? 'mesh-ready' : what === 'mesh failed' ? 'mesh-failed' : 'mesh-awaiting-input';
    const alert = meshAlert({ runId, workflowId: workflowInfo().workflowId, temporalRunId: workflowInfo().runId, reason, at: now(), notify: spec.notify, kind });
    if (alert) await startNotifyChild(alert, ++alerts).catch((err: unknown) => log.warn('mesh alert not started', { error: String(err) }));
  }

  /** After apply or cancel: the workers end (or 2 minutes pass), then their worktrees and the run's branches go. */
  async function cleanUp(): Promise<void> {
    if (spec.keepWorktrees) return record('KEPT worktrees and branches (keepWorktrees)');
    await condition(() => s.tasks.every((r) => r.attempts.every((a) => a.agentEnded !== null)), '2m');
    try {
      const r = await acts.meshCleanup({ repo: s.repo, runId });
      record(`CLEANED UP: removed ${r.worktrees.length} worktrees and branches ${r.branches.join(', ') || '(none)'}`);
    } catch (err) {
      record(`CLEANUP FAILED: ${err instanceof ActivityFailure ? (err.cause?.message ?? err.message) : String(err)}`);
    }
    publish();
  }

  // ---------- setup, then waves and ticks; a failing activity ends the mesh as `failed` ----------
  async function run(): Promise<void> {
    const setup = await acts.meshSetup({ runId, repo: spec.repo, tasks: s.tasks.map((r) => r.task), tunables: t, validate: spec.validate ?? null, driver: spec.driver.kind });
    Object.assign(s, { repo: setup.repo, base: setup.base, userBranch: setup.userBranch, integrationDir: setup.integrationDir, integrationHead: setup.integrationHead });
    record(`MANIFEST written: ${setup.manifestPath} (${s.tasks.length} tasks, cap ${t.cap}, base ${setup.base.slice(0, 12)} on ${setup.userBranch})`);
    publish('running');

    while (!cancel) {
      if (t.timeBudget !== undefined && now() - s.startedAt >= t.timeBudget) {
        record(`TIME BUDGET: ${Math.round(t.timeBudget / 1000)}s spent; integrating what is ready, returning best-effort partial results`);
        await integrate();
        for (const r of s.tasks.filter(isOpen)) fail(r, 'time budget spent');
        break;
      }
      for (const r of s.tasks) {
        const active = s.tasks.filter((x) => isOpen(x) && activeAttempt(x)).length;
        if (active >= t.cap) break;
        if (r.state === 'queued' && r.attempts.length === 0) await spawn(r, 'worker', s.base!);
      }
      for (const r of s.tasks) if (r.state === 'queued') r.next = 'wait for a slot';
      publish();
      if (!s.tasks.some(isOpen)) break;
      await condition(() => cancel !== null || wake, tickMs(t));
      wake = false;
      if (cancel) break;
      await tick();
      await integrate();
      publish();
      if (s.phase === 'awaiting-input') {
        await condition(() => cancel !== null || s.phase !== 'awaiting-input');
        for (const r of s.tasks) if (heldRebase.has(r.task.index) && activeAttempt(r)) await sendRebase(r, activeAttempt(r)!);
      }
    }

    if (cancel) {
      for (const r of s.tasks) for (const a of r.attempts) close(a, `mesh cancelled: ${cancel}`);
      for (const r of s.tasks.filter(isOpen)) markFailed(r, `cancelled: ${cancel}`);
      record(`CANCELLED: ${cancel}`);
      publish('cancelled', cancel);
      await cleanUp();
    } else {
      for (const r of s.tasks) for (const a of r.attempts) close(a, 'mesh finished');
      if (spec.validate && s.tasks.some((r) => r.state === 'integrated')) {
        publish('validating');
        const v = await validation.meshValidate({ integrationDir: s.integrationDir!, command: spec.validate, timeoutMs: 600_000 });
        s.validation = { ...v, at: now() };
        for (const r of s.tasks) if (r.state === 'integrated') r.attempts.find((a) => a.attempt === r.integratedAttempt)!.gates.V = v.ok ? 'ok' : 'fail';
        record(`VALIDATION ${v.ok ? 'passed' : `failed (exit ${v.exitCode})`}: ${spec.validate}`);
      }
      publish('ready', readyReason(s));
      signal('webhooks', () => notifyAll(`mesh ready: ${s.phaseReason}`, 'mesh ready'));
      await condition(() => s.applied !== null || cancel !== null);
      if (!s.applied) publish('cancelled', cancel);
      await cleanUp();
    }
  }
  try {
    await run();
  } catch (err) {
    // A mesh activity that fails for good ends the mesh `failed`, named, and tells the webhooks.
    if (!(err instanceof ActivityFailure)) throw err;
    const reason = `${err.activityType ?? 'a mesh activity'} failed: ${(err.cause?.message ?? err.message).slice(0, 400)}`;
    for (const r of s.tasks) for (const a of r.attempts) close(a, `mesh failed: ${reason}`);
    for (const r of s.tasks.filter(isOpen)) markFailed(r, `mesh failed: ${reason}`);
    record(`MESH FAILED: ${reason}; its workers were stopped`);
    publish('failed', reason);
    signal('webhooks', () => notifyAll(`mesh failed: ${reason}`, 'mesh failed'));
  }
  await condition(() => allHandlersFinished() && pendingSignals === 0);
  return s;
}

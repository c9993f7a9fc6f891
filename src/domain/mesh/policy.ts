/**
 * The mesh's per-task policy, pure: what one tick does with one task's live attempt (tickTask),
 * how an attempt is replaced (restart, take-over, or give up: replacement), what an integration
 * result means for the task (integrationOutcome), and how a failed task is marked (markFailed).
 * meshWorkflow runs the actions these return (log lines, steering signals, spawning, git); the
 * functions only update the task and attempt records, as tickAttempt does.
 *
 * Every task ends: each attempt is replaced, integrated or failed within a bounded time (the ack
 * SLA + the patch draft timeout without a checkpoint, the stall time without progress, the patch
 * draft timeout without a patch, the stall time waiting for a final message or a re-emit), and a
 * task has at most 1 + MAX_RESTARTS + 1 (take-over) attempts besides the rebase ones (a hedge,
 * hedge.ts, counts as a restart), which the
 * mesh-wide conflict budget bounds (past it the mesh awaits a human). test/unit/mesh-policy-property.test.ts
 * checks this over random worker behaviour.
 */
import type { IntegrateOutput } from './activity-types.js';
import { gateFinished } from './finished.js';
import { gated, setGate, unready, type GateName } from './gates.js';
import { tickAttempt, type Observation, type RuleGates } from './rules.js';
import { moveTo, type Attempt, type MeshStatus, type TaskRecord } from './state.js';
import type { Tunables } from './config.js';

/** Restarts per task before it is taken over (patch modes) or given up. */
export const MAX_RESTARTS = 3;
/** How much of an agent's final message a task keeps (its end: where the answer is). */
export const LAST_OUTPUT_CHARS = 1_000;

export type TaskAction =
  | { kind: 'log'; text: string }
  | { kind: 'steer'; text: string }
  /** Close the attempt and start another (see `replacement`). */
  | { kind: 'replace'; how: 'restart' | 'takeover'; reason: string }
  | { kind: 'fail'; reason: string };

/** One tick of one live attempt that is not yet ready: the actions, in order. */
export function tickTask(r: TaskRecord, a: Attempt, o: Observation, now: number, t: Tunables, gates: RuleGates = {}): TaskAction[] {
  const out: TaskAction[] = [];
  const act = tickAttempt(r, a, o, now, t, gates);
  if (act.kind === 'steer') out.push({ kind: 'log', text: `REQUEST ${a.agentId}: ${act.text.split('.')[0]}` }, { kind: 'steer', text: act.text });
  else if (act.kind === 'restart' || act.kind === 'takeover') {
    out.push({ kind: 'log', text: act.event });
    if (act.reason.startsWith('ack SLA')) r.ackRestarts += 1;
    out.push({ kind: 'replace', how: act.kind, reason: act.reason });
  } else if (act.kind === 'fail') out.push({ kind: 'fail', reason: act.reason });
  else if (act.kind === 'ready') {
    const g = gateFinished(r, a, o, t, now);
    if (g.kind === 'ready') {
      gated(a, o.patch.sha);
      if (g.warning)
        out.push({
          kind: 'log',
          text: `GATE O task ${r.task.index}: ${g.warning.replace(/^gate O: /, '')}; the patch passed D and S, so it goes on to integration`,
        });
    } else if (g.kind === 'fail') out.push({ kind: 'fail', reason: g.reason });
    else if (g.kind === 'reemit')
      out.push({ kind: 'log', text: `GATE FAILED task ${r.task.index}: ${g.failed.join('; ')}; re-emit requested` }, { kind: 'steer', text: g.text });
  }
  const ended = out.some((x) => x.kind === 'replace' || x.kind === 'fail');
  if (!ended && !a.closed && !a.ready && a.agentEnded !== null && act.kind !== 'ready')
    out.push({ kind: 'replace', how: 'restart', reason: `the agent ended ${a.agentEnded} without a finished checkpoint` });
  return out;
}

export type Replacement = { kind: 'spawn'; attempt: 'worker' | 'takeover'; log: string } | { kind: 'fail'; reason: string };

/** Replace attempt `a`: restart (up to MAX_RESTARTS), then take over with a direct edit (patch modes, once), then give up. */
export function replacement(r: TaskRecord, a: Attempt, how: 'restart' | 'takeover', reason: string): Replacement {
  if (how === 'restart' && r.restarts >= MAX_RESTARTS) how = r.task.mode === 'analysis-only' || r.tookOver ? 'restart' : 'takeover';
  if (how === 'restart' && r.restarts >= MAX_RESTARTS) return { kind: 'fail', reason: `gave up after ${r.restarts} restarts (${reason})` };
  if (how === 'takeover') {
    if (r.tookOver) return { kind: 'fail', reason };
    r.tookOver = true;
    r.state = 'taking_over';
    return { kind: 'spawn', attempt: 'takeover', log: `Action: cancel ${a.agentId} and switch task ${r.task.index} to a direct-edit attempt` };
  }
  r.restarts += 1;
  r.state = 'restarting';
  return { kind: 'spawn', attempt: 'worker', log: `Action: restart task ${r.task.index} (close ${a.agentId}, spawn attempt ${r.attempts.length + 1})` };
}

export type IntegrationOutcome = { kind: 'integrated' } | { kind: 'fail'; reason: string } | { kind: 'rebase' } | { kind: 'await-human'; reason: string };

/** What an integration result means: integrated (gate P ok), refused for safety (fail), or a conflict (rebase, or past the budget a human). */
export function integrationOutcome(r: TaskRecord, a: Attempt, res: IntegrateOutput, s: Pick<MeshStatus, 'conflicts' | 'conflictBudget'>): IntegrationOutcome {
  if (res.applied) {
    setGate(a, 'P', 'ok');
    if (a.warning) r.warnings = [...(r.warnings ?? []).filter((w) => w !== a.warning), a.warning];
    return { kind: 'integrated' };
  }
  setGate(a, 'P', 'fail');
  if (res.refused) {
    // Refused for safety (or not the draft that was gated): a rebase cannot fix it.
    const gate = /^gate ([A-Z]):/.exec(res.error)?.[1];
    if (gate === 'D') {
      setGate(a, 'P', '--');
      setGate(a, 'D', 'fail');
    }
    return { kind: 'fail', reason: `${res.error.replace(/^gate ([A-Z]):/, 'gate $1 refused:')}; not integrated` };
  }
  unready(a);
  r.state = 'needs_rebase';
  moveTo(a, 'needs_rebase');
  s.conflicts += 1;
  if (s.conflicts > s.conflictBudget)
    return { kind: 'await-human', reason: `conflict budget spent (${s.conflictBudget}); give the tasks explicit scopes, a smaller cap, or resume` };
  return { kind: 'rebase' };
}

/** The gate a failure reason names (or implies), or null (a time budget, a cancel, a crash). */
export function failedGateOf(reason: string): GateName | null {
  const named = /\bgate ([ACODPSV])\b/.exec(reason)?.[1];
  if (named) return named as GateName;
  if (/no patch draft/.test(reason)) return 'D';
  if (/no re-emitted output/.test(reason)) return 'O';
  if (/rebase request|did not apply|conflict/.test(reason)) return 'P';
  if (/ack SLA/.test(reason)) return 'A';
  if (/patch draft does not exist/.test(reason)) return 'D';
  if (/missing-artifact|checkpoint/.test(reason)) return 'C';
  return null;
}

/** Mark a task failed, with the gate that failed it and its last attempt's final message as last seen. */
export function markFailed(r: TaskRecord, reason: string): void {
  r.state = 'failed';
  r.reason = reason;
  r.next = '-';
  r.failedGate = failedGateOf(reason);
  r.lastOutput = [...r.attempts].reverse().find((x) => x.lastOutput)?.lastOutput ?? null;
}

/** The end of the agent's final message as the tick saw it (bounded), else what was kept before. */
export const lastOutputOf = (o: Observation, before: string | null | undefined): string | null =>
  o.lastTurn?.text ? o.lastTurn.text.slice(-LAST_OUTPUT_CHARS) : (before ?? null);

/** The `ready` phase's reason: how many tasks went through, with warnings, failed; validation; how to merge. */
export function readyReason(s: Pick<MeshStatus, 'tasks' | 'validation' | 'runId'>): string {
  const failed = s.tasks.filter((r) => r.state === 'failed').length;
  const warned = s.tasks.filter((r) => r.state !== 'failed' && r.warnings?.length).length;
  return `${s.tasks.length - failed} of ${s.tasks.length} tasks through${warned ? ` (${warned} with warnings)` : ''}${failed ? `, ${failed} failed` : ''}${s.validation && !s.validation.ok ? '; validation failed' : ''}; \`warden mesh apply ${s.runId}\` merges`;
}

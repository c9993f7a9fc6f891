/** Hedging in tables: what the end of a tick means for a task with a hedge budget, the winner and losers, and the helpers that count live attempts. */
import { describe, expect, test } from 'vitest';
import { TunablesSchema } from '../../src/domain/mesh/config.js';
import { losers, settleAttempt, type HedgeRoom } from '../../src/domain/mesh/hedge.js';
import { liveCount, spawnCandidate } from '../../src/domain/mesh/next-step.js';
import { MAX_RESTARTS, type TaskAction } from '../../src/domain/mesh/policy.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import { taskState } from '../../src/domain/mesh/rules.js';
import { rebaseTarget, removableAttempts, type Attempt, type MeshStatus, type TaskRecord } from '../../src/domain/mesh/state.js';
import { freshAttempt, meshTask, taskRecord } from '../helpers/mesh-fixtures.js';

const TASK = meshTask('patch-first', ['a.txt']);

/** Worker attempt `n` at TASK, each in its own worktree and branch, with `over` on top. */
const attempt = (n: number, over: Partial<Attempt> = {}): Attempt =>
  freshAttempt(TASK, { attempt: n, agentId: `r.t.a${n}`, workflowId: `agent-r.t.a${n}`, branch: `mesh/r/t-a${n}`, worktree: `/w${n}`, ...over });

/** TASK running with `attempts`, with `over` on top. */
const task = (attempts: Attempt[], over: Partial<TaskRecord> = {}): TaskRecord => taskRecord(TASK, attempts, { state: 'running', ...over });

const ACK: TaskAction[] = [
  { kind: 'log', text: 'ACK SLA MISSED: no checkpoint' },
  { kind: 'replace', how: 'restart', reason: 'ack SLA missed: no checkpoint 5s after spawn (SLA 5s)' },
];
const STALL: TaskAction[] = [
  { kind: 'log', text: 'STALL DETECTED: no progress' },
  { kind: 'replace', how: 'restart', reason: 'stall: no progress' },
];
const room = (budget: number, meshLive = 1, cap = 4): HedgeRoom => ({ budget, meshLive, cap });
const kinds = (xs: { kind: string }[]) => xs.map((x) => x.kind);

describe('settleAttempt', () => {
  test('hedge budget 1: a restart closes the attempt and starts the next, a failure fails the task (as before hedging)', () => {
    const a = attempt(1);
    const r = task([a]);
    expect(settleAttempt(r, a, ACK, room(1))).toEqual([
      { kind: 'log', text: 'ACK SLA MISSED: no checkpoint' },
      { kind: 'close', reason: 'restart: ack SLA missed: no checkpoint 5s after spawn (SLA 5s)' },
      { kind: 'log', text: 'Action: restart task 1 (close r.t.a1, spawn attempt 2)' },
      { kind: 'spawn', attempt: 'worker' },
    ]);
    expect([r.restarts, a.hedged]).toEqual([1, undefined]);
    expect(settleAttempt(r, a, [{ kind: 'fail', reason: 'gate S failed' }], room(1))).toEqual([{ kind: 'fail', reason: 'gate S failed' }]);
  });

  test('hedge budget 2: an attempt that misses the ack SLA is kept and a hedge spawned beside it, counted as a restart', () => {
    const a = attempt(1);
    const r = task([a]);
    const steps = settleAttempt(r, a, ACK, room(2));
    expect(steps).toEqual([
      { kind: 'log', text: 'ACK SLA MISSED: no checkpoint' },
      {
        kind: 'log',
        text: 'HEDGE: task 1 1-t spawned attempt 2 alongside attempt 1 (ack SLA missed: no checkpoint 5s after spawn (SLA 5s)); attempt 1 stays on (hedge budget 2)',
      },
      { kind: 'spawn', attempt: 'worker' },
    ]);
    expect([a.closed, a.hedged, r.restarts]).toEqual([false, true, 1]);
  });

  test('a stall is hedged too; with budget 3 the hedge that stalls gets its own hedge', () => {
    const a1 = attempt(1, { hedged: true });
    const a2 = attempt(2);
    const r = task([a1, a2], { restarts: 1 });
    expect(kinds(settleAttempt(r, a2, STALL, room(3, 2)))).toEqual(['log', 'log', 'spawn']);
    expect(a2.hedged).toBe(true);
    expect(r.restarts).toBe(2);
  });

  test.each([
    ['the task has its budget of live attempts', room(2, 2), 2],
    ['the mesh has no free slot under the cap', room(3, 4, 4), 1],
  ])('no hedge when %s: the attempt is restarted as before', (_what, rm, live) => {
    const others = live > 1 ? [attempt(1, { hedged: true })] : [];
    const a = attempt(others.length + 1);
    const r = task([...others, a]);
    expect(kinds(settleAttempt(r, a, STALL, rm))).toEqual(['log', 'close', 'log', 'spawn']);
    expect(a.hedged).toBeUndefined();
  });

  test('no hedge once the restarts are spent: the attempt is taken over', () => {
    const a = attempt(1);
    const r = task([a], { restarts: MAX_RESTARTS });
    const steps = settleAttempt(r, a, STALL, room(2));
    expect(steps.at(-1)).toEqual({ kind: 'spawn', attempt: 'takeover' });
    expect(r.tookOver).toBe(true);
  });

  test('a kept attempt that stalls again stays on, quietly, while its hedge runs', () => {
    const a1 = attempt(1, { hedged: true });
    const r = task([a1, attempt(2)], { restarts: 1 });
    expect(settleAttempt(r, a1, STALL, room(2, 2))).toEqual([]);
    expect([a1.closed, r.restarts]).toEqual([false, 1]);
  });

  test('two kept attempts do not hold each other up: the one that stalls again is closed', () => {
    const a1 = attempt(1, { hedged: true });
    const a2 = attempt(2, { hedged: true });
    const r = task([a1, a2], { restarts: 1 });
    expect(settleAttempt(r, a1, STALL, room(2, 2))).toEqual([
      { kind: 'log', text: 'STALL DETECTED: no progress' },
      { kind: 'log', text: 'CLOSED task 1 attempt 1 (restart: stall: no progress); attempt 2 carries on' },
      { kind: 'close', reason: 'restart: stall: no progress' },
    ]);
  });

  test('a kept attempt whose agent ended is closed, not replaced: its hedge carries on', () => {
    const a1 = attempt(1, { hedged: true, agentEnded: 'failed' });
    const r = task([a1, attempt(2)], { restarts: 1 });
    const steps = settleAttempt(r, a1, [{ kind: 'replace', how: 'restart', reason: 'the agent ended failed without a finished checkpoint' }], room(2, 2));
    expect(kinds(steps)).toEqual(['log', 'close']);
    expect(r.restarts).toBe(1);
  });

  test('a failure while another attempt runs closes this attempt only; the last attempt fails the task', () => {
    const a1 = attempt(1, { hedged: true });
    const a2 = attempt(2);
    const r = task([a1, a2], { restarts: 1 });
    const fail: TaskAction[] = [{ kind: 'fail', reason: 'gate A failed: no checkpoint' }];
    expect(kinds(settleAttempt(r, a1, fail, room(2, 2)))).toEqual(['log', 'close']);
    a1.closed = true;
    expect(settleAttempt(r, a2, fail, room(2, 1))).toEqual([{ kind: 'fail', reason: 'gate A failed: no checkpoint' }]);
  });

  test('giving up (restarts and the take-over spent) while another attempt runs closes this attempt only', () => {
    const a1 = attempt(1, { hedged: true });
    const a2 = attempt(2, { kind: 'takeover', mode: 'direct-edit' });
    const r = task([a1, a2], { restarts: MAX_RESTARTS, tookOver: true });
    expect(kinds(settleAttempt(r, a2, STALL, room(2, 2)))).toEqual(['log', 'log', 'close']);
    expect(r.state).toBe('running');
  });
});

describe('the winner and the losers', () => {
  test('the first ready live attempt wins; the other live ones lose; the task shows the ready one', () => {
    const a1 = attempt(1, { hedged: true, state: 'waiting_checkpoint' });
    const a2 = attempt(2, { ready: true, state: 'running' });
    const a3 = attempt(3, { closed: true });
    const r = task([a1, a2, a3]);
    expect(taskState(r)).toBe('running');
    expect(losers(r, a2)).toEqual([[a1, 'attempt 2 won the task (its patch passed the gates first)']]);
  });

  test('a held rebase goes to the attempt whose patch did not apply, not the newest', () => {
    const a1 = attempt(1, { state: 'needs_rebase' });
    const r = task([a1, attempt(2)]);
    expect(rebaseTarget(r)).toBe(a1);
    expect(rebaseTarget(task([attempt(1)]))?.attempt).toBe(1);
  });

  test.each([
    ['a hedge that lost to the integrated attempt 1 (the last attempt) is removed', 'integrated', 1, [2]],
    ['attempt 1 lost to the integrated hedge 2', 'integrated', 2, [1]],
    ['a failed task keeps its last attempt', 'failed', null, [1]],
  ] as const)('removableAttempts: %s', (_what, state, integratedAttempt, want) => {
    const r = task([attempt(1, { closed: true, agentEnded: 'stopped' }), attempt(2, { closed: true, agentEnded: 'stopped' })], { state, integratedAttempt });
    expect(removableAttempts([r]).map(([, a]) => a.attempt)).toEqual(want);
  });

  test('removableAttempts: an analysis-only task done by attempt 1 keeps it and removes the hedge', () => {
    const r = task([attempt(1, { closed: true, agentEnded: 'completed', reason: 'done' }), attempt(2, { closed: true, agentEnded: 'stopped' })], {
      state: 'done',
    });
    expect(removableAttempts([r]).map(([, a]) => a.attempt)).toEqual([2]);
  });
});

describe('live attempts across the mesh', () => {
  const tun = TunablesSchema.parse({ cap: 3, hedgeBudget: 2 });
  const s = (tasks: TaskRecord[]) => ({ tasks, tunables: tun });

  test('hedges count against the cap: a queued task waits for a slot', () => {
    const hedgedTask = task([attempt(1, { hedged: true }), attempt(2)]);
    const other = task([attempt(1)]);
    const queued = task([], { state: 'queued' });
    queued.task = { ...TASK, index: 3 };
    expect(liveCount(s([hedgedTask, other, queued]))).toBe(3);
    expect(spawnCandidate(s([hedgedTask, other, queued]))).toBeNull();
    hedgedTask.attempts[0]!.closed = true;
    expect(spawnCandidate(s([hedgedTask, other, queued]))).toBe(3);
  });

  test('the dashboard shows every live attempt of a hedged task', () => {
    const r = task([attempt(1, { hedged: true }), attempt(2)]);
    const status = { runId: 'r', phase: 'running', tunables: tun, tasks: [r], log: [], conflicts: 0, conflictBudget: 2 } as unknown as MeshStatus;
    const row = renderDashboard(status, 0)
      .split('\n')
      .find((l) => l.startsWith('1 1-t'))!;
    expect(row.split(/\s{2,}/).slice(0, 3)).toEqual(['1 1-t', 'r.t.a2', '1+2']);
    // Integrated from attempt 1, the hedge that lost being the last: the row shows the winner.
    for (const x of r.attempts) x.closed = true;
    [r.state, r.integratedAttempt] = ['integrated', 1];
    const done = renderDashboard(status, 0)
      .split('\n')
      .find((l) => l.startsWith('1 1-t'))!;
    expect(done.split(/\s{2,}/).slice(0, 3)).toEqual(['1 1-t', 'r.t.a1', '1']);
  });
});

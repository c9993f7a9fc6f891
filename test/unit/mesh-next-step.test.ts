/** The mesh scheduler in tables: what the loop does next from the mesh state, its stage, a cancel and the history. */
import { describe, expect, test } from 'vitest';
import { MeshInputSchema, resolveTasks, TunablesSchema } from '../../src/domain/mesh/config.js';
import { newLoop, nextStep, shouldContinueAsNew, spawnCandidate, type MeshHistory, type MeshLoop, type MeshStage } from '../../src/domain/mesh/next-step.js';
import { removableAttempts, type Attempt, type MeshStatus, type MeshTaskState, type TaskRecord } from '../../src/domain/mesh/state.js';
import { freshAttempt, meshStatus, meshTask, taskRecord } from '../helpers/mesh-fixtures.js';

const tun = TunablesSchema.parse({ tickInterval: '2s', cap: 2, timeBudget: '10m' });
const LIMITS = { events: 100, bytes: 100_000 };
const short: MeshHistory = { historyLength: 50, historySize: 10_000, continueAsNewSuggested: false };
const long: MeshHistory = { historyLength: 100, historySize: 10_000, continueAsNewSuggested: false };

const attempt = (over: Partial<Attempt> = {}) => freshAttempt(meshTask(), over);

/** Tasks by state: `queued` without attempts, `running` with one live attempt, `integrated` with a closed one. */
function mesh(states: MeshTaskState[], over: Partial<MeshStatus> = {}): MeshStatus {
  const tasks = resolveTasks(states.map((_, i) => ({ title: `task ${i + 1}`, agent: 'worker', mode: 'patch-first', skills: [], scope: [], verify: false })));
  const records: TaskRecord[] = tasks.map((task, i) => {
    const state = states[i]!;
    const attempts =
      state === 'queued' ? [] : [attempt({ closed: state === 'integrated' || state === 'failed', agentEnded: state === 'integrated' ? 'completed' : null })];
    return taskRecord(task, attempts, { state });
  });
  return meshStatus(records, { tunables: tun, ...over });
}
const loopAt = (at: MeshStage, over: Partial<MeshLoop> = {}): MeshLoop => ({ ...newLoop(), at, ...over });

describe('nextStep', () => {
  test.each([
    // [what, task states, stage, loop, mesh overrides, now, history, expected]
    ['a new mesh sets up', ['queued'], 'setup', {}, { phase: 'setting-up' }, 0, short, { kind: 'setup' }],
    ['a round spawns the first queued task', ['queued', 'queued', 'queued'], 'round', {}, {}, 0, short, { kind: 'spawn', task: 1 }],
    ['the wave goes on up to the cap', ['running', 'queued', 'queued'], 'spawning', {}, {}, 0, short, { kind: 'spawn', task: 2 }],
    ['at the cap the wave settles', ['running', 'running', 'queued'], 'spawning', {}, {}, 0, short, { kind: 'settle' }],
    ['a finished task frees its slot', ['integrated', 'running', 'queued'], 'round', {}, {}, 0, short, { kind: 'spawn', task: 3 }],
    ['settled with open tasks: wait one tick', ['running', 'queued'], 'settled', {}, {}, 0, short, { kind: 'wait', timeoutMs: 2_000 }],
    ['settled with none open: finish', ['integrated', 'failed'], 'settled', {}, {}, 0, short, { kind: 'finish' }],
    ['settled with none open but cancelled: cancel', ['integrated'], 'settled', { cancel: 'stop' }, {}, 0, short, { kind: 'cancel' }],
    ['after the wait: tick', ['running'], 'waited', {}, {}, 0, short, { kind: 'tick' }],
    ['a cancel during the wait ends it', ['running'], 'waited', { cancel: 'stop' }, {}, 0, short, { kind: 'cancel' }],
    ['after a tick that spent the conflict budget: a human', ['needs_rebase'], 'ticked', {}, { phase: 'awaiting-input' }, 0, short, { kind: 'await-human' }],
    ['after a tick: the next round (a free slot spawns)', ['running', 'queued'], 'ticked', {}, {}, 0, short, { kind: 'spawn', task: 2 }],
    ['a cancel is seen at the top of a round', ['running'], 'round', { cancel: 'stop' }, {}, 0, short, { kind: 'cancel' }],
    ['the time budget spent', ['running'], 'round', {}, {}, 600_000, short, { kind: 'time-budget' }],
    ['a cancel comes before the time budget', ['running'], 'round', { cancel: 'stop' }, {}, 600_000, short, { kind: 'cancel' }],
    ['after the time budget: finish', ['failed'], 'finish', {}, {}, 600_000, short, { kind: 'finish' }],
    ['a long history continues as new at the top of a round', ['running', 'queued'], 'round', {}, {}, 0, long, { kind: 'continue-as-new' }],
    ['the server suggests it', ['running'], 'ticked', {}, {}, 0, { ...short, continueAsNewSuggested: true }, { kind: 'continue-as-new' }],
    ['too many bytes', ['running'], 'round', {}, {}, 0, { ...short, historySize: 100_000 }, { kind: 'continue-as-new' }],
    ['not mid-wave', ['running', 'queued'], 'spawning', {}, {}, 0, long, { kind: 'spawn', task: 2 }],
    ['not when continue-as-new is off (a run from before it)', ['running'], 'round', {}, {}, 0, null, { kind: 'settle' }],
    ['not with a rebase request held', ['running'], 'round', { heldRebase: { 1: 'rebase' } }, {}, 0, long, { kind: 'settle' }],
    ['ready: wait for apply', ['integrated'], 'ready', {}, { phase: 'ready' }, 0, long, { kind: 'await-apply' }],
    ['then clean up', ['integrated'], 'clean-up', {}, { phase: 'applied' }, 0, short, { kind: 'clean-up' }],
    ['then end', ['integrated'], 'end', {}, { phase: 'applied' }, 0, short, { kind: 'end' }],
  ] as const)('%s', (_what, states, at, loop, over, now, h, want) => {
    expect(nextStep(mesh([...states], over as Partial<MeshStatus>), loopAt(at, loop as Partial<MeshLoop>), now, h, LIMITS)).toEqual(want);
  });
});

describe('continue-as-new waits for what the next run could not pick up', () => {
  test('a closed attempt whose agent has not ended yet holds it back; once ended it goes', () => {
    const s = mesh(['running', 'running']);
    s.tasks[0]!.attempts.unshift(attempt({ agentId: 'r.1-t.a0', closed: true, agentEnded: null }));
    expect(shouldContinueAsNew(s, newLoop(), long, LIMITS)).toBe(false);
    s.tasks[0]!.attempts[0]!.agentEnded = 'stopped';
    expect(shouldContinueAsNew(s, newLoop(), long, LIMITS)).toBe(true);
  });

  test('only while running: not awaiting a human, not ready', () => {
    for (const phase of ['awaiting-input', 'ready', 'validating'] as const)
      expect(shouldContinueAsNew(mesh(['running'], { phase }), newLoop(), long, LIMITS), phase).toBe(false);
  });
});

test('spawnCandidate: the first queued task in order while a slot is free', () => {
  expect(spawnCandidate(mesh(['queued', 'queued']))).toBe(1);
  expect(spawnCandidate(mesh(['running', 'failed', 'queued']))).toBe(3);
  expect(spawnCandidate(mesh(['running', 'running', 'queued']))).toBeNull();
  expect(spawnCandidate(mesh(['integrated', 'integrated']))).toBeNull();
});

describe('removableAttempts: replaced attempts whose agents ended', () => {
  test.each([
    // [what, attempts (closed, agentEnded), integrated attempt, expected removable attempt numbers]
    [
      'a restarted attempt whose agent ended',
      [
        [true, 'stopped'],
        [false, null],
      ],
      null,
      [1],
    ],
    [
      'not while its agent still runs',
      [
        [true, null],
        [false, null],
      ],
      null,
      [] as number[],
    ],
    [
      'never the last attempt',
      [
        [true, 'stopped'],
        [true, 'completed'],
      ],
      null,
      [1],
    ],
    [
      'never the integrated one',
      [
        [true, 'completed'],
        [true, 'stopped'],
      ],
      1,
      [] as number[],
    ],
    ['an only attempt stays', [[true, 'completed']], null, [] as number[]],
  ] as const)('%s', (_what, spec, integratedAttempt, want) => {
    const s = mesh(['running']);
    const r = s.tasks[0]!;
    r.attempts = spec.map(([closed, agentEnded], i) => attempt({ attempt: i + 1, agentId: `r.1-t.a${i + 1}`, closed, agentEnded }));
    r.integratedAttempt = integratedAttempt;
    expect(removableAttempts(s.tasks).map(([, a]) => a.attempt)).toEqual(want);
    for (const a of r.attempts) a.removedAt = 1;
    expect(removableAttempts(s.tasks)).toEqual([]); // once removed, never again
  });
});

test('the mesh input: runLimits is checked by name; the carried state passes through', () => {
  const base = { runId: 'r', repo: '/r', tasks: [{ title: 't' }], driver: { kind: 'command', command: ['true'] } };
  const bad = MeshInputSchema.safeParse({ ...base, runLimits: { events: 5, bytes: 100_000 } });
  expect(bad.success).toBe(false);
  expect(bad.error?.issues[0]?.path).toEqual(['runLimits', 'events']);
  const carried = { status: mesh(['running']), loop: { ...newLoop(), at: 'round' as const, continued: 2 } };
  const ok = MeshInputSchema.parse({ ...base, runLimits: { events: 60, bytes: 100_000 }, continued: carried });
  expect(ok.continued?.loop.continued).toBe(2);
  expect(ok.continued?.status.tasks).toHaveLength(1);
});

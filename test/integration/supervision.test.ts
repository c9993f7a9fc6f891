/**
 * The rest of the supervision cycle for an externally running agent, on a real dev server:
 * the idle watchdog, the `command` evaluator (a real Python program), skipped evaluations,
 * pause/resume, interrupt + steer, graceful stop with and without a drain timeout, duplicate turns.
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { productiveTurn, reportWithEvaluations, spiralTurn, waitForEvaluations, waitForStatus, finalStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { ROOT, useStack } from '../helpers/stack.js';

const stack = useStack();
const JUDGE = join(ROOT, 'test/fixtures/judge.py');

const statusWhere = (agentId: string, pred: (s: AgentStatus) => boolean, what: string, timeoutMs?: number) =>
  waitForStatus(stack.warden, agentId, pred, what, timeoutMs);

test('idle watchdog: silence after an empty turn triggers one evaluation (STALLING)', async () => {
  await stack.warden.start({ agentId: 'quiet', task: 'Fix the login bug.', supervisor: { idleAfterMs: 1500 } });
  await stack.warden.reportTurn('quiet', { id: 'q1', text: 'Let me think.' });
  const s = await statusWhere('quiet', (x) => x.evaluations.total === 1, 'idle evaluation');
  expect(s.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'STALLING' });
  expect(s.escalationStep).toBe(1);
  // One idle check per silence: no second evaluation without a new turn.
  await new Promise((r) => setTimeout(r, 3000));
  expect((await stack.warden.status('quiet')).evaluations.total).toBe(1);
  const reply = await stack.warden.reportTurn('quiet', { id: 'q2', text: 'Sorry, back.' });
  expect(reply.whispers[0]).toMatchObject({ type: 'CORRECTION' });
  await stack.warden.signal('quiet', 'abort', {});
  await finalStatus(stack.warden.handle('quiet'));
  await recordHistory(stack.server.address, stack.warden.handle('quiet'), 'idle-watchdog');
});

test('command evaluator: a Python judge flags DRIFT; garbage answers are skipped and change nothing', async () => {
  await stack.warden.start({
    agentId: 'judged',
    task: 'Make the failing login test pass.',
    evaluator: { kind: 'command', command: ['python3', JUDGE] },
    supervisor: { evalInterval: 2, idleAfterMs: 0 },
  });
  await reportWithEvaluations(
    stack.warden,
    'judged',
    [
      { id: 'j1', text: 'Refactoring the unrelated billing module while I am here.', toolCalls: [{ name: 'apply_patch', args: 'billing.ts' }] },
      { id: 'j2', text: 'More billing cleanup.' },
    ],
    2,
  );
  const s = await stack.warden.status('judged');
  expect(s.lastVerdict).toMatchObject({
    kind: 'CORRECTION',
    pattern: 'DRIFT',
    message: 'You are refactoring unrelated code; return to the failing login test.',
  });
  expect(s.escalationStep).toBe(1);
  await stack.warden.signal('judged', 'abort', {});

  // Same judge, told to answer nonsense: skipped, counted, the ladder untouched.
  await stack.warden.start({
    agentId: 'garbled',
    task: 'Make the failing login test pass.',
    evaluator: { kind: 'command', command: ['env', 'JUDGE_MODE=garbage', 'python3', JUDGE] },
    supervisor: { evalInterval: 1, idleAfterMs: 0 },
  });
  await reportWithEvaluations(stack.warden, 'garbled', [spiralTurn(1), spiralTurn(2), spiralTurn(3)], 1);
  const g = await stack.warden.status('garbled');
  expect(g.evaluations).toEqual({ total: 3, ok: 0, flagged: 0, skipped: 3 });
  expect(g.escalationStep).toBe(0);
  expect(g.lastSkipReason).toMatch(/unparseable/);
  await stack.warden.signal('garbled', 'abort', {});
});

test('an evaluator that never answers is skipped at the timeout', async () => {
  await stack.warden.start({
    agentId: 'slowjudge',
    task: 'anything',
    evaluator: { kind: 'command', command: ['env', 'JUDGE_MODE=sleep', 'python3', JUDGE] },
    supervisor: { evalInterval: 1, idleAfterMs: 0, evalTimeoutMs: 3000 },
  });
  const t0 = Date.now();
  await stack.warden.reportTurn('slowjudge', spiralTurn(1));
  const s = await waitForEvaluations(stack.warden, 'slowjudge', 1, 20_000);
  expect(Date.now() - t0).toBeLessThan(10_000);
  expect(s.evaluations.skipped).toBe(1);
  expect(s.lastSkipReason).toMatch(/did not answer|timed out|cancel/);
  await stack.warden.signal('slowjudge', 'abort', {});
});

test('pause freezes evaluation; resume thaws and resets', async () => {
  await stack.warden.start({ agentId: 'pausable', task: 'Fix the build.', supervisor: { idleAfterMs: 0 } });
  await reportWithEvaluations(
    stack.warden,
    'pausable',
    Array.from({ length: 5 }, (_, i) => spiralTurn(i + 1)),
  );
  expect((await stack.warden.status('pausable')).escalationStep).toBe(1);
  await stack.warden.signal('pausable', 'pause', { reason: 'lunch' });
  const p = await statusWhere('pausable', (x) => x.state === 'paused-by-user', 'paused');
  expect(p).toMatchObject({ paused: true, pauseReason: 'lunch' });
  for (let i = 6; i <= 10; i++) expect((await stack.warden.reportTurn('pausable', spiralTurn(i))).paused).toBe(true);
  await new Promise((r) => setTimeout(r, 500));
  expect((await stack.warden.status('pausable')).evaluations.total).toBe(1);
  await stack.warden.signal('pausable', 'resume', { note: 'back' });
  const r = await statusWhere('pausable', (x) => x.state === 'running', 'resumed');
  expect(r).toMatchObject({ paused: false, escalationStep: 0, turns: 10 });
  // Pausing twice is refused (recorded), not applied twice.
  await stack.warden.signal('pausable', 'pause', {});
  await stack.warden.signal('pausable', 'pause', {});
  const twice = await statusWhere('pausable', (x) => x.refused.some((f) => f.what === 'pause'), 'refused pause');
  expect(twice.state).toBe('paused-by-user');
  await stack.warden.signal('pausable', 'abort', {});
});

test('interrupt: the next reply says so, the agent waits; steer continues it', async () => {
  await stack.warden.start({ agentId: 'interruptible', task: 'Fix the build.', supervisor: { idleAfterMs: 0 } });
  await stack.warden.reportTurn('interruptible', productiveTurn(1));
  await stack.warden.signal('interruptible', 'interrupt', { reason: 'wrong branch' });
  await statusWhere('interruptible', (x) => x.state === 'awaiting-input', 'interrupted');
  const r1 = await stack.warden.reportTurn('interruptible', productiveTurn(2));
  expect(r1).toMatchObject({ interrupt: true, paused: true, state: 'awaiting-input' });
  const r2 = await stack.warden.reportTurn('interruptible', productiveTurn(3));
  expect(r2.interrupt).toBe(false); // said once
  await stack.warden.signal('interruptible', 'steer', { text: 'Switch to the release branch first.' });
  await statusWhere('interruptible', (x) => x.state === 'running', 'running again');
  const r3 = await stack.warden.reportTurn('interruptible', productiveTurn(4));
  expect(r3.whispers).toEqual([expect.objectContaining({ type: 'STEERING', text: 'Switch to the release branch first.' })]);
  await stack.warden.signal('interruptible', 'abort', {});
});

test('stop drains: a turn that ends in time completes the agent; otherwise the drain timeout ends it', async () => {
  await stack.warden.start({ agentId: 'drainer', task: 'Fix the build.', supervisor: { idleAfterMs: 0 } });
  await stack.warden.reportTurn('drainer', productiveTurn(1));
  await stack.warden.signal('drainer', 'stop', { reason: 'end of shift', drainTimeoutMs: 60_000 });
  await statusWhere('drainer', (x) => x.state === 'cancelling', 'cancelling');
  const last = await stack.warden.reportTurn('drainer', productiveTurn(2));
  expect(last.stop).toBe(true);
  const done = await finalStatus(stack.warden.handle('drainer'));
  expect(done).toMatchObject({ state: 'done', turns: 2 });
  expect(done.stateReason).toBe('stopped: end of shift');

  await stack.warden.start({ agentId: 'stuck', task: 'Fix the build.', supervisor: { idleAfterMs: 0 } });
  await stack.warden.reportTurn('stuck', productiveTurn(1));
  const t0 = Date.now();
  await stack.warden.signal('stuck', 'stop', { drainTimeoutMs: 1500 });
  const ended = await finalStatus(stack.warden.handle('stuck'));
  expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
  expect(ended.state).toBe('done');
  expect(ended.stateReason).toMatch(/drain timeout/);
  expect(ended.transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['spawning>running', 'running>cancelling', 'cancelling>done']);
  await recordHistory(stack.server.address, stack.warden.handle('drainer'), 'stop-drained');
  await recordHistory(stack.server.address, stack.warden.handle('stuck'), 'stop-drain-timeout');
});

test('a re-sent turn is a duplicate and gets the same whispers again', async () => {
  await stack.warden.start({ agentId: 'dupes', task: 'Fix the build.', supervisor: { idleAfterMs: 0 } });
  await stack.warden.reportTurn('dupes', productiveTurn(1));
  await stack.warden.signal('dupes', 'steer', { text: 'run the whole suite' });
  await statusWhere('dupes', (x) => x.pendingWhispers === 1, 'steer queued');
  const first = await stack.warden.reportTurn('dupes', productiveTurn(2));
  expect(first.whispers).toHaveLength(1);
  // The agent never saw the reply and sends the same turn again, through a raw update with a fresh update id.
  const again = await stack.warden.handle('dupes').executeUpdate('reportTurn', { args: [productiveTurn(2)] });
  expect(again).toMatchObject({ accepted: false, duplicate: true, whispers: first.whispers });
  expect((await stack.warden.status('dupes')).turns).toBe(2);
  await stack.warden.signal('dupes', 'abort', {});
});

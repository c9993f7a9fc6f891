/**
 * `blocked` on delegated children, on a real dev server with real worker processes: a parent that
 * reports it waits for its children (`awaitChildren`) is blocked with their names, survives a worker
 * SIGKILL while blocked, is never judged idle meanwhile, and runs again when the last child ends,
 * or when a human steers it.
 */
import { execa } from 'execa';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { finalStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { ROOT, eventually, useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });
const { spawnWorker, kill } = stack;

const child = (childId: string, turns: number, turnDelayMs = 1_000) => ({
  childId,
  objective: `Compute ${childId}.`,
  resultSchema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] },
  definitionOfDone: 'computed',
  driver: { kind: 'scripted' as const, turns: Array.from({ length: turns }, (_, i) => ({ text: `step ${i + 1}` })), turnDelayMs, result: { answer: turns } },
  driven: { heartbeatTimeoutMs: 3_000 },
});

let worker: ReturnType<typeof spawnWorker>;
beforeAll(() => {
  worker = spawnWorker();
});

test('a parent waiting on two children is blocked through a worker SIGKILL, never judged idle, and runs when the last result arrives', async () => {
  // The idle watchdog would judge 4 s of silence; the children take far longer than that.
  await stack.warden.start({
    agentId: 'waiter',
    task: 'coordinate a and b',
    delegation: { mode: 'orchestrator', maxDepth: 1 },
    supervisor: { idleAfterMs: 4_000 },
  });
  await stack.warden.reportTurn('waiter', { id: 'w1', text: 'Splitting the work between two children.' });
  await stack.warden.delegate('waiter', child('a', 2));
  await stack.warden.delegate('waiter', child('b', 12));
  const reply = await stack.warden.reportTurn('waiter', { id: 'w2', text: 'Delegated a and b; waiting for their results.', awaitChildren: true });
  expect(reply.state).toBe('blocked');
  expect(await stack.warden.status('waiter')).toMatchObject({ state: 'blocked', stateReason: 'waiting on 2 delegated children: a, b' });

  await kill(worker);
  worker = spawnWorker();

  // On the new worker: still blocked, and a's result narrows the wait to b.
  const narrowed = await eventually(
    async () => {
      const s = await stack.warden.status('waiter');
      return s.state === 'blocked' && s.stateReason === 'waiting on 1 delegated child: b' ? s : null;
    },
    { what: 'the wait narrowed to b after a worker SIGKILL', timeoutMs: 90_000 },
  );
  expect(narrowed.children.find((c) => c.agentId === 'waiter.a')?.state).toBe('done');

  const back = await eventually(
    async () => {
      const s = await stack.warden.status('waiter');
      return s.state === 'running' ? s : null;
    },
    { what: 'the parent running again after the last result', timeoutMs: 120_000 },
  );
  expect(back.stateReason).toBe('its delegated children finished (a done, b done)');
  expect(back.transitions.slice(-2).map((t) => `${t.from}>${t.to}:${t.event}`)).toEqual(['running>blocked:block', 'blocked>running:unblock']);
  // The long wait was not idleness: no idle evaluation ran, the ladder never moved.
  expect(back.evaluations.total).toBe(0);
  expect(back.escalationStep).toBe(0);
  expect(back.lastVerdict).toBeNull();
  await stack.warden.signal('waiter', 'abort', {});
  const handle = stack.warden.handle('waiter');
  expect((await finalStatus(handle)).state).toBe('failed'); // aborted
  await recordHistory(stack.server.address, handle, 'delegation-parent-blocked-on-children');
});

test('a human steering a blocked parent ends the wait; blocked again, an abort ends it and its child', async () => {
  await stack.warden.start({ agentId: 'waiter2', task: 'coordinate slow', supervisor: { idleAfterMs: 0 } });
  await stack.warden.reportTurn('waiter2', { id: 'v1', text: 'Handing the slow part to a child.' });
  await stack.warden.delegate('waiter2', child('slow', 1, 120_000));
  await stack.warden.reportTurn('waiter2', { id: 'v2', text: 'Waiting for slow.', awaitChildren: true });
  expect(await stack.warden.status('waiter2')).toMatchObject({ state: 'blocked', stateReason: 'waiting on 1 delegated child: slow' });
  // warden top labels it blocked, with the children it waits for.
  const row = await eventually(
    async () => {
      const r = await execa('node', [join(ROOT, 'dist/src/cli/main.js'), 'top', '--once', '--json'], {
        env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace },
        reject: false,
      });
      const rows = (JSON.parse(r.stdout) as { rows: { agentId: string; state: string; priority: string; why: string }[] }).rows;
      return rows.find((x) => x.agentId === 'waiter2' && x.state === 'blocked') ?? null;
    },
    { what: 'waiter2 blocked in warden top' },
  );
  expect(row).toMatchObject({ priority: 'blocked', why: 'blocked: waiting on 1 delegated child: slow' });
  await stack.warden.signal('waiter2', 'steer', { text: 'Do not wait: review the README meanwhile.' });
  const steered = await eventually(
    async () => {
      const s = await stack.warden.status('waiter2');
      return s.state === 'running' ? s : null;
    },
    { what: 'steered back to running' },
  );
  expect(steered.stateReason).toBe('steered by a human while waiting on its children');
  const r = await stack.warden.reportTurn('waiter2', { id: 'v3', text: 'README reviewed; waiting for slow again.', awaitChildren: true });
  expect(r.whispers.map((w) => w.type)).toEqual(['STEERING']);
  expect(r.state).toBe('blocked');
  await stack.warden.signal('waiter2', 'abort', { reason: 'enough' });
  const slow = await eventually(
    async () => {
      const s = await stack.warden.status('waiter2.slow');
      return s.state === 'done' || s.state === 'failed' ? s : null;
    },
    { what: 'the child stopped with its parent', timeoutMs: 60_000 },
  );
  expect(slow.stateReason).toContain('parent waiter2');
});

test('a driven parent whose turn waits for its child runs no turn until the result arrives, then finishes', async () => {
  // Turn 1 runs for 3 s, long enough to delegate while it runs; turn 2 says it waits; turn 3 finishes.
  await stack.warden.start({
    agentId: 'dboss',
    task: 'coordinate c',
    driver: {
      kind: 'scripted',
      turns: [{ text: 'Planning the split.' }, { text: 'Delegated c; waiting for its result.', awaitChildren: true }, { text: 'Merged c. TASK COMPLETE' }],
      turnDelayMs: 3_000,
    },
    delegation: { mode: 'tight', maxDepth: 1 },
  });
  await stack.warden.delegate('dboss', child('c', 120));
  const blocked = await eventually(
    async () => {
      const s = await stack.warden.status('dboss');
      return s.state === 'blocked' ? s : null;
    },
    { what: 'the driven parent blocked on c', timeoutMs: 60_000 },
  );
  expect(blocked).toMatchObject({ stateReason: 'waiting on 1 delegated child: c', turns: 2, turnRunning: false });
  // No turn runs while it waits; the child's end (here: stopped) is what lets it go on.
  await new Promise((r) => setTimeout(r, 4_000));
  expect(await stack.warden.status('dboss')).toMatchObject({ state: 'blocked', turns: 2 });
  await stack.warden.signal('dboss.c', 'stop', { reason: 'enough for the test', drainTimeoutMs: 0 });
  const end = await finalStatus(stack.warden.handle('dboss'));
  expect(end).toMatchObject({ state: 'done', turns: 3 });
  expect(end.children).toEqual([expect.objectContaining({ agentId: 'dboss.c', state: 'done' })]);
  expect(end.transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['spawning>running', 'running>blocked', 'blocked>running', 'running>done']);
  // Its third turn started only after the child had ended.
  const c = await finalStatus(stack.warden.handle('dboss.c'));
  expect(Date.parse(end.transitions[2]!.at)).toBeGreaterThanOrEqual(Date.parse(c.transitions.at(-1)!.at));
});

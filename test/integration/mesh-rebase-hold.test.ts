/**
 * A mesh worker waiting for its rebase turn is `blocked` (real dev server, real git, real worker
 * processes): past the conflict budget the mesh holds the rebase request for a human and tells the
 * worker's agent with a `block` signal, so the agent shows `blocked` with the reason (in its status
 * and in `warden top`) and runs no turn; a worker SIGKILL leaves that intact; when a human resumes
 * the mesh, the rebase request (a steer) runs the agent again, it rebases, and its patch integrates;
 * a mesh cancelled instead stops the held agent, which ends `done`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { cancelMesh, startMesh, waitForMesh } from '../../src/client/mesh.js';
import { buildRow, DEFAULT_ROW_OPTIONS, parseTopStatus } from '../../src/roster/rows.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { recordHistory } from '../helpers/histories.js';
import { git, gitRepo, meshInput } from '../helpers/mesh.js';
import { eventually, useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });

const REASON = 'waiting for its rebase turn (mesh hold task 2): the mesh waits for a human (conflict budget spent (0))';

test('held past the conflict budget: the worker agent is blocked with the reason, survives a worker SIGKILL, and runs again with the rebase request', async () => {
  const repo = gitRepo({ 'shared.txt': 'one\ntwo\nthree\n' });
  const tasks = [
    { title: 'Set line 2 to alpha {edit shared.txt:2:alpha}', slug: 'alpha', scope: ['shared.txt'] },
    { title: 'Set line 2 to beta {edit shared.txt:2:beta}', slug: 'beta', scope: ['shared.txt'] },
  ];
  let w = stack.spawnWorker();
  await startMesh(stack.warden, meshInput('hold', repo, tasks, { cap: 2, conflictBudget: 0 }));
  const waiting = await waitForMesh(stack.warden, 'hold', (s) => s.phase === 'awaiting-input', 120_000);
  expect(waiting.tasks.map((t) => t.state)).toEqual(['integrated', 'needs_rebase']);
  expect(waiting.log.map((l) => l.text)).toContain(`HOLDING hold.beta.a1: ${REASON}`);

  // The worker's agent is blocked with the reason, and no turn runs (a turn in flight when the signal came ends first).
  const held = await eventually(
    async () => {
      const s = await stack.warden.status('hold.beta.a1');
      return s.state === 'blocked' && !s.turnRunning ? s : undefined;
    },
    { what: 'the worker agent blocked, no turn running', timeoutMs: 60_000 },
  );
  expect(held.stateReason).toBe(REASON);
  expect(held.transitions.at(-1)).toMatchObject({ from: 'running', to: 'blocked', event: 'block', cause: REASON });
  // `warden top` sorts it with the blocked rows and shows why.
  const row = buildRow(
    {
      agentId: held.agentId,
      workflowId: 'agent-hold.beta.a1',
      runId: 'r',
      status: 'RUNNING',
      state: held.state,
      parent: null,
      escalationStep: 0,
      paused: false,
      costUsd: null,
      tokens: null,
      evaluatorCostUsd: null,
      startTime: new Date().toISOString(),
      closeTime: null,
    },
    parseTopStatus(held),
    null,
    { ...DEFAULT_ROW_OPTIONS, nowMs: Date.now() },
  );
  expect(row).toMatchObject({ priority: 'blocked', why: `blocked: ${REASON}` });

  // A worker SIGKILL while it is held: a new worker replays it, still blocked, same reason, no turn taken meanwhile.
  await stack.kill(w);
  w = stack.spawnWorker();
  const after = await eventually(() => stack.warden.status('hold.beta.a1'), { what: 'the status after the restart', timeoutMs: 60_000 });
  expect(after).toMatchObject({ state: 'blocked', stateReason: REASON, turns: held.turns, turnRunning: false });
  expect(after.transitions).toEqual(held.transitions);
  expect((await stack.warden.status('hold.beta.a1')).turns).toBe(held.turns);

  // A human resumes the mesh: the rebase request (a steer) ends the hold, the agent rebases, the patch integrates.
  await stack.warden.client.workflow.getHandle('mesh-hold').signal('resume', { note: 'go on' });
  const done = await waitForMesh(stack.warden, 'hold', (s) => s.phase === 'ready', 120_000);
  expect(done.tasks.map((t) => [t.state, t.attempts.length])).toEqual([
    ['integrated', 1],
    ['integrated', 1],
  ]);
  expect(git(repo, 'show', 'mesh/hold/integration:shared.txt')).toBe('one\nbeta\nthree');
  const back = await eventually(
    async () => {
      const s = await stack.warden.status('hold.beta.a1');
      return s.state === 'done' ? s : undefined;
    },
    { what: 'the worker agent done', timeoutMs: 60_000 },
  );
  const fromBlocked = back.transitions.filter((t) => t.from === 'blocked');
  expect(fromBlocked).toEqual([
    expect.objectContaining({ to: 'running', event: 'unblock', cause: `steered while blocked (${REASON}): it runs with the new input` }),
  ]);
  expect(back.turns).toBeGreaterThan(held.turns); // the rebase turn

  await cancelMesh(stack.warden, 'hold', 'test over');
  const mesh = stack.warden.client.workflow.getHandle('mesh-hold');
  await mesh.result();
  await recordHistory(stack.server.address, mesh, 'mesh-rebase-hold');
  await recordHistory(stack.server.address, stack.warden.client.workflow.getHandle('agent-hold.beta.a1'), 'mesh-rebase-hold-worker');
});

test('held, then the mesh is cancelled: the stop ends the blocked worker agent normally (done)', async () => {
  const repo = gitRepo({ 'shared.txt': 'one\ntwo\nthree\n' });
  const tasks = [
    { title: 'Set line 2 to alpha {edit shared.txt:2:alpha}', slug: 'alpha', scope: ['shared.txt'] },
    { title: 'Set line 2 to beta {edit shared.txt:2:beta}', slug: 'beta', scope: ['shared.txt'] },
  ];
  stack.spawnWorker();
  await startMesh(stack.warden, meshInput('hold2', repo, tasks, { cap: 2, conflictBudget: 0 }));
  await waitForMesh(stack.warden, 'hold2', (s) => s.phase === 'awaiting-input', 120_000);
  await eventually(
    async () => {
      const s = await stack.warden.status('hold2.beta.a1');
      return s.state === 'blocked' ? s : undefined;
    },
    { what: 'the worker agent blocked', timeoutMs: 60_000 },
  );
  await cancelMesh(stack.warden, 'hold2', 'not today');
  const ended = (await stack.warden.client.workflow.getHandle('agent-hold2.beta.a1').result()) as AgentStatus;
  expect(ended.state).toBe('done');
  expect(ended.transitions.filter((t) => t.from === 'blocked')).toEqual([
    expect.objectContaining({ to: 'cancelling', event: 'stop', cause: 'mesh hold2: mesh cancelled: not today' }),
  ]);
  expect((await stack.warden.client.workflow.getHandle('mesh-hold2').result()).phase).toBe('cancelled');
});

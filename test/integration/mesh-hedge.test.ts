/**
 * Hedging (hedge budget 2): a task whose first attempt is silent gets a second attempt beside it
 * while the first is still alive; the hedge wins, the first is closed (its agent stopped) and its
 * worktree and branch removed; a warden worker SIGKILL while both run loses nothing.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { cancelMesh, meshWorkflowId, startMesh, waitForMesh } from '../../src/client/mesh.js';
import type { MeshStatus } from '../../src/domain/mesh/state.js';
import { recordHistory } from '../helpers/histories.js';
import { git, gitRepo, meshInput } from '../helpers/mesh.js';
import { useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });
const meshBranches = (repo: string, runId: string) =>
  git(repo, 'branch', '--list', `mesh/${runId}/*`, '--format=%(refname:short)').split('\n').filter(Boolean).sort();
/** Both attempts of task a live at once: the first kept on, the hedge beside it. */
const hedged = (s: MeshStatus) => {
  const [a1, a2] = s.tasks[0]!.attempts;
  return a2 !== undefined && a1!.closed === false && a1!.agentEnded === null && a2.closed === false;
};

test('hedge budget 2: a silent first attempt gets a hedge beside it; the hedge wins, the first is closed and removed, across a worker SIGKILL', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n' });
  // Attempt 1 never writes a checkpoint (it misses the ack SLA); attempt 2 works for 15 s, then finishes.
  const tasks = [{ title: 'Uppercase a {silent-a1} {slow:15} {edit a.txt:1:A}', slug: 'a', scope: ['a.txt'] }];
  let w = stack.spawnWorker();
  await startMesh(
    stack.warden,
    meshInput('hedge', repo, tasks, { ackSla: '5s', patchDraftTimeout: '300s', stallThreshold: 60, hedgeBudget: 2 }, { workerHeartbeatTimeoutMs: 3_000 }),
  );
  const mid = await waitForMesh(stack.warden, 'hedge', hedged, 120_000);
  expect(mid.log.map((l) => l.text).filter((t) => t.startsWith('HEDGE:'))).toEqual([
    expect.stringMatching(
      /^HEDGE: task 1 a spawned attempt 2 alongside attempt 1 \(ack SLA missed: no checkpoint .*\); attempt 1 stays on \(hedge budget 2\)$/,
    ),
  ]);
  expect(mid.log.some((l) => l.text.startsWith('Action: restart'))).toBe(false);
  // The dashboard shows both live attempts.
  expect(mid.tasks[0]!.attempts.filter((a) => !a.closed).map((a) => a.attempt)).toEqual([1, 2]);

  // The warden worker dies while both attempts run; a new one picks the mesh up.
  await stack.kill(w);
  await new Promise((r) => setTimeout(r, 1_000));
  w = stack.spawnWorker();

  const ready = await waitForMesh(stack.warden, 'hedge', (s) => s.phase === 'ready', 240_000);
  const r = ready.tasks[0]!;
  expect([r.state, r.attempts.length, r.integratedAttempt]).toEqual(['integrated', 2, 2]);
  expect(git(repo, 'show', 'mesh/hedge/integration:a.txt')).toBe('A');
  const [a1, a2] = r.attempts;
  expect(a1!.closed).toBe(true);
  expect(a1!.reason).toBe('attempt 2 won the task (its patch passed the gates first)');
  expect(a2!.gates.P).toBe('ok');
  expect(ready.log.some((l) => l.text === 'HEDGE LOST: task 1 attempt 1 closed: attempt 2 won the task (its patch passed the gates first)')).toBe(true);
  // Nothing lost or doubled across the SIGKILL: two attempts (one hedge), one integration commit.
  expect(ready.log.filter((l) => l.text.startsWith('INTEGRATED task 1'))).toHaveLength(1);
  expect(git(repo, 'log', '--format=%s', 'main..mesh/hedge/integration').split('\n')).toEqual(['mesh hedge: task 1 a (attempt 2)']);

  // The loser's agent ends (it was stopped): its worktree and branch go; the winner's stay until apply or cancel.
  const gone = await waitForMesh(stack.warden, 'hedge', (s) => typeof s.tasks[0]!.attempts[0]!.removedAt === 'number', 180_000);
  const lost = gone.tasks[0]!.attempts[0]!;
  expect(lost.agentEnded).not.toBeNull();
  expect(existsSync(lost.worktree)).toBe(false);
  expect(existsSync(join(gone.tasks[0]!.attempts[1]!.worktree, '.git'))).toBe(true);
  expect(meshBranches(repo, 'hedge')).toEqual(['mesh/hedge/a-a2', 'mesh/hedge/integration']);
  expect(gone.log.filter((l) => l.text.startsWith('REMOVED replaced attempt')).map((l) => l.text)).toEqual([
    `REMOVED replaced attempt hedge.a.a1: worktree ${lost.worktree}, branch mesh/hedge/a-a1`,
  ]);
  await recordHistory(stack.server.address, stack.warden.client.workflow.getHandle(meshWorkflowId('hedge')), 'mesh-hedge');
  await cancelMesh(stack.warden, 'hedge', 'test over');
  await waitForMesh(stack.warden, 'hedge', (s) => s.log.some((l) => l.text.startsWith('CLEANED UP')), 180_000);
  expect(meshBranches(repo, 'hedge')).toEqual([]);
}, 600_000);

test('hedge budget 2: a stalled first attempt gets a hedge beside it; with no free slot under the cap it is restarted instead', async () => {
  stack.spawnWorker();
  // Attempt 1 writes the same status every turn and never edits (a stall); later attempts work for 8 s, then finish.
  const tasks = [{ title: 'Uppercase a {stall-a1} {slow:8} {edit a.txt:1:A}', slug: 'a', scope: ['a.txt'] }];
  const hedge = gitRepo({ 'a.txt': 'a\n' });
  const capped = gitRepo({ 'a.txt': 'a\n' });
  const tun = { ackSla: '10s', patchDraftTimeout: '300s', stallThreshold: 3, hedgeBudget: 2 };
  await startMesh(stack.warden, meshInput('hedge-stall', hedge, tasks, { ...tun, cap: 2 }));
  await startMesh(stack.warden, meshInput('hedge-cap', capped, tasks, { ...tun, cap: 1 }));
  const [h, c] = await Promise.all([
    waitForMesh(stack.warden, 'hedge-stall', (s) => s.phase === 'ready', 240_000),
    waitForMesh(stack.warden, 'hedge-cap', (s) => s.phase === 'ready', 240_000),
  ]);
  // With a free slot: attempt 1 stays on beside its hedge, which wins; attempt 1 loses.
  expect(h.log.some((l) => /^HEDGE: task 1 a spawned attempt 2 alongside attempt 1 \(stall: no progress/.test(l.text))).toBe(true);
  expect(h.log.some((l) => l.text.startsWith('Action: restart'))).toBe(false);
  expect([h.tasks[0]!.state, h.tasks[0]!.integratedAttempt, h.tasks[0]!.attempts.length]).toEqual(['integrated', 2, 2]);
  expect(h.tasks[0]!.attempts[0]!.reason).toBe('attempt 2 won the task (its patch passed the gates first)');
  // Cap 1: no slot for a hedge, so attempt 1 is restarted as with a hedge budget of 1.
  expect(c.log.some((l) => l.text.startsWith('HEDGE'))).toBe(false);
  expect(c.log.some((l) => l.text.startsWith('Action: restart task 1 (close hedge-cap.a.a1, spawn attempt 2)'))).toBe(true);
  expect(c.tasks[0]!.attempts[0]!.reason).toMatch(/^restart: stall: no progress/);
  expect([c.tasks[0]!.state, c.tasks[0]!.integratedAttempt]).toEqual(['integrated', 2]);
  for (const [repo, id] of [
    [hedge, 'hedge-stall'],
    [capped, 'hedge-cap'],
  ] as const) {
    expect(git(repo, 'show', `mesh/${id}/integration:a.txt`)).toBe('A');
    await cancelMesh(stack.warden, id, 'test over');
  }
}, 400_000);

/**
 * A replaced attempt's worktree and branch are removed as soon as its agent has ended, while the
 * mesh runs on (not only after apply or cancel), also across a warden worker SIGKILL;
 * keepWorktrees keeps them.
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
const removed = (s: MeshStatus) => s.log.some((l) => l.text.startsWith('REMOVED replaced attempt'));
// Task a's first attempt never writes a checkpoint: it misses the ack SLA and is restarted.
const tasks = [
  { title: 'Uppercase a {silent-a1} {edit a.txt:1:A}', slug: 'a', scope: ['a.txt'] },
  { title: 'Uppercase b {slow:20} {edit b.txt:1:B}', slug: 'b', scope: ['b.txt'] },
];

test('a replaced attempt is removed while the mesh runs, across a worker SIGKILL', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  let w = stack.spawnWorker();
  await startMesh(stack.warden, meshInput('att', repo, tasks, { ackSla: '5s', stallThreshold: 60 }, { workerHeartbeatTimeoutMs: 3_000 }));
  // Kill the worker once task a has been restarted (its first attempt closed, its agent stopping).
  await waitForMesh(stack.warden, 'att', (s) => s.tasks[0]!.attempts.length === 2, 120_000);
  await stack.kill(w);
  await new Promise((r) => setTimeout(r, 1_000));
  w = stack.spawnWorker();
  const mid = await waitForMesh(stack.warden, 'att', removed, 180_000);
  const [a1, a2] = mid.tasks[0]!.attempts;
  expect(a1!.closed).toBe(true);
  expect(a1!.removedAt).toBeTypeOf('number');
  expect(existsSync(a1!.worktree)).toBe(false);
  expect(existsSync(join(a2!.worktree, '.git'))).toBe(true); // the new attempt keeps its own
  expect(meshBranches(repo, 'att')).not.toContain('mesh/att/a-a1');
  expect(mid.log.filter((l) => l.text.startsWith('REMOVED replaced attempt')).map((l) => l.text)).toEqual([
    `REMOVED replaced attempt att.a.a1: worktree ${a1!.worktree}, branch mesh/att/a-a1`,
  ]);

  const ready = await waitForMesh(stack.warden, 'att', (s) => s.phase === 'ready', 180_000);
  expect(ready.tasks.map((t) => [t.task.slug, t.state, t.attempts.length])).toEqual([
    ['a', 'integrated', 2],
    ['b', 'integrated', 1],
  ]);
  // The integrated attempts' worktrees stay until apply or cancel (the user may look at them).
  expect(meshBranches(repo, 'att')).toEqual(['mesh/att/a-a2', 'mesh/att/b-a1', 'mesh/att/integration']);
  expect(git(repo, 'show', 'mesh/att/integration:a.txt')).toBe('A');
  await cancelMesh(stack.warden, 'att', 'test over');
  await waitForMesh(stack.warden, 'att', (s) => s.log.some((l) => l.text.startsWith('CLEANED UP')), 180_000);
  expect(meshBranches(repo, 'att')).toEqual([]);
}, 600_000);

test('a replaced attempt whose agent ends after the mesh is ready is removed then, before apply', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n' });
  stack.spawnWorker();
  // Attempt 1 ignores SIGTERM in a 300 s turn: its agent ends only after the 60 s kill grace,
  // long after attempt 2 has been integrated and the mesh is ready.
  const late = [{ title: 'Uppercase a {hold-a1:300} {edit a.txt:1:A}', slug: 'a', scope: ['a.txt'] }];
  await startMesh(stack.warden, meshInput('att-late', repo, late, { ackSla: '5s' }, { killGraceMs: 60_000 }));
  const ready = await waitForMesh(stack.warden, 'att-late', (s) => s.phase === 'ready', 180_000);
  expect(ready.tasks[0]!.attempts[0]!.agentEnded).toBeNull(); // still held when the mesh was ready
  expect(removed(ready)).toBe(false);
  const after = await waitForMesh(stack.warden, 'att-late', removed, 180_000);
  expect(after.phase).toBe('ready');
  const [a1] = after.tasks[0]!.attempts;
  expect(a1!.removedAt).toBeTypeOf('number');
  expect(existsSync(a1!.worktree)).toBe(false);
  expect(meshBranches(repo, 'att-late')).toEqual(['mesh/att-late/a-a2', 'mesh/att-late/integration']);
  await recordHistory(stack.server.address, stack.warden.client.workflow.getHandle(meshWorkflowId('att-late')), 'mesh-removal-while-ready');
  await cancelMesh(stack.warden, 'att-late', 'test over');
}, 400_000);

test('keepWorktrees: a replaced attempt is kept', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  stack.spawnWorker();
  await startMesh(stack.warden, meshInput('att-keep', repo, tasks.slice(0, 1), { ackSla: '5s' }, { keepWorktrees: true }));
  const ready = await waitForMesh(stack.warden, 'att-keep', (s) => s.phase === 'ready', 180_000);
  const [a1] = ready.tasks[0]!.attempts;
  expect(ready.tasks[0]!.attempts).toHaveLength(2);
  expect(a1!.agentEnded).not.toBeNull();
  expect(removed(ready)).toBe(false);
  expect(existsSync(join(a1!.worktree, '.git'))).toBe(true);
  expect(meshBranches(repo, 'att-keep')).toContain('mesh/att-keep/a-a1');
  await cancelMesh(stack.warden, 'att-keep', 'test over');
}, 300_000);

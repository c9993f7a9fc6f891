/**
 * A long mesh continues as new (a small history bound here) with its state carried: tasks,
 * attempts, the monitoring log and the integration branch. A warden worker is SIGKILLed between
 * two continues; the mesh still ends ready with every task integrated once, and the dashboard
 * matches the repository on disk.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { applyMesh, startMesh, waitForMesh } from '../../src/client/mesh.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import type { MeshStatus } from '../../src/domain/mesh/state.js';
import { recordHistory } from '../helpers/histories.js';
import { git, gitRepo, integrated, meshInput } from '../helpers/mesh.js';
import { useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });
const continues = (s: MeshStatus) => s.log.filter((l) => l.text.startsWith('CONTINUED AS NEW')).length;

test('a long mesh continues as new twice, across a worker SIGKILL, with its tasks, log and integration intact', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  const tasks = [
    { title: 'Slow a {slow:25} {edit a.txt:1:A}', slug: 'slow-a', scope: ['a.txt'] },
    { title: 'Quick b {edit b.txt:1:B}', slug: 'quick-b', scope: ['b.txt'] },
    { title: 'Slow c {slow:15} {edit c.txt:1:C}', slug: 'slow-c', scope: ['c.txt'] },
  ];
  let w = stack.spawnWorker();
  await startMesh(
    stack.warden,
    meshInput(
      'cont',
      repo,
      tasks,
      { cap: 2, ackSla: '10s', stallThreshold: 60 },
      { workerHeartbeatTimeoutMs: 3_000, runLimits: { events: 60, bytes: 10_000_000 } },
    ),
  );
  const handle = stack.warden.client.workflow.getHandle('mesh-cont');
  const firstRun = (await handle.describe()).runId;
  // The first continue-as-new, then a SIGKILL of the worker while the mesh runs on.
  const before = await waitForMesh(stack.warden, 'cont', (s) => continues(s) >= 1, 180_000);
  expect(before.phase).toBe('running');
  await stack.kill(w);
  await new Promise((r) => setTimeout(r, 1_000));
  w = stack.spawnWorker();
  const after = await waitForMesh(stack.warden, 'cont', (s) => s.phase === 'ready', 300_000);
  if (process.env.WARDEN_MESH_SHOW) console.log(renderDashboard(after, Date.now(), { logLines: 80 }));

  // It continued as new at least twice: several runs of one workflow id, the last one open (ready).
  expect(continues(after)).toBeGreaterThanOrEqual(2);
  const runs: string[] = [];
  for await (const x of stack.warden.client.workflow.list({ query: 'WorkflowId = "mesh-cont"' })) runs.push(x.runId);
  expect(runs.length).toBeGreaterThanOrEqual(3);
  expect(runs).toContain(firstRun);

  // Nothing lost: the log and every attempt seen before the kill are still there; the tick count went on.
  expect(after.ticks).toBeGreaterThan(before.ticks);
  expect(after.log[0]!.text).toMatch(/^MANIFEST written/);
  expect(after.log.slice(0, before.log.length)).toEqual(before.log);
  for (const [i, t] of before.tasks.entries())
    for (const a of t.attempts)
      expect(after.tasks[i]!.attempts.find((x) => x.agentId === a.agentId)).toMatchObject({ attempt: a.attempt, spawnedAt: a.spawnedAt });
  expect(after.tasks.map((t) => [t.task.slug, t.state, t.attempts.length])).toEqual([
    ['slow-a', 'integrated', 1],
    ['quick-b', 'integrated', 1],
    ['slow-c', 'integrated', 1],
  ]);

  // The integration state matches the disk.
  expect(git(repo, 'rev-parse', 'mesh/cont/integration')).toBe(after.integrationHead);
  const commits = git(repo, 'log', '--reverse', '--format=%H', 'main..mesh/cont/integration').split('\n');
  expect(commits).toEqual(after.tasks.map((t) => t.integratedCommit));
  expect(integrated(repo, 'cont')).toEqual([
    'mesh cont: task 1 slow-a (attempt 1)',
    'mesh cont: task 2 quick-b (attempt 1)',
    'mesh cont: task 3 slow-c (attempt 1)',
  ]);

  // apply still works on the continued run, and cleans up.
  await applyMesh(stack.warden, 'cont');
  const applied = await waitForMesh(stack.warden, 'cont', (s) => s.log.some((l) => l.text.startsWith('CLEANED UP')), 240_000);
  expect(applied.phase).toBe('applied');
  expect(git(repo, 'show', 'main:c.txt')).toBe('C');
  await recordHistory(stack.server.address, handle, 'mesh-continue-first', firstRun);
  await recordHistory(stack.server.address, handle, 'mesh-continue-last');
}, 600_000);

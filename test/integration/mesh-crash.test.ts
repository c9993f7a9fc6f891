/**
 * The mesh across a worker SIGKILL (workers as separate processes): attempts, tick history, gate
 * results and integrated patches all survive by replay; the killed worker's running turn is
 * retried on the new worker; afterwards the dashboard matches the repository on disk.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { meshStatus, startMesh, waitForMesh } from '../../src/client/mesh.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import { git, gitRepo, integrated, meshInput } from '../helpers/mesh.js';
import { useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });

test('worker SIGKILL mid-mesh: nothing lost, the dashboard matches the disk', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
  const tasks = [
    { title: 'Slow a {slow:10} {edit a.txt:1:A}', slug: 'slow-a', scope: ['a.txt'] },
    { title: 'Quick b {edit b.txt:1:B}', slug: 'quick-b', scope: ['b.txt'] },
    { title: 'Quick c {edit c.txt:1:C}', slug: 'quick-c', scope: ['c.txt'] },
  ];
  let w = stack.spawnWorker();
  await startMesh(stack.warden, meshInput('crash', repo, tasks, { cap: 2, ackSla: '10s', stallThreshold: 60 }, { workerHeartbeatTimeoutMs: 3_000 }));
  // Kill while task 1 is mid-turn and task 2's patch is ready or integrated.
  const before = await waitForMesh(
    stack.warden,
    'crash',
    (s) => s.tasks[1]!.attempts[0]?.gates.D === 'ok' && s.tasks[0]!.attempts[0]?.lastStatus?.startsWith('drafting_patch|working') === true,
    120_000,
  );
  await stack.kill(w);
  await new Promise((r) => setTimeout(r, 1_000));
  w = stack.spawnWorker();
  const after = await waitForMesh(stack.warden, 'crash', (s) => s.phase === 'ready', 180_000);
  if (process.env.WARDEN_MESH_SHOW) console.log(renderDashboard(after, Date.now(), { logLines: 60 }));

  // Nothing lost: the tick history, the monitoring log and every attempt recorded before the kill are still there.
  expect(after.ticks).toBeGreaterThan(before.ticks);
  expect(after.log.slice(0, before.log.length)).toEqual(before.log);
  for (const [i, t] of before.tasks.entries())
    for (const a of t.attempts)
      expect(after.tasks[i]!.attempts.find((x) => x.agentId === a.agentId)).toMatchObject({ attempt: a.attempt, spawnedAt: a.spawnedAt });
  // The slow worker's turn was retried on the new worker (the stall time is long here, 60 × the 1s
  // tick, so the seconds without progress while nobody ran it are no stall): one attempt per task.
  expect(after.log.some((l) => l.text.startsWith('STALL DETECTED'))).toBe(false);
  expect(after.tasks.map((t) => [t.task.slug, t.state, t.attempts.length])).toEqual([
    ['slow-a', 'integrated', 1],
    ['quick-b', 'integrated', 1],
    ['quick-c', 'integrated', 1],
  ]);

  // The dashboard matches the disk.
  expect(git(repo, 'rev-parse', 'mesh/crash/integration')).toBe(after.integrationHead);
  const commits = git(repo, 'log', '--reverse', '--format=%H', 'main..mesh/crash/integration').split('\n');
  expect(commits).toEqual(after.tasks.map((t) => t.integratedCommit));
  expect(integrated(repo, 'crash')).toEqual([
    'mesh crash: task 1 slow-a (attempt 1)',
    'mesh crash: task 2 quick-b (attempt 1)',
    'mesh crash: task 3 quick-c (attempt 1)',
  ]);
  for (const t of after.tasks)
    for (const a of t.attempts) {
      expect(existsSync(a.checkpointPath)).toBe(true);
      expect(existsSync(a.patchPath)).toBe(true);
      expect(existsSync(join(a.worktree, '.git'))).toBe(true);
      expect(a.gates).toMatchObject({ A: 'ok', C: 'ok', O: 'ok', D: 'ok', P: 'ok', S: 'ok' });
    }
  expect(git(repo, 'show', 'mesh/crash/integration:a.txt')).toBe('A');
  expect((await meshStatus(stack.warden, 'crash')).phase).toBe('ready');
  await stack.warden.client.workflow.getHandle('mesh-crash').signal('cancel', { reason: 'test over' });
});

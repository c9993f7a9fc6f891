/**
 * A warden worker SIGKILLed while it runs a task's check (workers as separate processes): nothing
 * is lost. The check heartbeats, so the server notices the dead worker and the check runs again on
 * the new one (the command left running by the dead worker is killed first); the task is
 * integrated once.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { startMesh, waitForMesh } from '../../src/client/mesh.js';
import { git, gitRepo, integrated, meshInput } from '../helpers/mesh.js';
import { useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });

test('worker SIGKILL during a task check: the check runs again, the task integrates once', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n' });
  const runs = join(mkdtempSync(join(tmpdir(), 'warden-check-runs-')), 'runs.log');
  const check = `echo started >> ${runs}; sleep 5; grep -qx A a.txt && echo passed >> ${runs}`;
  let w = stack.spawnWorker();
  await startMesh(
    stack.warden,
    meshInput('vcrash', repo, [{ title: 'Uppercase a {edit a.txt:1:A}', slug: 'upper-a', scope: ['a.txt'], verify: check }], { stallThreshold: 60 }),
  );
  // Kill while the check's command runs.
  const before = await waitForMesh(stack.warden, 'vcrash', (s) => s.log.some((e) => e.text.startsWith('CHECK task 1')), 120_000);
  for (let i = 0; i < 100 && !existsSync(runs); i++) await new Promise((r) => setTimeout(r, 100));
  expect(readFileSync(runs, 'utf8')).toBe('started\n');
  await stack.kill(w);
  await new Promise((r) => setTimeout(r, 1_000));
  w = stack.spawnWorker();
  const after = await waitForMesh(stack.warden, 'vcrash', (s) => s.phase !== 'running' && s.phase !== 'setting-up', 180_000);
  const log = after.log.map((e) => e.text);
  expect(after.phase, log.slice(-30).join('\n')).toBe('ready');

  // Nothing lost, and the check ran again on the new worker.
  expect(after.log.slice(0, before.log.length)).toEqual(before.log);
  expect(readFileSync(runs, 'utf8').match(/started/g)!.length).toBeGreaterThanOrEqual(2);
  const [t] = after.tasks;
  expect([t!.state, t!.attempts.length, t!.checkFailures ?? 0]).toEqual(['integrated', 1, 0]);
  expect(t!.attempts[0]!.check).toMatchObject({ command: check, passed: true, exitCode: 0 });
  expect(log.filter((l) => l.startsWith('CHECK PASSED'))).toHaveLength(1);
  expect(log.filter((l) => l.startsWith('INTEGRATED'))).toHaveLength(1);
  expect(integrated(repo, 'vcrash')).toEqual(['mesh vcrash: task 1 upper-a (attempt 1)']);
  expect(git(repo, 'show', 'mesh/vcrash/integration:a.txt')).toBe('A');
  await stack.warden.client.workflow.getHandle('mesh-vcrash').signal('cancel', { reason: 'test over' });
});

/**
 * The first edit target end to end, on the real dev server with real workers as separate
 * processes: a first attempt that keeps writing valid checkpoints with a moving status (so it never
 * stalls) but never edits anything is restarted once the first edit target has passed since its
 * spawn (`FIRST EDIT TARGET MISSED`), long before the patch draft timeout; the second attempt
 * integrates. The worker is SIGKILLed twice: while attempt 1 works, before its target (the rule
 * then fires on the new worker), and after the restart, once the second attempt has its draft (the
 * new worker replays the history with the rule's patch marker). The outcome is intact.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { startMesh, waitForMesh } from '../../src/client/mesh.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import { recordHistory } from '../helpers/histories.js';
import { git, gitRepo, integrated, meshInput } from '../helpers/mesh.js';
import { useWorkerProcesses } from '../helpers/stack.js';

const HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useWorkerProcesses({ WARDEN_HOME: HOME });

test('an attempt with no change in its patch draft by the first edit target is restarted; worker SIGKILLs before and after change nothing', async () => {
  const repo = gitRepo({ 'a.txt': 'a\n' });
  const tasks = [{ title: 'Reads but never edits at first {noedit-a1} {edit a.txt:1:A}', slug: 'noedit', scope: ['a.txt'] }];
  let w = stack.spawnWorker();
  // First edit target 12s; the patch draft timeout (10m) and the stall time (60 × the 1s tick) are far away.
  await startMesh(
    stack.warden,
    meshInput(
      'firstedit',
      repo,
      tasks,
      { ackSla: '10s', firstEditTarget: '12s', patchDraftTimeout: '10m', stallThreshold: 60 },
      { workerHeartbeatTimeoutMs: 3_000 },
    ),
  );
  // A first SIGKILL while attempt 1 works without an edit, before its target: the new worker replays those ticks.
  const early = await waitForMesh(
    stack.warden,
    'firstedit',
    (s) => s.tasks[0]!.attempts[0]?.acked === true && !s.log.some((l) => l.text.startsWith('FIRST EDIT TARGET MISSED')),
    120_000,
  );
  await stack.kill(w);
  await new Promise((r) => setTimeout(r, 1_000));
  w = stack.spawnWorker();
  const missed = await waitForMesh(stack.warden, 'firstedit', (s) => s.log.some((l) => l.text.startsWith('FIRST EDIT TARGET MISSED')), 120_000);
  // Kill the worker again once the second attempt has its draft (the rule's marker is in the history by then).
  const before = await waitForMesh(stack.warden, 'firstedit', (s) => s.tasks[0]!.attempts[1]?.firstEdit === 'seen', 120_000);
  await stack.kill(w);
  await new Promise((r) => setTimeout(r, 1_000));
  w = stack.spawnWorker();
  const done = await waitForMesh(stack.warden, 'firstedit', (s) => s.phase === 'ready' || s.phase === 'failed', 180_000);
  if (process.env.WARDEN_MESH_SHOW) console.log(renderDashboard(done, Date.now(), { logLines: 80 }));

  const [a1, a2] = done.tasks[0]!.attempts;
  // Attempt 1 was working (its status moved between ticks), so only the first edit target restarted it.
  expect(
    new Set(done.log.filter((l) => l.text.startsWith('ticked firstedit.noedit.a1 status="discovering: reading the code')).map((l) => l.text)).size,
  ).toBeGreaterThan(1);
  const misses = done.log.filter((l) => l.text.startsWith('FIRST EDIT TARGET MISSED'));
  expect(misses.map((l) => l.text)).toEqual([
    expect.stringMatching(/^FIRST EDIT TARGET MISSED: no change in the patch draft after \d+s \(first edit target 12s\)$/),
  ]);
  expect(misses[0]!.at - a1!.spawnedAt).toBeGreaterThanOrEqual(12_000);
  const i = done.log.indexOf(misses[0]!);
  expect(done.log[i + 1]!.text).toBe(`Action: restart task 1 (close ${a1!.agentId}, spawn attempt 2)`);
  expect(done.log.filter((l) => /^(STALL DETECTED|TIMEOUT ESCALATION|ACK SLA MISSED)/.test(l.text))).toEqual([]);
  expect(missed.log.filter((l) => l.text.startsWith('FIRST EDIT TARGET MISSED'))).toEqual(misses);
  expect(a1).toMatchObject({ firstEdit: 'missed', closed: true });
  expect(a1!.reason).toMatch(/first edit target missed/);
  expect(a2).toMatchObject({ firstEdit: 'seen', kind: 'worker' });

  // The worker SIGKILL lost nothing: the log before it is still there, and the outcome is the second attempt integrated.
  expect(done.log.slice(0, early.log.length)).toEqual(early.log);
  expect(done.log.slice(0, before.log.length)).toEqual(before.log);
  expect(done.phase).toBe('ready');
  expect(done.tasks.map((t) => [t.task.slug, t.state, t.attempts.length, t.integratedAttempt])).toEqual([['noedit', 'integrated', 2, 2]]);
  expect(integrated(repo, 'firstedit')).toEqual(['mesh firstedit: task 1 noedit (attempt 2)']);
  expect(git(repo, 'show', 'mesh/firstedit/integration:a.txt')).toBe('A');

  const handle = stack.warden.client.workflow.getHandle('mesh-firstedit');
  await handle.signal('cancel', { reason: 'test over' });
  await handle.result();
  await recordHistory(stack.server.address, handle, process.env.WARDEN_HISTORY_NAME ?? 'mesh-first-edit');
}, 480_000);

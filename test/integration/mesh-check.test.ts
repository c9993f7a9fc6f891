/**
 * A task's own definition of done: its `verify` command runs on the gated patch, before
 * integration, in a worktree warden makes from the integration head plus exactly the gated patch
 * bytes (a worker that rigs the test runner in its own worktree, outside its patch, gains nothing),
 * and nothing the check starts outlives it. A failing check keeps the patch out, sends the worker a
 * `[VERIFY]` steer with the command and its output, and waits for a new patch; the fixed patch is
 * checked again and integrated. A task whose check keeps failing fails with gate V after the
 * bound (the `checkAttempts` tunable), its check's output in the status and on the dashboard.
 */
import { execa } from 'execa';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { applyMesh, startMesh, waitForMesh } from '../../src/client/mesh.js';
import { git, gitRepo, integrated, meshInput, steersTo, wardenCli } from '../helpers/mesh.js';
import { recordHistory } from '../helpers/histories.js';
import { useStack } from '../helpers/stack.js';
import { processesWithArg as withArg } from '../helpers/procs.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));

describe('mesh task checks', () => {
  const stack = useStack();
  const warden = wardenCli(stack);

  test('a failing check keeps the patch out and steers the worker; the fixed patch integrates; a check that keeps failing fails the task with gate V', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const check = 'echo "a.txt says: $(cat a.txt)"; grep -qx right a.txt';
    const tasks = [
      { title: 'Fix a.txt {edit a.txt:1:wrong} {verify-fix a.txt:1:right}', slug: 'fix-a', scope: ['a.txt'], verify: check },
      {
        title: 'Change b.txt {edit b.txt:1:B} {verify-fix b.txt:1:B2}',
        slug: 'never-b',
        scope: ['b.txt'],
        verify: { command: 'echo still broken; exit 3', timeoutMs: '30s' },
      },
    ];
    await startMesh(stack.warden, meshInput('vcheck', repo, tasks, { cap: 2, checkAttempts: 2 }));
    const done = await waitForMesh(stack.warden, 'vcheck', (s) => s.phase !== 'running' && s.phase !== 'setting-up', 150_000);
    const log = done.log.map((e) => e.text);
    expect(done.phase, log.slice(-30).join('\n')).toBe('ready');
    expect(done.tasks.map((t) => [t.task.slug, t.state, t.attempts.length])).toEqual([
      ['fix-a', 'integrated', 1],
      ['never-b', 'failed', 1],
    ]);

    // Task 1: the first patch failed its check and was not integrated; the worker was told why.
    const [fixA, neverB] = done.tasks;
    expect(fixA!.checkFailures).toBe(1);
    expect(fixA!.attempts[0]!.check).toMatchObject({ command: check, passed: true, exitCode: 0, timedOut: false });
    expect(fixA!.attempts[0]!.check!.outputTail).toContain('a.txt says: right');
    expect(fixA!.attempts[0]!.gates).toMatchObject({ D: 'ok', P: 'ok', S: 'ok', V: 'ok' });
    const failedAt = log.findIndex((l) => l.startsWith('CHECK FAILED task 1 vcheck.fix-a.a1 (1 of 2)'));
    const integratedAt = log.findIndex((l) => l.startsWith('INTEGRATED task 1 fix-a attempt 1'));
    expect(failedAt, log.join('\n')).toBeGreaterThanOrEqual(0);
    expect(integratedAt).toBeGreaterThan(failedAt);
    const verifySteers = (await steersTo(stack, 'agent-vcheck.fix-a.a1')).filter((t) => t.startsWith('[VERIFY]'));
    expect(verifySteers).toHaveLength(1);
    expect(verifySteers[0]).toContain(`\`${check}\``);
    expect(verifySteers[0]).toContain('a.txt says: wrong');
    expect(verifySteers[0]).toMatch(/exit 1, failure 1 of 2/);
    // Only the checked, fixed patch went in, once.
    expect(integrated(repo, 'vcheck')).toEqual(['mesh vcheck: task 1 fix-a (attempt 1)']);
    expect(git(repo, 'show', 'mesh/vcheck/integration:a.txt')).toBe('right');

    // Task 2: the bound (2 failed checks), then gate V fails the task; never integrated.
    expect(neverB!.failedGate).toBe('V');
    expect(neverB!.reason).toBe("gate V failed: the task's check `echo still broken; exit 3` failed 2 times (exit 3: still broken); not integrated");
    expect(neverB!.checkFailures).toBe(2);
    expect(neverB!.attempts[0]!.check).toMatchObject({ passed: false, exitCode: 3, outputTail: 'still broken' });
    expect((await steersTo(stack, 'agent-vcheck.never-b.a1')).filter((t) => t.startsWith('[VERIFY]'))).toHaveLength(1);

    // The checks on the dashboard, through the CLI.
    const dashboard = await warden('mesh', 'status', 'vcheck');
    expect(dashboard.exitCode, dashboard.stderr).toBe(0);
    expect(dashboard.stdout).toContain(`Task checks\n- task 1 fix-a attempt 1: passed (exit 0, 1 failed): ${check}`);
    expect(dashboard.stdout).toContain('- task 2 never-b attempt 1: failed (exit 3, 2 failed): echo still broken; exit 3\n  output: still broken');
    expect(dashboard.stdout).toMatch(/^- task 2 never-b \(gate V\): gate V failed/m);

    const handle = stack.warden.client.workflow.getHandle('mesh-vcheck');
    await handle.signal('cancel', { reason: 'test over' });
    await handle.result();
    await recordHistory(stack.server.address, handle, process.env.WARDEN_HISTORY_NAME ?? 'mesh-task-check');
  });

  test("the check runs on the integration head plus the gated patch, not in the worker's worktree; nothing it starts outlives it", async () => {
    // Task 1's patch (a.txt, within its scope) is wrong; in its own worktree the worker also makes
    // the test runner pass, outside its patch. Task 2's check leaves a daemon in a session of its own.
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'check.sh': 'echo "a.txt says: $(cat a.txt)"; grep -qx right a.txt\n' });
    const tag = `warden-check-daemon-${process.pid}-${Date.now()}`;
    const tasks = [
      { title: 'Fix a.txt {edit a.txt:1:wrong} {unpatched check.sh:1:exit 0}', slug: 'rigged', scope: ['a.txt'], verify: 'sh check.sh' },
      {
        title: 'Change b.txt {edit b.txt:1:B}',
        slug: 'daemon',
        scope: ['b.txt'],
        verify: `setsid env -i sh -c 'while sleep 1; do :; done # ${tag}' >/dev/null 2>&1 & echo started`,
      },
    ];
    await startMesh(stack.warden, meshInput('vhead', repo, tasks, { cap: 2, checkAttempts: 1 }));
    const done = await waitForMesh(stack.warden, 'vhead', (s) => s.phase !== 'running' && s.phase !== 'setting-up', 150_000);
    const log = done.log.map((e) => e.text);
    expect(done.phase, log.slice(-30).join('\n')).toBe('ready');
    // Both at once: where each check ran, and what its processes left.
    expect({
      tasks: done.tasks.map((t) => [t.task.slug, t.state, t.failedGate ?? null]),
      daemons: withArg(tag),
    }).toEqual({
      tasks: [
        ['rigged', 'failed', 'V'],
        ['daemon', 'integrated', null],
      ],
      daemons: [],
    });
    const [rigged, daemon] = done.tasks;
    // The worker's own worktree passes its rigged runner; warden's check ran the committed one on the patch.
    expect(readFileSync(join(rigged!.attempts[0]!.worktree, 'check.sh'), 'utf8')).toBe('exit 0\n');
    expect(rigged!.attempts[0]!.check).toMatchObject({ command: 'sh check.sh', passed: false, exitCode: 1 });
    expect(rigged!.attempts[0]!.check!.outputTail).toContain('a.txt says: wrong');
    expect(daemon!.attempts[0]!.check).toMatchObject({ passed: true, exitCode: 0, outputTail: 'started' });
    expect(integrated(repo, 'vhead')).toEqual(['mesh vhead: task 2 daemon (attempt 1)']);
    // The check worktrees are gone once each check ended.
    expect(git(repo, 'worktree', 'list')).not.toContain('/checks/');

    await applyMesh(stack.warden, 'vhead');
    expect(readFileSync(join(repo, 'b.txt'), 'utf8')).toBe('B\n');
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('a\n');
    expect(withArg(tag)).toEqual([]);
  });

  test('a cancel during a slow check cancels it: its process group is killed, nothing is integrated', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const runs = join(mkdtempSync(join(tmpdir(), 'warden-check-runs-')), 'runs.log');
    const check = `echo started >> ${runs}; sleep 300; echo finished >> ${runs}`;
    await startMesh(stack.warden, meshInput('vcancel', repo, [{ title: 'Uppercase a {edit a.txt:1:A}', slug: 'upper-a', verify: check }]));
    await waitForMesh(stack.warden, 'vcancel', (s) => s.log.some((e) => e.text.startsWith('CHECK task 1')), 120_000);
    for (let i = 0; i < 100 && !existsSync(runs); i++) await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(runs, 'utf8')).toBe('started\n');
    const handle = stack.warden.client.workflow.getHandle('mesh-vcancel');
    await handle.signal('cancel', { reason: 'test over' });
    const done = await waitForMesh(stack.warden, 'vcancel', (s) => s.phase === 'cancelled', 120_000);
    const log = done.log.map((e) => e.text);
    expect(log).toContain('CHECK CANCELLED task 1 vcancel.upper-a.a1: the mesh is cancelled');
    expect(done.tasks.map((t) => [t.state, t.reason])).toEqual([['failed', 'cancelled: test over']]);
    expect(done.tasks[0]!.attempts[0]!.check ?? null).toBeNull();
    expect(integrated(repo, 'vcancel')).toEqual([]);
    // The check's shell is gone (killed with its group), and it never finished.
    let left = '';
    for (let i = 0; i < 50; i++) {
      left = (await execa('ps', ['-eo', 'args'])).stdout
        .split('\n')
        .filter((l) => l.includes(runs))
        .join('\n');
      if (!left) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(left).toBe('');
    expect(readFileSync(runs, 'utf8')).toBe('started\n');
  });
});

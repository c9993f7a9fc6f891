/**
 * The mesh on a real dev server with real git repositories and real worker processes (the
 * `command`-driven fixture test/fixtures/mesh-agent.py): waves up to the cap, patches integrated
 * in task order, `apply` merging into the user's branch; a conflicting patch rebased by its own
 * agent after the seed's rebase request.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { applyMesh, cancelMesh, MeshApplyRefusedError, startMesh, waitForMesh } from '../../src/client/mesh.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import { git, gitRepo, integrated, meshInput } from '../helpers/mesh.js';
import { eventually, useStack, type Stack } from '../helpers/stack.js';
import { startWebhookListener } from '../helpers/webhook.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const show = (s: Parameters<typeof renderDashboard>[0]) => process.env.WARDEN_MESH_SHOW && console.log(renderDashboard(s, Date.now()));

/** The payloads of every `name` signal a workflow received, from its history. */
async function signalsTo(stack: Stack, workflowId: string, name: string): Promise<{ text?: string }[]> {
  const history = await stack.warden.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .map((e) => e.workflowExecutionSignaledEventAttributes)
    .filter((a) => a?.signalName === name)
    .map((a) => JSON.parse(Buffer.from(a!.input!.payloads![0]!.data!).toString('utf8')) as { text?: string });
}

describe('mesh', () => {
  const stack = useStack();

  test('4 tasks with cap 2: two waves, four patches integrated in task order, apply merges', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n' });
    const tasks = ['a', 'b', 'c', 'd'].map((f) => ({
      title: `Uppercase ${f}.txt {edit ${f}.txt:1:${f.toUpperCase()}} {edit ${f}.txt:end:by task ${f}}`,
      scope: [`${f}.txt`],
    }));
    await startMesh(stack.warden, meshInput('waves', repo, tasks, { cap: 2 }));
    const early = await waitForMesh(stack.warden, 'waves', (s) => s.tasks.filter((t) => t.attempts.length > 0).length === 2);
    expect(readFileSync(join(repo, '.mesh/runs/waves/manifest.md'), 'utf8')).toContain('- Cap: 2');
    expect(early.tasks.map((t) => t.state).filter((x) => x === 'queued')).toHaveLength(2);
    await expect(applyMesh(stack.warden, 'waves')).rejects.toThrow(MeshApplyRefusedError);
    const done = await waitForMesh(stack.warden, 'waves', (s) => s.phase === 'ready', 90_000);
    show(done);
    expect(done.tasks.map((t) => t.state)).toEqual(['integrated', 'integrated', 'integrated', 'integrated']);
    expect(integrated(repo, 'waves')).toEqual(
      [
        '1-uppercase-a-txt-edit-a-txt-1-a-edit-a',
        '2-uppercase-b-txt-edit-b-txt-1-b-edit-b',
        '3-uppercase-c-txt-edit-c-txt-1-c-edit-c',
        '4-uppercase-d-txt-edit-d-txt-1-d-edit-d',
      ].map((slug, i) => `mesh waves: task ${i + 1} ${slug} (attempt 1)`),
    );
    // Waves: tasks 3 and 4 were spawned only after a slot freed (task 1 or 2 integrated).
    const order = done.log
      .map((e) => e.text)
      .filter((x) => /^(SPAWNED|INTEGRATED) task/.test(x))
      .map((x) => x.split(' ').slice(0, 3).join(' '));
    expect(order.indexOf('SPAWNED task 3')).toBeGreaterThan(order.indexOf('INTEGRATED task 1'));
    expect(order.indexOf('SPAWNED task 2')).toBeLessThan(order.indexOf('INTEGRATED task 1'));
    let live = 0;
    for (const e of order) {
      live += e.startsWith('SPAWNED') ? 1 : -1;
      expect(live).toBeLessThanOrEqual(2);
    }
    for (const t of done.tasks) expect(t.attempts[0]!.gates).toMatchObject({ A: 'ok', C: 'ok', O: 'ok', D: 'ok', P: 'ok', S: 'ok' });
    const applied = await applyMesh(stack.warden, 'waves');
    expect(applied.branch).toBe('main');
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(applied.commit);
    for (const f of ['a', 'b', 'c', 'd']) expect(readFileSync(join(repo, `${f}.txt`), 'utf8')).toBe(`${f.toUpperCase()}\nby task ${f}\n`);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    const final = await stack.warden.client.workflow.getHandle('mesh-waves').result();
    expect(final.phase).toBe('applied');
  });

  test('two tasks editing the same lines: the second patch fails, its agent rebases on request, the new patch applies', async () => {
    const repo = gitRepo({ 'shared.txt': 'one\ntwo\nthree\n' });
    const tasks = [
      { title: 'Set line 2 to alpha {edit shared.txt:2:alpha}', slug: 'alpha', scope: ['shared.txt'] },
      { title: 'Set line 2 to beta {edit shared.txt:2:beta} {edit shared.txt:end:four}', slug: 'beta', scope: ['shared.txt'] },
    ];
    await startMesh(stack.warden, meshInput('conflict', repo, tasks, { cap: 2 }));
    const done = await waitForMesh(stack.warden, 'conflict', (s) => s.phase === 'ready', 90_000);
    show(done);
    const logText = done.log.map((e) => e.text).join('\n');
    expect(logText).toMatch(/PATCH DID NOT APPLY task 2 attempt 1: shared.txt \(conflict 1\/3\)/);
    expect(logText).toMatch(/REBASE REQUEST sent to conflict\.beta\.a1\n/);
    expect(done.conflicts).toBe(1);
    expect(done.tasks.map((t) => [t.state, t.attempts.length])).toEqual([
      ['integrated', 1],
      ['integrated', 1],
    ]);
    // The same agent got the seed's template, as a steering signal, and answered with a new patch.
    const steers = await signalsTo(stack, 'agent-conflict.beta.a1', 'steer');
    expect(steers).toHaveLength(1);
    expect(steers[0]!.text).toMatch(
      /^Your patch did not apply cleanly\.\nPlease rebase\/regenerate your patch against the current workspace state and resend a single unified diff\.\nFailure details:\n- Conflicting files: shared\.txt\n- Error summary: error: patch failed: shared\.txt:1/,
    );
    expect(steers[0]!.text).toContain('Constraints:\n- Keep patch-first.\n- Do not broaden scope.');
    const mainDir = join(repo, '.mesh/runs/conflict/integration');
    expect(readFileSync(join(mainDir, 'shared.txt'), 'utf8')).toBe('one\nbeta\nthree\nfour\n');
    expect(integrated(repo, 'conflict')).toHaveLength(2);
    expect(readFileSync(join(repo, '.mesh/runs/conflict/patches/beta--a1.diff'), 'utf8')).toMatch(/^diff --git a\/shared.txt b\/shared.txt/);
    expect(readFileSync(join(repo, '.mesh/runs/conflict/checkpoints/beta--a1.md'), 'utf8')).toMatch(/^status_code: done\nstatus_detail: rebased onto /);
    // cancel ends the mesh without merging; apply is refused afterwards.
    await cancelMesh(stack.warden, 'conflict', 'enough');
    const final = await stack.warden.client.workflow.getHandle('mesh-conflict').result();
    expect(final).toMatchObject({ phase: 'cancelled', phaseReason: 'enough', applied: null });
    await expect(applyMesh(stack.warden, 'conflict')).rejects.toThrow(/has ended \(completed\); nothing to apply/);
    expect(git(repo, 'log', '--format=%s', 'main')).toBe('base');
  });

  test('past the conflict budget the mesh awaits a human and notifies; resume sends the rebase request', async () => {
    const hook = await startWebhookListener();
    try {
      const repo = gitRepo({ 'shared.txt': 'one\ntwo\nthree\n' });
      const tasks = [
        { title: 'Set line 2 to alpha {edit shared.txt:2:alpha}', slug: 'alpha', scope: ['shared.txt'] },
        { title: 'Set line 2 to beta {edit shared.txt:2:beta}', slug: 'beta', scope: ['shared.txt'] },
      ];
      await startMesh(stack.warden, meshInput('budget', repo, tasks, { cap: 2, conflictBudget: 0 }, { notify: { webhooks: [{ url: hook.url }], log: true } }));
      const waiting = await waitForMesh(stack.warden, 'budget', (s) => s.phase === 'awaiting-input', 90_000);
      show(waiting);
      expect(waiting.phaseReason).toMatch(/^conflict budget spent \(0\)/);
      expect(waiting.tasks.map((t) => t.state)).toEqual(['integrated', 'needs_rebase']);
      expect(await signalsTo(stack, 'agent-budget.beta.a1', 'steer')).toEqual([]); // nothing sent past the budget
      const delivery = await eventually(async () => hook.accepted()[0], { what: 'the webhook', timeoutMs: 30_000 });
      expect(delivery.json).toMatchObject({ event: 'mesh-awaiting-input', agentId: 'mesh-budget', reason: expect.stringMatching(/^conflict budget spent/) });

      await stack.warden.client.workflow.getHandle('mesh-budget').signal('resume', { note: 'go on' });
      const done = await waitForMesh(stack.warden, 'budget', (s) => s.phase === 'ready', 90_000);
      expect(done.log.map((e) => e.text)).toContain('RESUMED by a human: go on; conflict budget now 1');
      expect(done.tasks.map((t) => t.state)).toEqual(['integrated', 'integrated']);
      expect(await signalsTo(stack, 'agent-budget.beta.a1', 'steer')).toHaveLength(1);
      expect(git(repo, 'show', 'mesh/budget/integration:shared.txt')).toBe('one\nbeta\nthree');
    } finally {
      await hook.close();
    }
  });
});

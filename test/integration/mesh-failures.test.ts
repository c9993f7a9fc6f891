/**
 * Tasks whose gates keep failing for real end `failed`, with the failing gate and the end of the
 * last output in the status and the dashboard, and the mesh still reaches `ready` and tells the
 * webhooks: a worker that claims done without changing anything (no diff: gate D), one whose
 * patch conflicts and which ignores the rebase request (gate P), one that writes outside its scope
 * (gate S), beside one that does its task. Real dev server, real git, real worker processes,
 * a real webhook listener.
 */
import { execa } from 'execa';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { startMesh, waitForMesh } from '../../src/client/mesh.js';
import type { meshWorkflow } from '../../workflows/mesh/workflow.js';
import { git, gitRepo, integrated, meshInput } from '../helpers/mesh.js';
import { ROOT, eventually, useStack } from '../helpers/stack.js';
import { startWebhookListener } from '../helpers/webhook.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));

describe('mesh tasks that fail for real', () => {
  const stack = useStack();
  const warden = (...args: string[]) =>
    execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, '--namespace', stack.server.namespace, ...args], {
      reject: false,
      env: { WARDEN_LOG_LEVEL: 'warn' },
    });

  test('no diff (D), a conflict never rebased (P), out of scope (S): failed with the gate and the last output; the mesh is ready and notifies', async () => {
    const hook = await startWebhookListener();
    try {
      const repo = gitRepo({ 'shared.txt': 'one\ntwo\nthree\n', 'z.txt': 'z\n' });
      const tasks = [
        { title: 'Set line 2 to alpha {edit shared.txt:2:alpha}', slug: 'alpha', scope: ['shared.txt'] },
        { title: 'Set line 2 to beta {no-rebase} {edit shared.txt:2:beta}', slug: 'beta', scope: ['shared.txt'] },
        { title: 'Claim it without doing it {no-diff} {edit shared.txt:3:gamma}', slug: 'idle', scope: ['shared.txt'] },
        { title: 'Uppercase z {edit z.txt:1:Z} {edit outside.txt:1:escaped}', slug: 'stray', scope: ['z.txt'] },
      ];
      await startMesh(
        stack.warden,
        meshInput('fails', repo, tasks, { cap: 4, patchDraftTimeout: '15s' }, { notify: { webhooks: [{ url: hook.url }], log: true } }),
      );
      const done = await waitForMesh(stack.warden, 'fails', (s) => s.phase !== 'running' && s.phase !== 'setting-up', 240_000);
      const log = done.log.map((e) => e.text);
      expect(done.phase, log.slice(-30).join('\n')).toBe('ready');
      expect(done.phaseReason).toBe('1 of 4 tasks through, 3 failed; `warden mesh apply fails` merges');
      const [alpha, beta, idle, stray] = done.tasks;
      expect(alpha!.state).toBe('integrated');

      expect(beta).toMatchObject({ state: 'failed', failedGate: 'P', reason: expect.stringMatching(/^no new patch \d+s after the rebase request/) });
      expect(beta!.lastOutput).toMatch(/^[\s\S]*3\) Patch\n```diff\ndiff --git a\/shared.txt b\/shared.txt[\s\S]*6\) Questions\n- none$/);
      expect(idle).toMatchObject({ state: 'failed', failedGate: 'D' });
      expect(idle!.lastOutput).toMatch(/1\) Summary\n- nothing to change\n/);
      expect(idle!.attempts.length).toBeGreaterThan(1); // restarted (and taken over) before giving up
      expect(stray).toMatchObject({ state: 'failed', failedGate: 'S', reason: 'gate S failed: outside.txt outside the scope z.txt; not integrated' });
      expect(stray!.lastOutput).toMatch(/5\) Risks \/ follow-ups\n- none\n6\) Questions\n- none$/);
      expect(integrated(repo, 'fails')).toEqual(['mesh fails: task 1 alpha (attempt 1)']);

      // The webhooks hear that the mesh is ready, with the failures counted.
      const ready = await eventually(async () => hook.accepted().find((d) => /^mesh ready:/.test((d.json as { reason?: string }).reason ?? '')), {
        what: 'the ready notice',
        timeoutMs: 30_000,
      });
      expect(ready.json).toMatchObject({
        event: 'mesh-ready',
        agentId: 'mesh-fails',
        reason: 'mesh ready: 1 of 4 tasks through, 3 failed; `warden mesh apply fails` merges',
      });
      // …through a notify workflow, as an agent's alerts are (its retries, its IRC and Slack formats).
      const alerts = await eventually(
        async () => {
          const ids: string[] = [];
          for await (const w of stack.warden.client.workflow.list({ query: "WorkflowType = 'notifyWorkflow'" }))
            if (w.workflowId.startsWith('notify-mesh-fails-')) ids.push(w.workflowId);
          return ids.length ? ids : null;
        },
        { what: 'the notify workflow', timeoutMs: 30_000 },
      );
      expect(alerts).toHaveLength(1);

      // The dashboard names the gate and shows the last output, one line each.
      const dashboard = await warden('mesh', 'status', 'fails');
      expect(dashboard.exitCode, dashboard.stderr).toBe(0);
      expect(dashboard.stdout).toMatch(/^Failures\n- task 2 beta \(gate P\): no new patch \d+s after the rebase request/m);
      expect(dashboard.stdout).toMatch(/^- task 3 idle \(gate D\): /m);
      expect(dashboard.stdout).toMatch(
        /^- task 4 stray \(gate S\): gate S failed: outside.txt outside the scope z.txt; not integrated\n {2}last output: .*6\) Questions - none$/m,
      );
      expect(git(repo, 'show', 'mesh/fails/integration:shared.txt')).toBe('one\nalpha\nthree');
      await stack.warden.client.workflow.getHandle('mesh-fails').signal('cancel', { reason: 'test over' });
    } finally {
      await hook.close();
    }
  });

  test('an explorer that never writes a checkpoint: restarted once at the ack SLA, then failed (gate A), not waited for forever', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const tasks = [{ title: 'Survey the code {silent}', slug: 'mute', agent: 'explorer' as const }];
    await startMesh(stack.warden, meshInput('mute', repo, tasks, { ackSla: '4s', patchDraftTimeout: '10s', continueWaiting: true }));
    const done = await waitForMesh(stack.warden, 'mute', (s) => s.phase !== 'running' && s.phase !== 'setting-up', 120_000);
    expect(done.phase).toBe('ready');
    const [t] = done.tasks;
    expect(t).toMatchObject({
      state: 'failed',
      failedGate: 'A',
      ackRestarts: 1,
      reason: expect.stringMatching(
        /^gate A failed: no checkpoint \d+s after spawn, after the ack restart \(limit: the ack SLA 4s \+ the patch draft timeout 10s\)$/,
      ),
    });
    expect(t!.attempts.map((a) => [a.attempt, a.gates.A, a.closed])).toEqual([
      [1, 'fail', true],
      [2, 'fail', true],
    ]);
    expect(t!.lastOutput).toMatch(/^turn \d+: thinking \(no checkpoint yet\)$/);
    expect(done.phaseReason).toMatch(/^0 of 1 tasks through, 1 failed/);
    await stack.warden.client.workflow.getHandle('mesh-mute').signal('cancel', { reason: 'test over' });
  });

  test('a worker waiting for feedback nobody gives: a stall after the patch draft timeout (even with continue waiting), then a take-over does the task', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const tasks = [{ title: 'Uppercase a {waits-a1} {edit a.txt:1:A}', slug: 'asks', scope: ['a.txt'] }];
    await startMesh(stack.warden, meshInput('asks', repo, tasks, { ackSla: '20s', patchDraftTimeout: '8s', continueWaiting: true }));
    const done = await waitForMesh(stack.warden, 'asks', (s) => s.phase !== 'running' && s.phase !== 'setting-up', 120_000);
    const log = done.log.map((e) => e.text);
    expect(done.phase, log.slice(-20).join('\n')).toBe('ready');
    expect(
      log.some((l) =>
        /^STALL DETECTED: no progress for \d+s \(status "waiting_for_feedback: which file should I change\?", no patch draft; nobody answers a worker waiting for feedback; limit 8s\)$/.test(
          l,
        ),
      ),
    ).toBe(true);
    expect(done.tasks[0]!.attempts.map((a) => [a.attempt, a.kind])).toEqual([
      [1, 'worker'],
      [2, 'takeover'],
    ]);
    expect(done.tasks[0]!.state).toBe('integrated');
    expect(git(repo, 'show', 'mesh/asks/integration:a.txt')).toBe('A');
    await stack.warden.client.workflow.getHandle('mesh-asks').signal('cancel', { reason: 'test over' });
  });

  test('cancel while workers run: every task ends failed as cancelled, every worker agent is stopped, the mesh is cancelled', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const tasks = [
      { title: 'Slow a {slow:120} {edit a.txt:1:A}', slug: 'slow-a', scope: ['a.txt'] },
      { title: 'Slow b {slow:120} {edit b.txt:1:B}', slug: 'slow-b', scope: ['b.txt'] },
    ];
    await startMesh(stack.warden, meshInput('halt', repo, tasks, { cap: 2, stallThreshold: 60 }));
    await waitForMesh(stack.warden, 'halt', (s) => s.tasks.every((t) => t.attempts[0]?.lastStatus?.startsWith('drafting_patch|working') === true), 120_000);
    const handle = stack.warden.client.workflow.getHandle<typeof meshWorkflow>('mesh-halt');
    await handle.signal('cancel', { reason: 'changed my mind' });
    const final = await handle.result();
    expect(final).toMatchObject({ phase: 'cancelled', phaseReason: 'changed my mind', applied: null });
    expect(final.tasks.map((t) => [t.state, t.reason, t.failedGate])).toEqual([
      ['failed', 'cancelled: changed my mind', null],
      ['failed', 'cancelled: changed my mind', null],
    ]);
    for (const t of final.tasks) {
      const agent = await stack.warden.client.workflow.getHandle(t.attempts[0]!.workflowId).result();
      expect(agent.state, agent.stateReason ?? '').toBe('done');
      expect(agent.stateReason).toMatch(/^stopped.*: mesh halt: mesh cancelled: changed my mind$/);
    }
    // Nothing merged, and nothing of the run left: its branches (the integration branch included) are removed.
    expect(git(repo, 'log', '--format=%s', 'main')).toBe('base');
    expect(git(repo, 'branch', '--list', 'mesh/halt/*')).toBe('');
  });
});

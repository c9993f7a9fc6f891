/**
 * Verified done through the hooks: the real `warden hook claude|codex` command, a dev server, an
 * in-process worker and a real verify command (`sh -c 'test -f ok.txt'`).
 *
 *  - For an agent with `verify`, a Stop is a done-claim: a false one blocks the stop with the
 *    [VERIFY] whisper as the reason (also for a stop a hook already continued); a true one lets
 *    the agent stop and ends it done with lastVerification.passed.
 *  - The same for codex's Stop.
 *  - Repeated false claims: at the ladder's escalation the agent is paused and its stop goes ahead.
 *  - Without verify/protect, a Stop is reported as before: the agent does not end.
 *  - A check that outlasts the hook's --timeout: the stop goes ahead (exit 0), and the failure
 *    reaches the agent at its next prompt.
 *  - Temporal unreachable: exit 0, no output.
 */
import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { waitForStatus } from '../helpers/agents.js';
import { ROOT, cleanup, useStack } from '../helpers/stack.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
const quiet = { evalInterval: 1000, idleAfterMs: 0 }; // no evaluations: every whisper here is the check's
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) cleanup(d);
});

function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'warden-hook-verify-'));
  dirs.push(dir);
  return dir;
}

function hook(agent: 'claude' | 'codex', agentId: string, payload: object, extra: string[] = []) {
  const live = ['--address', stack.server.address, '--namespace', stack.server.namespace];
  return execa(process.execPath, [WARDEN, 'hook', agent, '--agent', agentId, ...live, '--timeout', '60000', ...extra], {
    input: JSON.stringify(payload),
    reject: false,
    timeout: 90_000,
  });
}

const COMMAND = "sh -c 'test -f ok.txt'";

for (const agent of ['claude', 'codex'] as const) {
  test(`${agent}: a false done-claim at Stop blocks the stop with the [VERIFY] reason; a true one ends the agent done`, async () => {
    const dir = workDir();
    const agentId = `hv-${agent}`;
    await stack.warden.start({ agentId, task: 'Create ok.txt.', supervisor: quiet, verify: { command: COMMAND, cwd: dir } });
    const stop = (n: number, text: string, active: boolean) => ({
      hook_event_name: 'Stop',
      session_id: `sess-${agent}`,
      ...(agent === 'codex' ? { turn_id: `turn-${n}` } : {}),
      stop_hook_active: active,
      last_assistant_message: text,
    });

    const first = await hook(agent, agentId, stop(1, 'I created ok.txt. Done.', false));
    expect(first.exitCode, first.stderr).toBe(0);
    const answer = JSON.parse(first.stdout.trim()) as { decision?: string; reason?: string };
    expect(answer.decision, first.stdout).toBe('block');
    expect(answer.reason).toContain('[VERIFY]');
    expect(answer.reason).toContain('test -f ok.txt');
    let s = await stack.warden.status(agentId);
    expect(s).toMatchObject({ state: 'running', verifying: false, pendingWhispers: 0 });
    expect(s.lastVerification).toMatchObject({ command: COMMAND, passed: false, exitCode: 1 });

    // The agent carried on (the stop hook is active now) and claims again, still wrongly: blocked again.
    const second = await hook(agent, agentId, stop(2, 'Really done now.', true));
    expect(second.exitCode, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout.trim())).toMatchObject({ decision: 'block', reason: expect.stringContaining('[VERIFY]') });
    expect((await stack.warden.status(agentId)).state).toBe('running');

    writeFileSync(join(dir, 'ok.txt'), 'ok\n');
    const third = await hook(agent, agentId, stop(3, 'ok.txt exists now. Done.', true));
    expect(third.exitCode, third.stderr).toBe(0);
    expect(third.stdout).toBe('');
    s = await stack.warden.status(agentId);
    expect(s.state).toBe('done');
    expect(s.lastVerification).toMatchObject({ command: COMMAND, passed: true, exitCode: 0 });
  });
}

test('repeated false claims are bounded by the ladder: at escalation the agent is paused and its stop is not blocked', async () => {
  const dir = workDir();
  const agentId = 'hv-liar';
  await stack.warden.start({ agentId, task: 'Create ok.txt.', supervisor: quiet, verify: { command: COMMAND, cwd: dir } });
  const stop = (n: number) => ({ hook_event_name: 'Stop', session_id: 's-liar', stop_hook_active: n > 1, last_assistant_message: `Done (claim ${n}).` });
  for (const n of [1, 2]) {
    const r = await hook('claude', agentId, stop(n));
    expect(JSON.parse(r.stdout.trim()), r.stderr).toMatchObject({ decision: 'block' });
  }
  const third = await hook('claude', agentId, stop(3));
  expect(third.exitCode).toBe(0);
  expect(third.stdout.includes('"block"'), third.stdout).toBe(false);
  const s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ paused: true, escalations: 1 });
  expect(s.state).not.toBe('done');
  await stack.warden.signal(agentId, 'abort', {});
});

test('without verify or protect a Stop is reported as before: the agent does not end', async () => {
  const agentId = 'hv-plain';
  await stack.warden.start({ agentId, task: 'x', supervisor: quiet });
  const r = await hook('claude', agentId, { hook_event_name: 'Stop', session_id: 's-plain', stop_hook_active: false, last_assistant_message: 'Done.' });
  expect(r.exitCode).toBe(0);
  expect(r.stdout).toBe('');
  expect(r.stderr).toBe('');
  const s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ state: 'running', turns: 1, verifying: false, lastVerification: null, checksDone: false });
  await stack.warden.signal(agentId, 'abort', {});
});

test('a check that outlasts the hook --timeout: the stop goes ahead; the failure comes with the next prompt', async () => {
  const dir = workDir();
  const agentId = 'hv-slow';
  const command = "sleep 6; sh -c 'test -f ok.txt'";
  await stack.warden.start({ agentId, task: 'Create ok.txt.', supervisor: quiet, verify: { command, cwd: dir } });
  const r = await hook('claude', agentId, { hook_event_name: 'Stop', session_id: 's-slow', stop_hook_active: false, last_assistant_message: 'Done.' }, [
    '--timeout',
    '3000',
  ]);
  expect(r.exitCode).toBe(0);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/done-claim is still running; the stop goes ahead/);
  const failed = await waitForStatus(stack.warden, agentId, (s) => s.lastVerification !== null, 'the verification', 60_000);
  expect(failed).toMatchObject({ state: 'running', pendingWhispers: 1 });
  expect(failed.lastVerification).toMatchObject({ passed: false, exitCode: 1 });
  const prompt = await hook('claude', agentId, { hook_event_name: 'UserPromptSubmit', session_id: 's-slow', prompt: 'continue' });
  expect(prompt.exitCode).toBe(0);
  const out = JSON.parse(prompt.stdout.trim()) as { hookSpecificOutput?: { additionalContext?: string } };
  expect(out.hookSpecificOutput?.additionalContext).toContain('[VERIFY]');
  await stack.warden.signal(agentId, 'abort', {});
});

test('Temporal unreachable: a Stop exits 0 with no output', async () => {
  const r = await execa(process.execPath, [WARDEN, 'hook', 'claude', '--agent', 'hv-ghost', '--address', '127.0.0.1:1', '--timeout', '1500'], {
    input: JSON.stringify({ hook_event_name: 'Stop', session_id: 's', stop_hook_active: false, last_assistant_message: 'Done.' }),
    reject: false,
    timeout: 30_000,
  });
  expect(r.exitCode).toBe(0);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/cannot reach Temporal at 127\.0\.0\.1:1 .* continuing without supervision/);
});

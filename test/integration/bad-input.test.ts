/**
 * Bad input gets a clear error and loses nothing: an invalid update is rejected by its validator
 * (naming the field, leaving no trace in history); an invalid signal is recorded and ignored and the
 * workflow stays healthy; illegal events are refused; CLI verbs on an unknown agent exit 3.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { execa } from 'execa';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { recordHistory } from '../helpers/histories.js';
import { ROOT, eventually, useStack } from '../helpers/stack.js';
import { finalStatus } from '../helpers/agents.js';
import { temporalCli } from '../helpers/temporal-cli.js';

const stack = useStack();

const cli = (args: string[], input?: string) =>
  execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, ...args], { reject: false, input });

test('invalid update payload is rejected by the validator, naming the field, and leaves no trace', async () => {
  await stack.warden.start({ agentId: 'strict', task: 'anything' });
  const handle = stack.warden.handle('strict');
  // Bypass the client's own validation: this is what a buggy service in another language would send.
  const err = await handle.executeUpdate('reportTurn', { args: [{ text: 42, toolCalls: [{ args: 'x' }] }] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const msg = String((err as WorkflowUpdateFailedError).cause?.message);
  expect(msg).toMatch(/text/);
  expect(msg).toMatch(/toolCalls\.0\.name/);
  const history = await handle.fetchHistory();
  const types = history.events!.map((e) => String(e.eventType));
  expect(types.some((t) => /UPDATE_ACCEPTED|UpdateAccepted|47/.test(t))).toBe(false);
  const s = await stack.warden.status('strict');
  expect(s.turns).toBe(0);
  // The workflow is healthy: a valid turn goes through.
  const ok = await stack.warden.reportTurn('strict', { id: 'good', text: 'a proper turn' });
  expect(ok).toMatchObject({ accepted: true, state: 'running' });
});

test('invalid signal payloads are recorded and ignored; the workflow stays healthy', async () => {
  await stack.warden.start({ agentId: 'noisy', task: 'anything' });
  const handle = stack.warden.handle('noisy');
  await handle.signal('steer', { text: 123 });
  await handle.signal('stop', { drainTimeoutMs: 'soon' });
  await handle.signal('pause', 'not an object');
  // A bare resume on a running agent is an illegal event: refused, not applied.
  const r = await temporalCli(stack.server.address, ['workflow', 'signal', '--workflow-id', 'agent-noisy', '--name', 'resume']);
  expect(r.exitCode, r.all).toBe(0);
  const s = await eventually(async () => {
    const st = await stack.warden.status('noisy');
    return st.refused.length >= 4 ? st : null;
  });
  expect(s.invalidSignals).toBe(3);
  expect(s.refused.map((x) => x.what)).toEqual(['steer', 'stop', 'pause', 'resume']);
  expect(s.refused[0]!.reason).toMatch(/text/);
  expect(s.refused[1]!.reason).toMatch(/drainTimeoutMs/);
  expect(s.refused[3]!.reason).toMatch(/not allowed while spawning/);
  expect(s).toMatchObject({ state: 'spawning', pendingWhispers: 0, stopRequested: false, paused: false });
  // Nothing wedged: reports and valid signals still work.
  await stack.warden.reportTurn('noisy', { id: 'n1', text: 'working' });
  await stack.warden.signal('noisy', 'steer', { text: 'focus on the failing test' });
  const reply = await stack.warden.reportTurn('noisy', { id: 'n2', text: 'working more' });
  expect(reply.whispers.map((w) => w.text)).toEqual(['focus on the failing test']);
  const d = await handle.describe();
  expect(d.status.name).toBe('RUNNING');
  await recordHistory(stack.server.address, handle, 'bad-input-signals');
});

test('an ended agent refuses reports and signals with a clear message', async () => {
  await stack.warden.start({ agentId: 'ended', task: 'anything' });
  await stack.warden.signal('ended', 'abort', { reason: 'no longer needed' });
  await finalStatus(stack.warden.handle('ended'));
  const rep = await cli(['report', 'ended'], '{"text":"late turn"}');
  expect(rep.exitCode).toBe(2);
  expect(rep.stderr).toMatch(/ended|failed|completed/i);
  const sig = await cli(['resume', 'ended']);
  expect(sig.exitCode).toBe(2);
  expect(sig.stderr).toMatch(/not running/);
});

test('CLI: unknown agent exits 3, bad input exits 2 naming the field', async () => {
  for (const args of [
    ['status', 'ghost'],
    ['resume', 'ghost'],
    ['steer', 'ghost', 'hello'],
    ['stop', 'ghost'],
  ]) {
    const r = await cli(args);
    expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(3);
    expect(r.stderr).toMatch(/no such agent: ghost/);
  }
  const rep = await cli(['report', 'ghost'], '{"text":"hi"}');
  expect(rep.exitCode).toBe(3);
  const json = await cli(['status', 'ghost', '--json']);
  expect(JSON.parse(json.stdout)).toMatchObject({ exitCode: 3, error: expect.stringMatching(/no such agent/) });

  await stack.warden.start({ agentId: 'cli-bad', task: 'anything' });
  const badJson = await cli(['report', 'cli-bad'], '{not json');
  expect(badJson.exitCode).toBe(2);
  expect(badJson.stderr).toMatch(/not valid JSON/);
  const badTurn = await cli(['report', 'cli-bad'], '{"text": 5}');
  expect(badTurn.exitCode).toBe(2);
  expect(badTurn.stderr).toMatch(/text/);
  const noTask = await cli(['start', 'cli-none']);
  expect(noTask.exitCode).toBe(2);
  expect(noTask.stderr).toMatch(/--task/);
  const badId = await cli(['start', 'bad id!', '--task', 'x']);
  expect(badId.exitCode).toBe(2);
  expect(badId.stderr).toMatch(/agentId/);
  const lowThreshold = await cli(['start', 'cli-low', '--task', 'x', '--escalation-threshold', '2']);
  expect(lowThreshold.exitCode).toBe(2);
  expect(lowThreshold.stderr).toMatch(/escalationThreshold/);
  const unknownVerb = await cli(['frobnicate']);
  expect(unknownVerb.exitCode).toBe(2);
  const twice = await cli(['start', 'cli-bad', '--task', 'again']);
  expect(twice.exitCode).toBe(1);
  expect(twice.stderr).toMatch(/already running/);
});

/**
 * The agent's lifecycle as the Temporal platform sees it, on a real dev server with the real
 * `temporal` CLI: a cancellation request is a stop (drain, then end, visibility true), a signal
 * name the workflow does not define is refused visibly, and a workflow id that does not match the
 * agent id is refused at start. Starting many agents leaves no connections open on the server.
 */
import { readdirSync } from 'node:fs';
import { expect, test } from 'vitest';
import { finalStatus, productiveTurn, waitForStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { clientFor, useStack } from '../helpers/stack.js';
import { temporalCli } from '../helpers/temporal-cli.js';

const stack = useStack();

test('temporal workflow cancel: the agent drains, ends done, and says so in status and WardenState', async () => {
  await stack.warden.start({ agentId: 'cancelme', task: 'Refactor the parser.', supervisor: { idleAfterMs: 0 } });
  await stack.warden.reportTurn('cancelme', productiveTurn(1));
  const cancel = await temporalCli(stack.server.address, ['workflow', 'cancel', '--workflow-id', 'agent-cancelme']);
  expect(cancel.exitCode, cancel.all).toBe(0);
  // The stop drains: the agent hears it in its next reply, and its final turn ends it.
  const draining = await waitForStatus(stack.warden, 'cancelme', (s) => s.state === 'cancelling', 'cancelling');
  expect(draining.stateReason).toBe('cancellation requested through Temporal');
  const reply = await stack.warden.reportTurn('cancelme', productiveTurn(2));
  expect(reply).toMatchObject({ stop: true, state: 'cancelling' });
  const handle = stack.warden.handle('cancelme');
  await expect(handle.result()).rejects.toThrow(/cancel/i);
  const d = await handle.describe();
  expect(d.status.name).toBe('CANCELLED');
  expect(d.searchAttributes.WardenState).toEqual(['done']);
  const final = (await handle.query('status')) as { state: string; stateReason: string; turns: number };
  expect(final).toMatchObject({ state: 'done', stateReason: 'stopped: cancellation requested through Temporal', turns: 2 });
  await recordHistory(stack.server.address, handle, 'lifecycle-cancelled');
});

test('a misnamed signal is refused visibly, and the agent carries on', async () => {
  await stack.warden.start({ agentId: 'typo', task: 'Fix the login bug.', supervisor: { idleAfterMs: 0 } });
  await stack.warden.reportTurn('typo', productiveTurn(1));
  const sent = await temporalCli(stack.server.address, ['workflow', 'signal', '--workflow-id', 'agent-typo', '--name', 'resmue']);
  expect(sent.exitCode, sent.all).toBe(0);
  const s = await waitForStatus(stack.warden, 'typo', (x) => x.invalidSignals === 1, 'unknown signal refused');
  expect(s.refused.at(-1)).toMatchObject({ what: 'resmue', reason: expect.stringMatching(/^unknown signal "resmue"/) });
  expect((await stack.warden.reportTurn('typo', productiveTurn(2))).accepted).toBe(true);
  await stack.warden.signal('typo', 'abort', {});
});

test('a workflow id that does not match the agent id fails at start with the reason', async () => {
  const handle = await stack.warden.client.workflow.start('agentWorkflow', {
    taskQueue: 'warden',
    workflowId: 'agent-a',
    args: [{ agentId: 'b', task: 'x', searchAttributes: false }],
  });
  await expect(handle.result()).rejects.toMatchObject({ cause: { message: 'workflow id agent-a does not match agentId b: an agent runs as agent-<agentId>' } });
});

test('an aborted agent is a failed workflow (the Failures filter finds it); its final status rides along', async () => {
  await stack.warden.start({ agentId: 'aborted', task: 'Fix the login bug.', supervisor: { idleAfterMs: 0 } });
  await stack.warden.reportTurn('aborted', productiveTurn(1));
  await stack.warden.signal('aborted', 'abort', { reason: 'wrong repository' });
  const handle = stack.warden.handle('aborted');
  await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'AgentAborted', message: 'agent aborted aborted: wrong repository' } });
  expect(await finalStatus(handle)).toMatchObject({ state: 'failed', stateReason: 'aborted: wrong repository', turns: 1 });
  const failed = await temporalCli(stack.server.address, ['workflow', 'list', '--query', 'ExecutionStatus="Failed"', '-o', 'json']);
  expect(failed.stdout).toContain('agent-aborted');
  await recordHistory(stack.server.address, handle, 'lifecycle-aborted');
});

test('starting many agents keeps no connections open on the dev server (the client asks for search attributes once)', async () => {
  // The dev server keeps one connection to itself open per ListSearchAttributes call; a client that
  // asked at every start took two file descriptors of the server per agent, and 10,000 starts ran
  // it out of them. A task queue no worker polls: only the starts are measured.
  const pid = stack.server.process.pid!;
  const openFiles = () => readdirSync(`/proc/${pid}/fd`).length;
  const client = await clientFor(stack.server, 'nobody-polls');
  try {
    await client.start({ agentId: 'fd-first', task: 'x' });
    const before = openFiles();
    for (let i = 0; i < 60; i += 20) {
      const started = await Promise.all(Array.from({ length: 20 }, (_, j) => client.start({ agentId: `fd-${i + j}`, task: 'x' })));
      for (const s of started) expect(s.searchAttributes).toBe(true);
    }
    expect(openFiles() - before).toBeLessThan(20);
  } finally {
    await client.close();
  }
});

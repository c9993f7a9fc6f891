/**
 * Issue 8, defect class 2 (and the binary/plain defect of class 6): payloads the worker cannot
 * decode, sent the way any gRPC caller or `temporal workflow signal --input-meta` can, against a real
 * dev server. Before warden's payload converter, each of these failed every workflow task from then
 * on (the agent wedged: no status, no turns) or, for binary/plain, counted as `{}` and paused the
 * agent. Now: the signal is recorded as a refusal and ignored, the agent answers and takes the next
 * turn; an undecodable start fails at once with a reason and frees the agent id.
 */
import { randomUUID } from 'node:crypto';
import { expect, test } from 'vitest';
import { waitForStatus } from '../helpers/agents.js';
import { eventually, useStack } from '../helpers/stack.js';

const stack = useStack();
const enc = (s: string) => new TextEncoder().encode(s);

async function rawSignal(agentId: string, signalName: string, payload: { encoding: string; data: Uint8Array }) {
  await stack.warden.client.workflowService.signalWorkflowExecution({
    namespace: stack.warden.namespace,
    workflowExecution: { workflowId: `agent-${agentId}` },
    signalName,
    input: { payloads: [{ metadata: { encoding: enc(payload.encoding) }, data: payload.data }] },
    identity: 'hardening-test',
    requestId: randomUUID(),
  });
}

/** The agent still works: status answers (within 10 s, not a wedged workflow task) and a valid turn is accepted. */
async function expectHealthy(agentId: string, turnId: string) {
  const status = await waitForStatus(stack.warden, agentId, (s) => s.refused.length > 0, 'the refusal recorded', 10_000);
  const reply = await stack.warden.reportTurn(agentId, { id: turnId, text: `turn ${turnId}: edited a file and ran its tests` });
  expect(reply.accepted).toBe(true);
  return status;
}

const BAD_SIGNALS: [string, string, { encoding: string; data: Uint8Array }][] = [
  ['an unknown encoding', 'pause', { encoding: 'foo/bar', data: enc('{}') }],
  ['json/plain bytes that are not JSON', 'steer', { encoding: 'json/plain', data: enc('{"text": ') }],
  ['json/plain bytes that are not UTF-8', 'abort', { encoding: 'json/plain', data: new Uint8Array([0xff, 0xfe, 0xfd]) }],
  ['binary/plain where an object is expected (was {}: paused the agent)', 'pause', { encoding: 'binary/plain', data: new Uint8Array([1, 2, 3]) }],
  ['binary/plain on abort (was {}: aborted the agent)', 'abort', { encoding: 'binary/plain', data: new Uint8Array([0]) }],
];

test.each(BAD_SIGNALS)('a signal with %s is recorded and ignored; the agent stays healthy', async (what, name, payload) => {
  const agentId = `undecodable-${name}-${BAD_SIGNALS.findIndex((c) => c[0] === what)}`;
  await stack.warden.start({ agentId, task: 'Fix the flaky login test.' });
  await stack.warden.reportTurn(agentId, { id: 'before', text: 'reading the test file' });
  await rawSignal(agentId, name, payload);
  const s = await expectHealthy(agentId, 'after');
  expect(s.paused).toBe(false);
  expect(s.state).toBe('running');
  expect(s.invalidSignals).toBe(1);
  expect(s.refused[0]!.what).toBe(name);
  const after = await stack.warden.status(agentId);
  expect(after.turns).toBe(2);
});

test('a start whose AgentSpec cannot be decoded fails at once with a reason; the agent id is free again', async () => {
  const agentId = 'undecodable-start';
  const workflowId = `agent-${agentId}`;
  await stack.warden.client.workflowService.startWorkflowExecution({
    namespace: stack.warden.namespace,
    workflowId,
    workflowType: { name: 'agentWorkflow' },
    taskQueue: { name: stack.warden.taskQueue },
    input: { payloads: [{ metadata: { encoding: enc('json/plain') }, data: enc('{"agentId": "undecodable-start", "task": ') }] },
    identity: 'hardening-test',
    requestId: randomUUID(),
  });
  const handle = stack.warden.client.workflow.getHandle(workflowId);
  // Before: the workflow stayed RUNNING with a workflow task failing forever (and the id taken).
  const d = await eventually(
    async () => {
      const desc = await handle.describe();
      return desc.status.name !== 'RUNNING' ? desc : null;
    },
    { timeoutMs: 15_000, what: 'the undecodable start to end' },
  );
  expect(d.status.name).toBe('FAILED');
  const failure = await handle.result().catch((err: unknown) => err as { cause?: { message?: string } });
  expect(String((failure as { cause?: { message?: string } }).cause?.message)).toMatch(/invalid AgentSpec/);
  const again = await stack.warden.start({ agentId, task: 'Now with a decodable spec.' });
  expect(again.workflowId).toBe(workflowId);
  expect((await stack.warden.status(agentId)).state).toBeDefined();
});

// Wired in the core: the signal handlers check isUndecodable(raw) first and record undecodableReason(raw)
// as the refusal (today the schema refuses the sentinel as "expected object, received string").
test('the refusal of an undecodable signal names the decoding problem', async () => {
  const agentId = 'undecodable-reason';
  await stack.warden.start({ agentId, task: 'Fix the flaky login test.' });
  await rawSignal(agentId, 'steer', { encoding: 'foo/bar', data: enc('{}') });
  const s = await waitForStatus(stack.warden, agentId, (x) => x.refused.length > 0, 'the refusal recorded', 10_000);
  expect(s.refused[0]!.reason).toMatch(/foo\/bar payload \(2 bytes\) could not be decoded: Unknown encoding: foo\/bar/);
});

// Wired in the core: agentWorkflow checks isUndecodable(specInput) before parsing and fails with its reason.
test('an undecodable start fails naming the decoding problem', async () => {
  const workflowId = 'agent-undecodable-start-reason';
  await stack.warden.client.workflowService.startWorkflowExecution({
    namespace: stack.warden.namespace,
    workflowId,
    workflowType: { name: 'agentWorkflow' },
    taskQueue: { name: stack.warden.taskQueue },
    input: { payloads: [{ metadata: { encoding: enc('foo/bar') }, data: enc('{}') }] },
    identity: 'hardening-test',
    requestId: randomUUID(),
  });
  const failure = await stack.warden.client.workflow
    .getHandle(workflowId)
    .result()
    .catch((err: unknown) => err as { cause?: { message?: string } });
  expect(String((failure as { cause?: { message?: string } }).cause?.message)).toMatch(/Unknown encoding: foo\/bar/);
});

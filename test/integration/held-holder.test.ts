/**
 * Who may hold an agent, and for how long, on a real dev server (src/domain/agent/held.ts): a
 * `block` sent the way the agent's own shell could send it (the real `temporal` CLI, no token) is
 * refused and recorded, and the agent goes on running; only the holder's token (AgentSpec
 * safety.holdToken) holds it. A hold past safety.maxHeldMs ends with the agent awaiting a human and
 * a webhook received by a real HTTP listener. The spiral turns a held external agent reports are
 * still evaluated on the ladder.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { reportWithEvaluations, spiralTurn, waitForStatus } from '../helpers/agents.js';
import { useStack } from '../helpers/stack.js';
import { temporalCli } from '../helpers/temporal-cli.js';
import { startWebhookListener, type WebhookListener } from '../helpers/webhook.js';

const TOKEN = 'mesh-holder-token-5f1d2c9a7b';
const stack = useStack();
let hook: WebhookListener;

beforeAll(async () => {
  hook = await startWebhookListener();
});
afterAll(async () => {
  await hook?.close();
});

test('a block from the agent’s own shell (no token) is refused and recorded: the agent keeps running', async () => {
  const agentId = 'self-blocker';
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.' });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Reading the build output.' });
  // What a hooked agent's shell can do: TEMPORAL_ADDRESS is set for its hooks, the dev server asks for no credentials.
  const out = await temporalCli(stack.server.address, [
    'workflow',
    'signal',
    '--workflow-id',
    `agent-${agentId}`,
    '--name',
    'block',
    '--input',
    JSON.stringify({ reason: 'leave me alone' }),
  ]);
  expect(out.exitCode, out.all).toBe(0);
  const s = await waitForStatus(stack.warden, agentId, (st) => st.refused.some((r) => r.what === 'block'), 'the block refused');
  expect(s.state).toBe('running');
  expect(s.refused.find((r) => r.what === 'block')!.reason).toBe(
    'block refused: no holder: this agent was started without safety.holdToken, so no block holds it',
  );
  expect(s.heldUntil).toBeUndefined();
  // Its next turn is judged as before: it is not held.
  const reply = await stack.warden.reportTurn(agentId, { id: 't2', text: 'Fixing the import.' });
  expect(reply).toMatchObject({ accepted: true, state: 'running' });
});

test('with a holder: a wrong token is refused without repeating it; the holder’s token holds it until its end', async () => {
  const agentId = 'held-by-token';
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.', safety: { holdToken: TOKEN } });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Reading the build output.' });
  await stack.warden.signal(agentId, 'block', { reason: 'self-hold', token: 'guessed-token-000000000' });
  let s = await waitForStatus(stack.warden, agentId, (st) => st.refused.some((r) => r.what === 'block'), 'the wrong token refused');
  expect(s.state).toBe('running');
  expect(s.refused.at(-1)!.reason).toBe("block refused: token: not this agent's holder's token");
  expect(JSON.stringify(s)).not.toContain(TOKEN);
  expect(JSON.stringify(s)).not.toContain('guessed-token');

  await stack.warden.signal(agentId, 'block', { reason: 'waiting for its rebase turn', token: TOKEN });
  s = await waitForStatus(stack.warden, agentId, (st) => st.state === 'blocked', 'held');
  expect(s.stateReason).toBe('waiting for its rebase turn');
  expect(Date.parse(s.heldUntil!) - Date.now()).toBeGreaterThan(3 * 3_600_000); // the 4 h default
  await stack.warden.signal(agentId, 'block', { phase: 'end', reason: 'let myself go' });
  await stack.warden.signal(agentId, 'block', { phase: 'end', reason: 'the rebase turn came', token: TOKEN });
  s = await waitForStatus(stack.warden, agentId, (st) => st.state === 'running', 'released');
  expect(s.stateReason).toBe('its wait ended: the rebase turn came');
  expect(s.refused.at(-1)!.reason).toBe("end of a block refused: a block needs its holder's token (token): none was given");
});

test('a hold past safety.maxHeldMs ends: the agent awaits a human and the webhook is received', async () => {
  const agentId = 'held-too-long';
  await stack.warden.start({
    agentId,
    task: 'Make `npm run build` pass.',
    safety: { holdToken: TOKEN, maxHeldMs: 2_000 },
    notify: { webhooks: [{ url: hook.url }] },
  });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Reading the build output.' });
  await stack.warden.signal(agentId, 'block', { reason: 'waiting for a holder that never comes back', token: TOKEN });
  await waitForStatus(stack.warden, agentId, (st) => st.state === 'blocked', 'held');
  const s = await waitForStatus(stack.warden, agentId, (st) => st.state === 'awaiting-input', 'the hold ended by its bound', 30_000);
  expect(s).toMatchObject({ paused: true, pauseReason: expect.stringMatching(/^held for \d+ s, past safety\.maxHeldMs \(2 s\): waiting for a holder/) });
  expect(s.transitions.at(-1)).toMatchObject({ from: 'blocked', to: 'awaiting-input', event: 'escalate' });
  const delivery = await waitFor(() => hook.accepted().find((d) => (d.json as { agentId?: string }).agentId === agentId));
  expect(delivery.json).toMatchObject({ event: 'escalation', agentId, reason: s.pauseReason });
  // A human decides.
  await stack.warden.signal(agentId, 'resume', { note: 'the holder is gone' });
  await waitForStatus(stack.warden, agentId, (st) => st.state === 'running', 'resumed');
});

test('the spiral turns a held external agent reports are still evaluated on the ladder', async () => {
  const agentId = 'held-spiral';
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.', safety: { holdToken: TOKEN } });
  await stack.warden.reportTurn(agentId, { id: 't0', text: 'Starting.' });
  await stack.warden.signal(agentId, 'block', { reason: 'held by its operator', token: TOKEN });
  await waitForStatus(stack.warden, agentId, (st) => st.state === 'blocked', 'held');
  await reportWithEvaluations(
    stack.warden,
    agentId,
    Array.from({ length: 10 }, (_, i) => spiralTurn(i + 1)),
  );
  const s = await stack.warden.status(agentId);
  expect(s.state).toBe('blocked');
  expect(s.evaluations.total).toBe(2);
  expect(s.evaluations.flagged).toBeGreaterThanOrEqual(1);
  expect(s.escalationStep).toBeGreaterThanOrEqual(1);
  expect(s.lastVerdict).toMatchObject({ pattern: 'SPIRALING' });
  // Its whispers reach it with its reports, held or not.
  expect(s.whispersDelivered + s.pendingWhispers).toBeGreaterThanOrEqual(1);
});

async function waitFor<T>(fn: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting for the webhook');
    await new Promise((r) => setTimeout(r, 100));
  }
}

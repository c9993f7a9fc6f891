/**
 * A hold is durable (src/domain/agent/held.ts): an external agent held with its holder's token,
 * the worker SIGKILLed while it is held, a `block` end without the token and a tokenless `block`
 * sent while no worker runs. A new worker shows the same hold with the same deadline, refuses both
 * signals, and ends the hold at that deadline: the agent awaits a human and the webhook arrives.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { waitForStatus } from '../helpers/agents.js';
import { eventually, useWorkerProcesses } from '../helpers/stack.js';
import { startWebhookListener, type WebhookListener } from '../helpers/webhook.js';

const TOKEN = 'holder-token-crash-3e8b1d0c';
const stack = useWorkerProcesses();
let hook: WebhookListener;

beforeAll(async () => {
  hook = await startWebhookListener();
});
afterAll(async () => {
  await hook?.close();
});

test('the hold, its deadline and the token check survive a worker SIGKILL', async () => {
  const agentId = 'held-crashy';
  let worker = stack.spawnWorker();
  await stack.warden.start({
    agentId,
    task: 'Make `npm run build` pass.',
    safety: { holdToken: TOKEN, maxHeldMs: 20_000 },
    notify: { webhooks: [{ url: hook.url }] },
  });
  await stack.warden.reportTurn(agentId, { id: 't1', text: 'Reading the build output.' });
  await stack.warden.signal(agentId, 'block', { reason: 'waiting for its rebase turn', token: TOKEN });
  const held = await waitForStatus(stack.warden, agentId, (s) => s.state === 'blocked', 'held', 60_000);
  expect(held.heldUntil).toBeDefined();

  await stack.kill(worker);
  // While no worker runs: the agent tries to let itself go, and to hold itself again without the token.
  await stack.warden.signal(agentId, 'block', { phase: 'end', reason: 'let myself go', token: 'not-the-holders-token-0000' });
  await stack.warden.signal(agentId, 'block', { reason: 'self-hold' });

  worker = stack.spawnWorker();
  const after = await eventually(
    async () => {
      const s = await stack.warden.status(agentId);
      return s.refused.filter((r) => r.what === 'block').length === 2 ? s : null;
    },
    { timeoutMs: 60_000, what: 'the new worker refused both blocks' },
  );
  expect(after).toMatchObject({ state: 'blocked', stateReason: 'waiting for its rebase turn', heldUntil: held.heldUntil, turns: 1 });
  expect(after.refused.filter((r) => r.what === 'block').map((r) => r.reason)).toEqual([
    "end of a block refused: token: not this agent's holder's token",
    "block refused: a block needs its holder's token (token): none was given",
  ]);

  // The deadline set before the crash ends the hold.
  const ended = await waitForStatus(stack.warden, agentId, (s) => s.state === 'awaiting-input', 'the hold ended by its bound', 60_000);
  const at = ended.transitions.at(-1)!;
  expect(at).toMatchObject({ from: 'blocked', to: 'awaiting-input', event: 'escalate' });
  expect(Date.parse(at.at)).toBeGreaterThanOrEqual(Date.parse(held.heldUntil!));
  const delivery = await eventually(async () => hook.accepted().find((d) => (d.json as { agentId?: string }).agentId === agentId), {
    timeoutMs: 30_000,
    what: 'the webhook',
  });
  expect(delivery.json).toMatchObject({ event: 'escalation', reason: ended.pauseReason });
  await stack.kill(worker);
});

/**
 * The ladder end to end on a real dev server: a spiraling agent (15 identical failing turns,
 * evaluation every 5) gets a whisper, a stronger whisper, then an escalation — the webhook is
 * received (signed, retried after a 503) by a real HTTP listener and the agent is paused — and
 * `temporal workflow signal --name resume` from the real CLI resets it.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { productiveTurn, reportWithEvaluations, spiralTurn, waitForEvaluations, finalStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { eventually, useStack } from '../helpers/stack.js';
import { temporalCli } from '../helpers/temporal-cli.js';
import { startWebhookListener, verifySignature, type WebhookListener } from '../helpers/webhook.js';

const SECRET = 'escalation-test-secret';
const stack = useStack();
let hook: WebhookListener;

beforeAll(async () => {
  process.env.WARDEN_TEST_WEBHOOK_SECRET = SECRET; // read by the (in-process) worker's webhook activity
  process.env.WARDEN_SECRET_ENV_ALLOW = 'WARDEN_TEST_WEBHOOK_SECRET'; // the worker's operator allows it …
  process.env.WARDEN_ENDPOINT_ALLOW = 'http://127.0.0.1:*'; // … to be sent to the local listener only
  hook = await startWebhookListener({ failFirst: 1 });
});
afterAll(async () => {
  await hook?.close();
});

test('whisper, stronger whisper, escalation with webhook and pause; resume via the temporal CLI', async () => {
  const agentId = 'spiral';
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.', notify: { webhooks: [{ url: hook.url, secretEnv: 'WARDEN_TEST_WEBHOOK_SECRET' }] } });
  const turns = Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1));

  // Turns 1-5: the first evaluation flags SPIRALING → step 1, one CORRECTION whisper queued.
  await reportWithEvaluations(stack.warden, agentId, turns.slice(0, 5));
  let s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ state: 'running', escalationStep: 1, paused: false, pendingWhispers: 1 });
  expect(s.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING' });

  // Turn 6 receives it; turns 6-10 → step 2, a stronger whisper.
  const r2 = await reportWithEvaluations(stack.warden, agentId, turns.slice(5, 10), 5, 1);
  expect(r2[0]!.whispers.map((w) => w.type)).toEqual(['CORRECTION']);
  const first = r2[0]!.whispers[0]!.text;
  s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ escalationStep: 2, paused: false, pendingWhispers: 1, whispersDelivered: 1 });

  // Turns 11-15 → step 3: ESCALATION whisper, webhook, paused awaiting a human.
  const r3 = await reportWithEvaluations(stack.warden, agentId, turns.slice(10, 15), 5, 2);
  expect(r3[0]!.whispers).toHaveLength(1);
  const second = r3[0]!.whispers[0]!;
  expect(second.type).toBe('CORRECTION');
  expect(second.text).not.toBe(first);
  expect(second.text).toMatch(/already told|Warning 2/);
  s = await stack.warden.status(agentId);
  expect(s).toMatchObject({ state: 'awaiting-input', paused: true, escalationStep: 3, escalations: 1, pendingWhispers: 1 });
  expect(s.pauseReason).toMatch(/escalated: SPIRALING/);
  const pending = await stack.warden.pendingWhispers(agentId);
  expect(pending.map((w) => w.type)).toEqual(['ESCALATION']);
  // The Web UI's "current details" (the built-in metadata query) and the static summary follow along.
  const meta = (await stack.warden.handle(agentId).query('__temporal_workflow_metadata')) as {
    currentDetails: string;
    definition: { signalDefinitions: { name: string }[] };
  };
  expect(meta.currentDetails).toMatch(/\*\*state\*\* awaiting-input/);
  expect(meta.currentDetails).toMatch(/\*\*escalation step\*\* 3\/3/);
  expect(meta.currentDetails).toMatch(/\*\*last verdict\*\* CORRECTION SPIRALING/);
  expect(meta.definition.signalDefinitions.map((d) => d.name).sort()).toEqual([
    'abort',
    'admit',
    'block',
    'childSpend',
    'compaction',
    'dismiss',
    'heartbeat',
    'humanWait',
    'interrupt',
    'pause',
    'resume',
    'session',
    'steer',
    'stop',
    'subagent',
  ]);
  const described = await temporalCli(stack.server.address, ['workflow', 'describe', '--workflow-id', 'agent-spiral', '--output', 'json']);
  expect(described.stdout).toContain('Supervising spiral: Make `npm run build` pass.');

  // The webhook: first delivery answered 503, retried with backoff, then accepted — signed.
  const delivered = await eventually(async () => (hook.accepted().length > 0 ? hook.accepted() : null), { what: 'webhook delivery' });
  expect(hook.deliveries.length).toBeGreaterThanOrEqual(2);
  expect(hook.deliveries[0]!.status).toBe(503);
  expect(delivered).toHaveLength(1);
  const d = delivered[0]!;
  expect(d.headers['x-warden-event']).toBe('escalation');
  expect(verifySignature(d.body, d.headers['x-warden-signature'], SECRET)).toBe(true);
  expect(verifySignature(d.body, d.headers['x-warden-signature'], 'wrong-secret')).toBe(false);
  expect(d.json).toMatchObject({ event: 'escalation', agentId, workflowId: 'agent-spiral', step: 3, verdict: { kind: 'CORRECTION', pattern: 'SPIRALING' } });
  expect(d.body).not.toContain(SECRET);

  // While paused: the escalation whisper is delivered, reports answer paused, no evaluation runs.
  const whilePaused = [];
  for (let i = 16; i <= 21; i++) whilePaused.push(await stack.warden.reportTurn(agentId, spiralTurn(i)));
  expect(whilePaused[0]!.paused).toBe(true);
  expect(whilePaused[0]!.whispers.map((w) => w.type)).toEqual(['ESCALATION']);
  expect(whilePaused.slice(1).every((r) => r.whispers.length === 0 && r.paused)).toBe(true);
  await new Promise((r) => setTimeout(r, 1000));
  s = await stack.warden.status(agentId);
  expect(s.evaluations.total).toBe(3);
  expect(s.turns).toBe(21);

  // A human resumes with the real temporal CLI, bare signal, no payload.
  const cli = await temporalCli(stack.server.address, ['workflow', 'signal', '--workflow-id', 'agent-spiral', '--name', 'resume']);
  expect(cli.exitCode, cli.all).toBe(0);
  s = await eventually(async () => {
    const st = await stack.warden.status(agentId);
    return st.state === 'running' ? st : null;
  });
  expect(s).toMatchObject({ paused: false, escalationStep: 0, escalations: 1, pauseReason: null });

  // The ladder starts over: productive turns evaluate OK, nothing is whispered.
  const after = await reportWithEvaluations(
    stack.warden,
    agentId,
    Array.from({ length: 5 }, (_, i) => productiveTurn(i)),
    5,
    3,
  );
  expect(after.every((r) => r.whispers.length === 0 && !r.paused)).toBe(true);
  s = await waitForEvaluations(stack.warden, agentId, 4);
  expect(s.escalationStep).toBe(0);

  // Visibility: the search attributes follow the state.
  await eventually(
    async () => {
      const rows = await stack.warden.list({
        query: `WardenState = 'running' AND WardenEscalationStep = 0 AND WardenPaused = false AND WardenCostUsd >= 0.2 AND WardenTokens >= 22000`,
      });
      return rows.some((r) => r.agentId === agentId);
    },
    { what: 'search attributes updated' },
  );

  await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
  const handle = stack.warden.handle(agentId);
  const final = await finalStatus(handle);
  expect(final.state).toBe('failed');
  expect(final.stateReason).toMatch(/aborted: test over/);
  await recordHistory(stack.server.address, handle, 'escalation-resume-abort');
});

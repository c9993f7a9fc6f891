/**
 * Notifications never hold a finished workflow open (issue 8, item 5), on a real dev server: a
 * parent raises an alert through `startNotifyChild` and completes at once, while its abandoned
 * `notifyWorkflow` child keeps retrying a failing webhook (real HTTP listener, 503 three times)
 * and delivers; an IRC alert with no bot running waits on the warden-irc queue, the parent long
 * done.
 */
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createActivities } from '../../activities/index.js';
import { installPinoRuntime } from '../../workers/main.js';
import type { NotificationEvent } from '../../src/domain/contract/activity-types.js';
import { IRC_TASK_QUEUE, type DeliveryReport, type NotifyWorkflowInput } from '../../src/domain/notify/notify.js';
import { clientFor, eventually, quietLog, startTestServer, type TestServer } from '../helpers/stack.js';
import { startWebhookListener, verifySignature, type WebhookListener } from '../helpers/webhook.js';
import type { WardenClient } from '../../src/client/index.js';

const QUEUE = 'notify-test';
let server: TestServer;
let warden: WardenClient;
let worker: Worker;
let running: Promise<void>;
let hook: WebhookListener;

const event: NotificationEvent = {
  event: 'budget-exhausted',
  agentId: 'spender',
  workflowId: 'agent-spender',
  runId: '01234567-89ab-cdef-0123-456789abcdef',
  task: 'Refactor the parser.',
  step: 0,
  reason: 'costUsd budget 1 reached (1.02)',
  at: '2026-11-23T09:00:00.000Z',
};

beforeAll(async () => {
  installPinoRuntime(quietLog);
  server = await startTestServer();
  warden = await clientFor(server);
  worker = await Worker.create({
    connection: await NativeConnection.connect({ address: server.address }),
    namespace: server.namespace,
    taskQueue: QUEUE,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../fixtures/notify-parent.ts', import.meta.url)),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never,
    }),
    activities: createActivities(quietLog),
  });
  running = worker.run();
  hook = await startWebhookListener({ failFirst: 3, failStatus: 503 });
});
afterAll(async () => {
  await hook?.close();
  worker?.shutdown();
  await running;
  await warden?.close();
  await server?.stop();
});

test('the parent completes at once; its abandoned notify child retries the webhook and delivers', { timeout: 300_000 }, async () => {
  const input: NotifyWorkflowInput = { event, webhooks: [{ url: hook.url }] };
  const parent = await warden.client.workflow.start('alertingParent', { taskQueue: QUEUE, workflowId: 'parent-1', args: [input] });
  const childId = (await parent.result()) as string;
  expect(childId).toBe('notify-spender-' + (await parent.describe()).runId.slice(0, 8) + '-1');
  expect((await parent.describe()).status.name).toBe('COMPLETED');
  // The child is still at it: the first delivery was refused with a 503 and is being retried.
  const child = warden.client.workflow.getHandle(childId);
  expect((await child.describe()).status.name).toBe('RUNNING');

  const report = (await child.result()) as DeliveryReport;
  expect(report).toEqual({
    event: 'budget-exhausted',
    agentId: 'spender',
    ok: true,
    deliveries: [{ channel: 'webhook', url: hook.url, ok: true, status: 200 }],
  });
  expect(hook.deliveries.map((d) => d.status)).toEqual([503, 503, 503, 200]);
  expect(hook.accepted()[0]!.json).toMatchObject({ event: 'budget-exhausted', agentId: 'spender', reason: 'costUsd budget 1 reached (1.02)' });
});

test('an IRC alert with no bot running waits on the warden-irc queue; the parent is long done', { timeout: 120_000 }, async () => {
  const input: NotifyWorkflowInput = { event: { ...event, agentId: 'quiet' }, webhooks: [], irc: { channel: '#alerts' } };
  const parent = await warden.client.workflow.start('alertingParent', { taskQueue: QUEUE, workflowId: 'parent-2', args: [input] });
  const childId = (await parent.result()) as string;
  const child = warden.client.workflow.getHandle(childId);
  const pending = await eventually(
    async () => {
      const d = await child.describe();
      const acts = d.raw.pendingActivities ?? [];
      return acts.length === 1 ? acts[0] : null;
    },
    { what: 'the postIrc activity pending' },
  );
  expect(pending.activityType?.name).toBe('postIrc');
  expect((await parent.describe()).status.name).toBe('COMPLETED');
  expect((await child.describe()).status.name).toBe('RUNNING');
  // Nobody polls warden-irc here: the task waits, unstarted (no attempt used up).
  const q = await warden.client.workflowService.describeTaskQueue({ namespace: server.namespace, taskQueue: { name: IRC_TASK_QUEUE }, taskQueueType: 2 });
  expect(q.pollers ?? []).toEqual([]);
  expect(pending.attempt).toBe(1);
  await child.terminate('test over');
});

test('an invalid input fails the notify workflow with the field named', { timeout: 60_000 }, async () => {
  const h = await warden.client.workflow.start('notifyWorkflow', {
    taskQueue: QUEUE,
    workflowId: 'notify-bad',
    args: [{ event: { ...event, event: 'party' }, webhooks: [], irc: { channel: 'no spaces allowed' } }],
  });
  await expect(h.result()).rejects.toThrow();
  const err = await h.result().catch((e: { cause?: { message?: string } }) => e.cause?.message ?? '');
  expect(err).toMatch(/invalid notify input: event\.event: .*; irc\.channel: an IRC channel/);
});

test('a webhook that answers 503 at random: every delivery of one alert carries the same Idempotency-Key and deliveryId; other alerts get others', {
  timeout: 300_000,
}, async () => {
  const secret = `dedupe-secret-${Math.random().toString(36).slice(2)}`;
  process.env.WARDEN_TEST_DEDUPE_SECRET = secret;
  process.env.WARDEN_SECRET_ENV_ALLOW = 'WARDEN_TEST_DEDUPE_SECRET';
  process.env.WARDEN_ENDPOINT_ALLOW = 'http://127.0.0.1:*/hooks/*';
  // The first two requests fail for sure (so retries happen), then half of them, at most 3 in a row per body.
  const flaky = await startWebhookListener({ failFirst: 2, failRate: 0.5, maxFailStreak: 3, failStatus: 503 });
  try {
    const agents = ['dedupe-a', 'dedupe-b', 'dedupe-c'];
    const handles = await Promise.all(
      agents.map((agentId, i) =>
        warden.client.workflow.start('notifyWorkflow', {
          taskQueue: QUEUE,
          workflowId: `notify-${agentId}-${i}`,
          args: [
            {
              event: { ...event, event: 'escalation', agentId, workflowId: `agent-${agentId}`, step: 3, reason: `escalated ${agentId}` },
              webhooks: [
                { url: flaky.url, secretEnv: 'WARDEN_TEST_DEDUPE_SECRET' },
                { url: flaky.url, format: 'slack' },
              ],
            } satisfies NotifyWorkflowInput,
          ],
        }),
      ),
    );
    const reports = (await Promise.all(handles.map((h) => h.result()))) as DeliveryReport[];
    expect(reports.every((r) => r.ok)).toBe(true);
    expect(flaky.deliveries.filter((d) => d.status === 503).length).toBeGreaterThanOrEqual(2);

    const keyOf = (d: (typeof flaky.deliveries)[number]) => d.headers['idempotency-key'];
    // Which alert a delivery belongs to: the agent named in the body (json) or its fallback text (slack).
    const alertOf = (d: (typeof flaky.deliveries)[number]) => agents.find((a) => d.body.includes(`escalated ${a}`))!;
    const keys = new Map<string, Set<unknown>>();
    for (const d of flaky.deliveries) {
      const a = alertOf(d);
      expect(a, d.body).toBeDefined();
      expect(typeof keyOf(d), JSON.stringify(d.headers)).toBe('string');
      if (!keys.has(a)) keys.set(a, new Set());
      keys.get(a)!.add(keyOf(d));
      const json = d.json as { deliveryId?: string; text?: string };
      if (json.text === undefined) {
        // json: the id in the body too, and the signature covers the body that carries it.
        expect(json.deliveryId).toBe(keyOf(d));
        expect(verifySignature(d.body, d.headers['x-warden-signature'], secret)).toBe(true);
      } else {
        expect(d.body).toContain(`delivery ${keyOf(d) as string}`);
      }
    }
    // One id per alert, on every attempt and every channel; three alerts, three ids.
    for (const a of agents) expect([...keys.get(a)!], a).toHaveLength(1);
    expect(new Set([...keys.values()].map((s) => [...s][0])).size).toBe(3);
    // Retries happened: some alert was delivered more than once to the same channel.
    const perBody = new Map<string, number>();
    for (const d of flaky.deliveries) perBody.set(d.body, (perBody.get(d.body) ?? 0) + 1);
    expect(Math.max(...perBody.values())).toBeGreaterThan(1);
  } finally {
    await flaky.close();
    delete process.env.WARDEN_TEST_DEDUPE_SECRET;
    delete process.env.WARDEN_SECRET_ENV_ALLOW;
    delete process.env.WARDEN_ENDPOINT_ALLOW;
  }
});

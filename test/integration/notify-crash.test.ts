/**
 * A worker SIGKILLed while a webhook POST is in flight: Temporal retries the delivery once the
 * attempt times out, from another worker process, and the receiver can tell it is the same
 * delivery — same `Idempotency-Key`, same `deliveryId` — and drop it if the first one got through.
 * All real: a dev server, worker processes (node dist/workers/main.js), an HTTP listener on 127.0.0.1.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { expect, test } from 'vitest';
import type { NotificationEvent } from '../../src/domain/contract/activity-types.js';
import type { DeliveryReport, NotifyWorkflowInput } from '../../src/domain/notify/notify.js';
import { eventually, useWorkerProcesses } from '../helpers/stack.js';

const stack = useWorkerProcesses();

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

test('a worker killed mid-POST: the retry carries the same Idempotency-Key and deliveryId', { timeout: 300_000 }, async () => {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  // The first request is read and never answered (the worker dies waiting); later ones get 200.
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      if (received.length === 1) held.push(res);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}/hooks/warden`;
  try {
    let worker = stack.spawnWorker();
    const event: NotificationEvent = {
      event: 'escalation',
      agentId: 'killed-mid-post',
      workflowId: 'agent-killed-mid-post',
      runId: '0193bbbb-0000-0000-0000-000000000000',
      task: 'Fix the parser.',
      step: 3,
      reason: 'escalated: SPIRALING',
      at: new Date().toISOString(),
    };
    const input: NotifyWorkflowInput = { event, webhooks: [{ url }] };
    const h = await stack.warden.client.workflow.start('notifyWorkflow', { taskQueue: 'warden', workflowId: 'notify-killed-mid-post-1', args: [input] });
    await eventually(async () => received.length >= 1, { timeoutMs: 120_000, what: 'the first POST' });
    await stack.kill(worker);
    worker = stack.spawnWorker();
    // The attempt times out (start-to-close 15 s) and the new worker sends it again.
    const report = (await h.result()) as DeliveryReport;
    expect(report).toMatchObject({ ok: true, deliveries: [{ channel: 'webhook', url, ok: true, status: 200 }] });
    expect(received).toHaveLength(2);
    const [first, second] = received as [Received, Received];
    expect(second.body).toBe(first.body);
    expect(typeof first.headers['idempotency-key']).toBe('string');
    expect(second.headers['idempotency-key']).toBe(first.headers['idempotency-key']);
    expect((JSON.parse(second.body) as { deliveryId: string }).deliveryId).toBe(first.headers['idempotency-key']);
    expect(first.headers['idempotency-key']).toBe('notify-killed-mid-post-1');
    await stack.kill(worker);
  } finally {
    for (const r of held) r.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(() => r(undefined)));
  }
});

/**
 * Issue 8, defect class 6 (a failed notification is invisible; its cause unnamed) and the webhook half
 * of class 4 (secrets owned by the operator): the notifyWebhook activity against real HTTP
 * listeners on 127.0.0.1. Before: a refused or unreachable webhook failed with `fetch failed` (no
 * cause) or `answered 503`, and any variable the spec named was read and used to sign.
 */
import { ApplicationFailure } from '@temporalio/common';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { makeNotifyWebhook } from '../../activities/notify.js';
import type { NotificationEvent } from '../../src/domain/contract/activity-types.js';
import { freePort } from '../../src/devserver/ports.js';
import { startWebhookListener, verifySignature, type WebhookListener } from '../helpers/webhook.js';

const SECRET = `webhook-secret-${Math.random().toString(36).slice(2)}`;
const logged: string[] = [];
const notify = makeNotifyWebhook(pino({ level: 'debug' }, { write: (s: string) => void logged.push(s) }));
const event: NotificationEvent = {
  event: 'escalation',
  agentId: 'notified',
  workflowId: 'agent-notified',
  runId: 'r1',
  task: 'Fix the parser.',
  step: 3,
  reason: 'spiraling after two whispers',
  at: new Date(0).toISOString(),
};

let failing: WebhookListener;
let ok: WebhookListener;
beforeAll(async () => {
  failing = await startWebhookListener({ failFirst: 100, failStatus: 503 });
  ok = await startWebhookListener();
  process.env.WARDEN_TEST_HOOK_SECRET = SECRET;
  process.env.WARDEN_TEST_UNLISTED_SECRET = SECRET;
});
afterAll(async () => {
  await failing?.close();
  await ok?.close();
  delete process.env.WARDEN_TEST_HOOK_SECRET;
  delete process.env.WARDEN_TEST_UNLISTED_SECRET;
});
beforeEach(() => {
  process.env.WARDEN_SECRET_ENV_ALLOW = 'WARDEN_TEST_HOOK_SECRET';
  process.env.WARDEN_ENDPOINT_ALLOW = 'http://127.0.0.1:*/hooks/*';
});

const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
};

test('an HTTP error names the status and the body, retryable for 5xx', async () => {
  const f = await failure(notify({ channel: { url: failing.url }, event }));
  expect(f.message).toBe(`webhook ${failing.url} answered HTTP 503: {"error":"try later"}`);
  expect(f.type).toBe('WebhookFailed');
  expect(f.nonRetryable).toBe(false);
  expect(f.details?.[0]).toEqual({ url: failing.url, status: 503, error: null });
});

test('a network error names its cause (ECONNREFUSED), not `fetch failed`', async () => {
  const url = `http://127.0.0.1:${await freePort()}/hooks/warden`;
  const f = await failure(notify({ channel: { url }, event }));
  expect(f.message).toMatch(new RegExp(`^webhook ${url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} unreachable: .*ECONNREFUSED`));
  expect(f.type).toBe('WebhookUnreachable');
  expect((f.details?.[0] as { error: string } | undefined)?.error).toMatch(/ECONNREFUSED/);
});

test('a webhook secretEnv the operator did not allow is refused, naming the variable; nothing is sent', async () => {
  const before = ok.deliveries.length;
  const f = await failure(notify({ channel: { url: ok.url, secretEnv: 'WARDEN_TEST_UNLISTED_SECRET' }, event }));
  expect(f.message).toMatch(/^webhook \(secretEnv\): environment variable WARDEN_TEST_UNLISTED_SECRET is not in the worker's WARDEN_SECRET_ENV_ALLOW/);
  expect(f.nonRetryable).toBe(true);
  expect(ok.deliveries.length).toBe(before);
  expect(logged.join('')).not.toContain(SECRET);
});

test('an allowed secret is not sent to an endpoint the operator did not allow', async () => {
  process.env.WARDEN_ENDPOINT_ALLOW = 'https://hooks.example.com/*';
  const before = ok.deliveries.length;
  const f = await failure(notify({ channel: { url: ok.url, secretEnv: 'WARDEN_TEST_HOOK_SECRET' }, event }));
  expect(f.message).toContain(`${ok.url} is not in the worker's WARDEN_ENDPOINT_ALLOW (https://hooks.example.com/*)`);
  expect(ok.deliveries.length).toBe(before);
});

test('allowed name and endpoint: delivered and signed; the body carries no secret', async () => {
  const r = await notify({ channel: { url: ok.url, secretEnv: 'WARDEN_TEST_HOOK_SECRET' }, event });
  expect(r).toEqual({ status: 200 });
  const d = ok.deliveries.at(-1)!;
  expect(d.headers['x-warden-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
  expect(d.body).not.toContain(SECRET);
  expect(logged.join('')).not.toContain(SECRET);
});

/** Every string anywhere in a JSON value. */
function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(strings);
  if (v && typeof v === 'object') return Object.values(v).flatMap(strings);
  return [];
}

test('chat format: markup in agent text reaches no field in an interpretable form (Slack, Mattermost, Rocket.Chat rules)', async () => {
  // The `slack` format is the one body Slack, Mattermost and Rocket.Chat incoming webhooks all take:
  // Slack reads <!channel>, <@U…>, <url|label> in `text` and mrkdwn blocks; Mattermost and Rocket.Chat
  // render `text` as Markdown with @channel/@here/@all pings and [x](url) / ![i](url) links.
  const hostile = 'look <!channel> <@U123> <http://evil|click> @channel @here @all [x](http://evil) ![i](http://evil/i.png) done';
  const chat = await startWebhookListener();
  try {
    await notify({
      channel: { url: chat.url, format: 'slack' },
      event: { ...event, reason: hostile, task: hostile, whisper: hostile, verdict: { kind: 'CORRECTION', pattern: 'DRIFT', message: hostile } },
    });
    expect(chat.deliveries).toHaveLength(1);
    const body = chat.deliveries[0]!.json as { text: string; blocks: unknown[] };
    const fields = strings(body);
    // The agent's text is there (readable), in the fallback text and in the blocks…
    expect(body.text).toContain('look ');
    expect(fields.join('\n').split('look ').length - 1).toBe(5); // text, and reason, task, verdict, whisper in the section
    for (const f of fields) {
      // …but Slack finds no <…> control sequence,
      expect(f, f).not.toMatch(/<!channel>|<@U123>|<http:\/\/evil\|click>|[<>]/);
      // and Mattermost and Rocket.Chat find no mention and no link or image.
      expect(f, f).not.toMatch(/@(channel|here|all)\b/);
      expect(f, f).not.toMatch(/\[x\]\(http:\/\/evil\)|!\[i\]|\]\(/);
    }
  } finally {
    await chat.close();
  }
});

test('every delivery names its id: Idempotency-Key, and deliveryId in a json body; signed with it', async () => {
  const r = await notify({ channel: { url: ok.url, secretEnv: 'WARDEN_TEST_HOOK_SECRET' }, event });
  expect(r).toEqual({ status: 200 });
  const d = ok.deliveries.at(-1)!;
  const key = d.headers['idempotency-key'];
  expect(typeof key).toBe('string');
  expect((d.json as { deliveryId: string }).deliveryId).toBe(key);
  expect(verifySignature(d.body, d.headers['x-warden-signature'], SECRET)).toBe(true);
  // The same event (a retry) gets the same id.
  await notify({ channel: { url: ok.url }, event });
  expect(ok.deliveries.at(-1)!.headers['idempotency-key']).toBe(key);
});

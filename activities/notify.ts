/**
 * Escalation webhooks: a JSON POST with the event type, agent, verdict and step (or, with
 * `format: slack`, a Slack-compatible `{text, blocks}` body). When the channel
 * names a secret environment variable, the body is signed with HMAC-SHA256 in
 * `X-Warden-Signature: sha256=<hex>`. Every delivery carries an id, the same on each retry of it
 * (`Idempotency-Key` header; `deliveryId` in a json body, the context line of a slack one), so a
 * receiver can drop a repeat. Non-2xx answers throw, so Temporal retries with backoff
 * (the retry policy lives in the workflow); 4xx other than 408/429 are not retried. An escalation
 * carries action links when the worker's operator configured them (docs/links.md). Every failure
 * names its cause — `answered HTTP 503: …`, `unreachable: ECONNREFUSED …`, or the refused secret
 * name/URL (src/config/worker.ts) — in the message and as `details[0] = {url, status, error}`.
 */
import { createHmac } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import { secretFor } from '../src/config/worker.js';
import type { NotifyWebhookInput } from '../src/domain/contract/activity-types.js';
import { deliveryIdFor, eventDeliveryId } from '../src/domain/notify/notify.js';
import { webhookBodyWithLinks, type NotificationLinks } from '../src/domain/notify/notify-links.js';
import { incidentLinksForDelivery, linksForDelivery } from '../src/serve/issue.js';
import { incidentJsonBody, incidentSlackBody } from '../src/domain/notify/incident-text.js';
import type { NotificationEvent } from '../src/domain/contract/activity-types.js';
import { recordNotification } from '../src/telemetry/record.js';

export const SIGNATURE_HEADER = 'x-warden-signature';
export const EVENT_HEADER = 'x-warden-event';
/** The delivery id, the same on every retry of one delivery (also `deliveryId` in a json body). */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/**
 * The delivery id of the notification this activity sends: from the activity's own workflow and
 * activity id (stable across retries, see `deliveryIdFor`); from the event when called outside an
 * activity (tests, scripts).
 */
export function currentDeliveryId(event: NotificationEvent): string {
  let info: Context['info'] | undefined;
  try {
    info = Context.current().info;
  } catch {
    info = undefined;
  }
  const wf = info?.workflowExecution;
  if (!info || !wf || !info.workflowType) return eventDeliveryId(event);
  return deliveryIdFor({ workflowType: info.workflowType, workflowId: wf.workflowId, runId: wf.runId, activityId: info.activityId });
}

/** How long one delivery attempt may take. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** The network-level reason of a failed fetch: `ECONNREFUSED 127.0.0.1:9`, `timed out after 10000 ms`, … */
export function networkError(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${WEBHOOK_TIMEOUT_MS} ms`;
  const code = e?.cause?.code;
  const msg = e?.cause?.message ?? e?.message ?? String(err);
  return code && !msg.includes(code) ? `${code}: ${msg}` : msg;
}

/** An incident's webhook body for a channel's format (the signature covers exactly these bytes). */
function incidentWebhookBody(
  format: 'json' | 'slack' | undefined,
  event: NotificationEvent,
  deliveryId: string,
  links: Map<string, NotificationLinks | null>,
): string {
  return format === 'slack' ? JSON.stringify(incidentSlackBody(event, deliveryId, links)) : incidentJsonBody(event, deliveryId, links);
}

export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The webhook activity: one delivery attempt, recorded as telemetry (src/telemetry/record.ts; a no-op when off). */
export function makeNotifyWebhook(log: Logger) {
  const deliver = makeDeliver(log);
  return async function notifyWebhook(input: NotifyWebhookInput): Promise<{ status: number }> {
    const deliveryId = currentDeliveryId(input.event);
    const format = input.channel.format ?? 'json';
    try {
      const r = await deliver(input, deliveryId);
      recordNotification(input.event, { delivered: true, status: r.status, deliveryId, format });
      return r;
    } catch (err) {
      const status = (err as { details?: Array<{ status?: unknown }> }).details?.[0]?.status;
      recordNotification(input.event, { delivered: false, status: typeof status === 'number' ? status : null, deliveryId, format });
      throw err;
    }
  };
}

function makeDeliver(log: Logger) {
  return async function deliver({ channel, event }: NotifyWebhookInput, deliveryId: string): Promise<{ status: number }> {
    // `slack`: a Slack-compatible {text, blocks} body, readable in chat tools; `json` (default): the event as is.
    // Both carry the delivery id, which is also sent as Idempotency-Key: receivers deduplicate retries by it.
    // Action links (when the operator set WARDEN_LINK_SECRET and WARDEN_LINK_BASE_URL): issued here,
    // per delivery attempt, never in the workflow (their token ids are random).
    const warn = (reason: string) => log.warn({ agentId: event.agentId, reason }, 'notification sent without action links');
    // An incident names several agents, each with its own links (one alert for one cause).
    const body = event.incident
      ? incidentWebhookBody(channel.format, event, deliveryId, incidentLinksForDelivery(event, warn))
      : webhookBodyWithLinks(channel.format, event, deliveryId, linksForDelivery(event, warn));
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'warden',
      [EVENT_HEADER]: event.event,
      [IDEMPOTENCY_HEADER]: deliveryId,
    };
    if (channel.secretEnv) {
      // The spec names the variable; the worker's operator must allow it and this URL.
      const secret = secretFor('webhook (secretEnv)', channel.secretEnv, channel.url);
      if (!secret.ok) {
        log.warn({ agentId: event.agentId, event: event.event, reason: secret.reason }, 'webhook refused');
        throw ApplicationFailure.nonRetryable(secret.reason, /not set/.test(secret.reason) ? 'WebhookSecretMissing' : 'WebhookSecretRefused');
      }
      headers[SIGNATURE_HEADER] = signBody(body, secret.value);
    }
    let res: Response;
    try {
      res = await fetch(channel.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS) });
    } catch (err) {
      // undici hides the reason in `cause` (ECONNREFUSED, ENOTFOUND, …): name it, so a failed notification says why.
      const error = networkError(err);
      const message = `webhook ${channel.url} unreachable: ${error}`;
      log.warn({ agentId: event.agentId, url: channel.url, event: event.event, error }, 'webhook unreachable');
      throw ApplicationFailure.create({ message, type: 'WebhookUnreachable', nonRetryable: false, details: [{ url: channel.url, status: null, error }] });
    }
    const wlog = log.child({ agentId: event.agentId, url: channel.url, status: res.status, event: event.event, deliveryId });
    if (res.ok) {
      wlog.info('webhook delivered');
      return { status: res.status };
    }
    const text = (await res.text().catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 200);
    const message = `webhook ${channel.url} answered HTTP ${res.status}${text ? `: ${text}` : ''}`;
    wlog.warn({ body: text }, 'webhook rejected');
    const nonRetryable = res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429;
    throw ApplicationFailure.create({
      message,
      type: nonRetryable ? 'WebhookRejected' : 'WebhookFailed',
      nonRetryable,
      details: [{ url: channel.url, status: res.status, error: null }],
    });
  };
}

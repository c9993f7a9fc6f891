/**
 * Escalation webhooks: a JSON POST with the event type, agent, verdict and step (or, with
 * `format: slack`, a Slack-compatible `{text, blocks}` body). When the channel
 * names a secret environment variable, the body is signed with HMAC-SHA256 in
 * `X-Warden-Signature: sha256=<hex>`. Non-2xx answers throw, so Temporal retries with backoff
 * (the retry policy lives in the workflow); 4xx other than 408/429 are not retried.
 */
import { createHmac } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Logger } from 'pino';
import type { NotifyWebhookInput } from '../src/domain/activity-types.js';
import { slackBody } from '../src/domain/notify.js';

export const SIGNATURE_HEADER = 'x-warden-signature';
export const EVENT_HEADER = 'x-warden-event';

export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function makeNotifyWebhook(log: Logger) {
  return async function notifyWebhook({ channel, event }: NotifyWebhookInput): Promise<{ status: number }> {
    // `slack`: a Slack-compatible {text, blocks} body, readable in chat tools; `json` (default): the event as is.
    const body = JSON.stringify(channel.format === 'slack' ? slackBody(event) : event);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'warden',
      [EVENT_HEADER]: event.event,
    };
    if (channel.secretEnv) {
      const secret = process.env[channel.secretEnv];
      if (!secret) {
        throw ApplicationFailure.nonRetryable(
          `webhook secret env var ${channel.secretEnv} is not set on the worker`,
          'WebhookSecretMissing',
        );
      }
      headers[SIGNATURE_HEADER] = signBody(body, secret);
    }
    const res = await fetch(channel.url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
    const wlog = log.child({ agentId: event.agentId, url: channel.url, status: res.status, event: event.event });
    if (res.ok) {
      wlog.info('webhook delivered');
      return { status: res.status };
    }
    const text = (await res.text().catch(() => '')).slice(0, 200);
    const message = `webhook ${channel.url} answered ${res.status}: ${text}`;
    wlog.warn('webhook rejected');
    if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
      throw ApplicationFailure.nonRetryable(message, 'WebhookRejected');
    }
    throw ApplicationFailure.retryable(message, 'WebhookFailed');
  };
}

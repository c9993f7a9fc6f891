/**
 * notifyWorkflow: delivers one alert to every channel, outside the agent. The agent workflow starts
 * it as an abandoned child and does not wait, so webhook retries (up to ~2 minutes) and an IRC bot
 * that is away (up to 24 hours) never hold a finished agent open.
 *
 * - one `notifyWebhook` activity per webhook channel, on this workflow's task queue: retried from
 *   1 s doubling to 1 min, 8 attempts; a 4xx other than 408/429 is not retried;
 * - if `irc` is set, one `postIrc` activity on the `warden-irc` task queue, which only the
 *   `warden irc` bot polls: it waits on the queue while the bot is away and is posted once it is
 *   back (schedule-to-close 24 h).
 *
 * Returns a delivery report: per channel ok (with the HTTP status or the lines posted) or failed
 * with the cause. A channel that fails never stops the others.
 */
import { ActivityFailure, ApplicationFailure, ParentClosePolicy, log, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import type { WardenActivities } from '../src/domain/contract/activity-types.js';
import {
  IRC_TASK_QUEUE,
  NotifyWorkflowInputSchema,
  notifyWorkflowId,
  type ChannelDelivery,
  type DeliveryReport,
  type NotifyWorkflowInput,
  type PostIrcInput,
  type PostIrcResult,
} from '../src/domain/notify/notify.js';
import { describeZodError } from '../src/domain/contract/schemas.js';

/**
 * Every webhook delivery's activity options (this workflow's and the agent's own, workflows/ports.ts):
 * 1 s doubling to 1 min, 8 attempts.
 */
export const NOTIFY_WEBHOOK_OPTIONS = {
  startToCloseTimeout: '15s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 8 },
} as const;

export const POST_IRC_OPTIONS = {
  taskQueue: IRC_TASK_QUEUE,
  /** How long an alert waits for a bot that is away before it is given up. */
  scheduleToCloseTimeout: '24h',
  /** One post: wait for the connection, join, send the lines. A bot killed mid-post is retried. */
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
} as const;

const webhookActs = proxyActivities<Pick<WardenActivities, 'notifyWebhook'>>(NOTIFY_WEBHOOK_OPTIONS);
const ircActs = proxyActivities<{ postIrc(input: PostIrcInput): Promise<PostIrcResult> }>(POST_IRC_OPTIONS);

/** The innermost cause of an activity failure, as one line. */
function causeOf(err: unknown): string {
  let e: unknown = err;
  while (e instanceof ActivityFailure && e.cause) e = e.cause;
  if (e instanceof ApplicationFailure && e.type) return `${e.type}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

const hostOf = (url: string) => url.replace(/^https?:\/\/([^/?#]+).*$/, '$1');

export async function notifyWorkflow(input: NotifyWorkflowInput): Promise<DeliveryReport> {
  const parsed = NotifyWorkflowInputSchema.safeParse(input);
  if (!parsed.success) {
    throw ApplicationFailure.nonRetryable(`invalid notify input: ${describeZodError(parsed.error)}`, 'InvalidNotifyInput');
  }
  const { event, webhooks, irc } = parsed.data;
  const jobs: Promise<ChannelDelivery>[] = webhooks.map((channel) =>
    webhookActs.notifyWebhook
      .executeWithOptions({ ...NOTIFY_WEBHOOK_OPTIONS, summary: `${event.event} webhook → ${hostOf(channel.url)}` }, [{ channel, event }])
      .then(
        (r): ChannelDelivery => ({ channel: 'webhook', url: channel.url, ok: true, status: r.status }),
        (err: unknown): ChannelDelivery => ({ channel: 'webhook', url: channel.url, ok: false, cause: causeOf(err) }),
      ),
  );
  if (irc) {
    jobs.push(
      ircActs.postIrc.executeWithOptions({ ...POST_IRC_OPTIONS, summary: `${event.event} → IRC ${irc.channel}` }, [{ channel: irc.channel, event }]).then(
        (r): ChannelDelivery => ({ channel: 'irc', target: irc.channel, ok: true, lines: r.lines }),
        (err: unknown): ChannelDelivery => ({ channel: 'irc', target: irc.channel, ok: false, cause: causeOf(err) }),
      ),
    );
  }
  const deliveries = await Promise.all(jobs);
  const ok = deliveries.every((d) => d.ok);
  for (const d of deliveries) {
    if (!d.ok) log.warn('notification channel failed', { agentId: event.agentId, event: event.event, channel: d.channel, cause: d.cause });
  }
  return { event: event.event, agentId: event.agentId, deliveries, ok };
}

/**
 * The port a parent workflow (the agent) calls for each alert: starts `notifyWorkflow` as an
 * abandoned child on the parent's task queue and resolves once the child has *started* (so the
 * parent may complete right after without losing it), never waiting for delivery. `seq` counts
 * alerts within the parent's run; the id is `notify-<agentId>-<runId8>-<seq>`.
 */
export async function startNotifyChild(input: NotifyWorkflowInput, seq: number): Promise<string> {
  const workflowId = notifyWorkflowId(input.event.agentId, workflowInfo().runId, seq);
  const child = await startChild(notifyWorkflow, {
    workflowId,
    args: [input],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    staticSummary: `${input.event.event} alert for ${input.event.agentId}`,
  });
  return child.workflowId;
}

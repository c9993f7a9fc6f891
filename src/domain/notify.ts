/**
 * Notifications outside the agent: the input and the delivery report of `notifyWorkflow` (one
 * child workflow per alert, abandoned by its parent, so retries never hold an agent open), and the
 * alert texts for IRC and Slack-compatible chat webhooks. Pure: no @temporalio imports.
 */
import { z } from 'zod';
import { NOTIFICATION_EVENTS, type NotificationEvent } from './activity-types.js';
import { truncate } from './limits.js';
import { IrcNotifySchema, VerdictSchema, WebhookChannelSchema, type IrcNotify, type WebhookChannel } from './schemas.js';
import { shared } from './shared.js';

/** The task queue served only by the `warden irc` bot: one poller family, so one post per alert. */
export const IRC_TASK_QUEUE = 'warden-irc';
export const NOTIFY_WORKFLOW_TYPE = 'notifyWorkflow';

export const NotificationEventSchema = shared('notify:NotificationEventSchema', () => z
  .object({
    event: z.enum(NOTIFICATION_EVENTS),
    agentId: z.string().min(1),
    workflowId: z.string().min(1),
    runId: z.string(),
    task: z.string(),
    step: z.number().int().nonnegative(),
    verdict: VerdictSchema.optional(),
    whisper: z.string().optional(),
    reason: z.string(),
    at: z.string(),
  })
  .strict());

export const NotifyWorkflowInputSchema = shared('notify:NotifyWorkflowInputSchema', () => z
  .object({
    event: NotificationEventSchema,
    webhooks: z.array(WebhookChannelSchema).max(20).default([]),
    irc: IrcNotifySchema.optional(),
  })
  .strict());
export interface NotifyWorkflowInput {
  event: NotificationEvent;
  webhooks: WebhookChannel[];
  irc?: IrcNotify;
}

export type ChannelDelivery =
  | { channel: 'webhook'; url: string; ok: true; status: number }
  | { channel: 'webhook'; url: string; ok: false; cause: string }
  | { channel: 'irc'; target: string; ok: true; lines: number }
  | { channel: 'irc'; target: string; ok: false; cause: string };

export interface DeliveryReport {
  event: NotificationEvent['event'];
  agentId: string;
  deliveries: ChannelDelivery[];
  /** Every channel delivered. */
  ok: boolean;
}

export interface PostIrcInput {
  channel: string;
  event: NotificationEvent;
}
export interface PostIrcResult {
  channel: string;
  lines: number;
}

/**
 * The workflow id of the alert's notify workflow: unique per alert (the run id tells runs of a
 * continued-as-new agent apart, `seq` counts alerts within a run).
 */
export function notifyWorkflowId(agentId: string, runId: string, seq: number): string {
  return `notify-${agentId}-${runId.slice(0, 8)}-${seq}`;
}

const TITLES: Record<NotificationEvent['event'], string> = {
  escalation: 'ESCALATION',
  'budget-exhausted': 'BUDGET EXHAUSTED',
  'circuit-open': 'CIRCUIT OPEN',
  orphaned: 'ORPHANED',
};

/** One line of text for chat: control characters (CR, LF, IRC formatting) become spaces. */
export function oneLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  return truncate(text.replace(/[\x00-\x1f\x7f]+/g, ' ').replace(/\s+/g, ' ').trim(), max);
}

function verdictText(e: NotificationEvent): string | null {
  if (!e.verdict) return null;
  return [e.verdict.kind, e.verdict.pattern, '—', e.verdict.message].filter(Boolean).join(' ');
}

/** How a human answers, per event: escalations wait for resume or abort; the others have ended or stopped. */
export function answerHint(e: NotificationEvent): string {
  const id = e.agentId;
  if (e.event === 'escalation') return `answer: !resume ${id} [note] · !steer ${id} <text> · !abort ${id} [reason] · !status ${id}`;
  if (e.event === 'orphaned') return `answer: !status ${id} · !abort ${id} [reason] (the agent has gone silent)`;
  return `answer: !status ${id} (the agent has stopped; start a new attempt to continue)`;
}

/** Max bytes of text per IRC line: 512 minus the command, target and the server's prefix. */
export const IRC_LINE_MAX = 380;

/** The alert as IRC lines: what happened, the task, the verdict and its evidence, how to answer. */
export function ircAlertLines(e: NotificationEvent): string[] {
  const lines = [
    `[warden] ${TITLES[e.event]} agent ${e.agentId} (step ${e.step}): ${e.reason}`,
    `task: ${e.task}`,
  ];
  const v = verdictText(e);
  if (v) lines.push(`verdict: ${v}`);
  if (e.whisper && e.event === 'escalation') lines.push(`told the agent: ${e.whisper}`);
  lines.push(answerHint(e));
  return lines.map((l) => oneLine(l, IRC_LINE_MAX));
}

/** Slack mrkdwn escaping: only &, < and > are special. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export interface SlackBody {
  text: string;
  blocks: Record<string, unknown>[];
}

/** A Slack-compatible `{text, blocks}` body (Slack, Mattermost, Rocket.Chat incoming webhooks). */
export function slackBody(e: NotificationEvent): SlackBody {
  const title = `warden: ${TITLES[e.event].toLowerCase()} — agent ${e.agentId}`;
  const fields = [`*What happened:* ${slackEscape(oneLine(e.reason, 500))}`, `*Task:* ${slackEscape(oneLine(e.task, 1000))}`];
  const v = verdictText(e);
  if (v) fields.push(`*Verdict:* ${slackEscape(oneLine(v, 1500))}`);
  if (e.whisper && e.event === 'escalation') fields.push(`*Told the agent:* ${slackEscape(oneLine(e.whisper, 1000))}`);
  const answer =
    e.event === 'escalation'
      ? `The agent is paused awaiting a human. \`warden resume ${e.agentId}\` · \`warden steer ${e.agentId} "…"\` · \`warden abort ${e.agentId}\` (or \`!resume ${e.agentId}\` on IRC)`
      : `\`warden status ${e.agentId}\``;
  return {
    text: `${title}: ${oneLine(e.reason, 300)}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: truncate(title, 150), emoji: false } },
      { type: 'section', text: { type: 'mrkdwn', text: fields.join('\n') } },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: slackEscape(`${answer} · step ${e.step} · workflow ${e.workflowId} · ${e.at}`) },
        ],
      },
    ],
  };
}

/**
 * Notifications outside the agent: the input and the delivery report of `notifyWorkflow` (one
 * child workflow per alert, abandoned by its parent, so retries never hold an agent open), and the
 * alert texts for IRC and Slack-compatible chat webhooks. Pure: no @temporalio imports.
 */
import { z } from 'zod';
import { NOTIFICATION_EVENTS, type MeshEvent, type NotificationEvent } from '../contract/activity-types.js';
import { TRUNCATION_MARKER, truncate } from '../contract/limits.js';
import { chatText, markdownNeutralise, oneLine, slackEscape } from './chat-text.js';
import { meshHint, meshReason, meshRunOf, meshSlackBody } from './mesh-text.js';
import { IrcNotifySchema, VerdictSchema, WebhookChannelSchema, type IrcNotify, type WebhookChannel } from '../contract/schemas.js';
import { IncidentSummarySchema } from './incident-schemas.js';

/** The task queue served only by the `warden irc` bot: one poller family, so one post per alert. */
export const IRC_TASK_QUEUE = 'warden-irc';
const NOTIFY_WORKFLOW_TYPE = 'notifyWorkflow';

export const NotificationEventSchema = z
  .object({
    event: z.enum(NOTIFICATION_EVENTS),
    agentId: z.string().min(1),
    workflowId: z.string().min(1),
    runId: z.string(),
    task: z.string(),
    step: z.number().int().nonnegative(),
    verdict: VerdictSchema.optional(),
    whisper: z.string().optional(),
    /** escalation: its number (status's `escalations`), the one its action links answer. */
    escalation: z.number().int().positive().optional(),
    reason: z.string(),
    at: z.string(),
    /** One alert for one cause: the agents that escalated on the same evidence. */
    incident: IncidentSummarySchema.optional(),
  })
  .strict();

export const NotifyWorkflowInputSchema = z
  .object({
    event: NotificationEventSchema,
    webhooks: z.array(WebhookChannelSchema).max(20).default([]),
    irc: IrcNotifySchema.optional(),
  })
  .strict();
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
export { chatText, markdownNeutralise, oneLine, slackEscape, WORD_JOINER } from './chat-text.js';
export { meshHint, meshRunOf } from './mesh-text.js';

export function notifyWorkflowId(agentId: string, runId: string, seq: number): string {
  return `notify-${agentId}-${runId.slice(0, 8)}-${seq}`;
}

const TITLES: Record<NotificationEvent['event'], string> = {
  escalation: 'ESCALATION',
  'budget-exhausted': 'BUDGET EXHAUSTED',
  'budget-warning': 'BUDGET WARNING',
  'circuit-open': 'CIRCUIT OPEN',
  orphaned: 'ORPHANED',
  'awaiting-input': 'WAITING FOR A HUMAN',
  'mesh-ready': 'MESH READY',
  'mesh-failed': 'MESH FAILED',
  'mesh-awaiting-input': 'MESH AWAITING INPUT',
  'group-budget-exhausted': 'GROUP BUDGET EXHAUSTED',
};

function verdictText(e: NotificationEvent): string | null {
  if (!e.verdict) return null;
  return [e.verdict.kind, e.verdict.pattern, '—', e.verdict.message].filter(Boolean).join(' ');
}

/** How a human answers, per event: escalations wait for resume or abort; the others have ended or stopped. */
export function answerHint(e: NotificationEvent): string {
  const id = e.agentId;
  const run = meshRunOf(e);
  if (run !== null) return meshHint(e.event as MeshEvent, run);
  if (e.event === 'group-budget-exhausted')
    return `answer: warden group budget ${id.replace(/^group-/, '')} --cost-usd N (raise it: the agents run again) · warden group status ${id.replace(/^group-/, '')}`;
  if (e.event === 'escalation') return `answer: !resume ${id} [note] · !steer ${id} <text> · !abort ${id} [reason] · !status ${id}`;
  if (e.event === 'awaiting-input') return `answer: at the agent's own prompt · !steer ${id} <text> · !abort ${id} [reason] · !status ${id}`;
  if (e.event === 'budget-warning') return `answer: !status ${id} · !pause ${id} · !abort ${id} [reason] · warden budget ${id} --cost-usd N (raise it)`;
  if (e.event === 'budget-exhausted')
    return `answer: warden budget ${id} --cost-usd N (raise it: the agent runs again) · !abort ${id} [reason] · !status ${id}`;
  if (e.event === 'orphaned') return `answer: !status ${id} · !abort ${id} [reason] (the agent has gone silent)`;
  return `answer: !status ${id} (the agent has stopped; start a new attempt to continue)`;
}

/**
 * Max bytes of text per IRC line warden sends. irc-framework splits a message longer than 350
 * bytes on its own (and the server relays at most 512 bytes with the sender's prefix): warden
 * splits first, below that, so every line that goes out is one warden built.
 */
export const IRC_LINE_MAX = 300;
/** At most this many IRC lines per part of an alert (what happened, task, verdict, …). */
export const IRC_PART_MAX_LINES = 3;
/** Starts every continuation line, so that no line can start with a bot's command character. */
export const IRC_CONTINUATION = '… ';
/** The IRC bot's command character: no line warden posts starts with it. */
export const IRC_COMMAND_CHAR = '!';

function utf8Bytes(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}
/** UTF-8 length of `text` (lone surrogates count as the 3 bytes of U+FFFD, as they are sent). */
export function byteLength(text: string): number {
  let n = 0;
  for (const ch of text) n += utf8Bytes(ch.codePointAt(0)!);
  return n;
}

/** `text` cut to at most `maxBytes` of UTF-8, at a code point boundary. */
function cutToBytes(text: string, maxBytes: number): string {
  let n = 0;
  let out = '';
  for (const ch of text) {
    const b = utf8Bytes(ch.codePointAt(0)!);
    if (n + b > maxBytes) break;
    n += b;
    out += ch;
  }
  return out;
}

/** A line that must not start with the command character gets the continuation mark in front. */
function noCommandStart(line: string): string {
  return line.startsWith(IRC_COMMAND_CHAR) ? IRC_CONTINUATION + line : line;
}

/**
 * One line of text as IRC lines of at most `maxBytes` UTF-8 bytes each, never splitting a
 * character: broken at a space where one is near the end, else mid-word; every line after the
 * first starts with `… `, and no line starts with `!`. Past `maxLines` lines the text is cut
 * with a marker.
 */
export function splitIrcLine(text: string, maxBytes = IRC_LINE_MAX, maxLines = IRC_PART_MAX_LINES): string[] {
  const out: string[] = [];
  let rest = noCommandStart(text);
  while (rest) {
    if (byteLength(rest) <= maxBytes) {
      out.push(rest);
      break;
    }
    let head = cutToBytes(rest, maxBytes);
    if (!head) break;
    // Prefer to break at a space in the last third of the line.
    const sp = head.lastIndexOf(' ');
    if (sp > (head.length * 2) / 3) head = head.slice(0, sp);
    out.push(head);
    rest = rest.slice(head.length).replace(/^ +/, '');
    if (rest) rest = IRC_CONTINUATION + rest;
  }
  if (out.length > maxLines) {
    const marker = ` ${TRUNCATION_MARKER}`;
    const kept = out.slice(0, maxLines);
    kept[maxLines - 1] = cutToBytes(kept[maxLines - 1]!, maxBytes - byteLength(marker)).trimEnd() + marker;
    return kept;
  }
  return out;
}

/**
 * The alert as IRC lines: what happened, the task, the verdict and its evidence, how to answer
 * (ending with the alert's delivery id when given). Each part is one line of text, split by
 * `splitIrcLine`: no line is over IRC_LINE_MAX bytes, none starts with `!`.
 */
export function ircAlertLines(e: NotificationEvent, deliveryId?: string): string[] {
  const run = meshRunOf(e);
  const parts =
    run !== null
      ? [`[warden] ${TITLES[e.event]} mesh ${run}: ${meshReason(e)}`]
      : [`[warden] ${TITLES[e.event]} agent ${e.agentId} (step ${e.step}): ${e.reason}`, `task: ${e.task}`];
  const v = verdictText(e);
  if (v) parts.push(`verdict: ${v}`);
  if (e.whisper && e.event === 'escalation') parts.push(`told the agent: ${e.whisper}`);
  parts.push(deliveryId ? `${answerHint(e)} · alert ${deliveryId}` : answerHint(e));
  // oneLine bounds each part first (characters), splitIrcLine then by bytes.
  return parts.flatMap((p) => splitIrcLine(oneLine(p, IRC_LINE_MAX * IRC_PART_MAX_LINES)));
}

export interface SlackBody {
  text: string;
  blocks: Record<string, unknown>[];
}

/**
 * A Slack-compatible `{text, blocks}` body (Slack, Mattermost, Rocket.Chat incoming webhooks).
 * Every field that carries text from outside warden goes through `chatText`, the fallback `text`
 * included (Mattermost and Rocket.Chat show only that); the context line names the delivery id.
 */
export function slackBody(e: NotificationEvent, deliveryId?: string): SlackBody {
  const run = meshRunOf(e);
  if (run !== null) return meshSlackBody(e, run, TITLES[e.event], deliveryId);
  // Agent ids are validated where agents start, but this input may come from anyone who can start a workflow.
  const title = `warden: ${TITLES[e.event].toLowerCase()} — agent ${chatText(e.agentId, 200)}`;
  const fields = [`*What happened:* ${chatText(e.reason, 500)}`, `*Task:* ${chatText(e.task, 1000)}`];
  const v = verdictText(e);
  if (v) fields.push(`*Verdict:* ${chatText(v, 1500)}`);
  if (e.whisper && e.event === 'escalation') fields.push(`*Told the agent:* ${chatText(e.whisper, 1000)}`);
  const answer =
    e.event === 'escalation'
      ? `The agent is paused awaiting a human. \`warden resume ${e.agentId}\` · \`warden steer ${e.agentId} "…"\` · \`warden abort ${e.agentId}\` (or \`!resume ${e.agentId}\` on IRC)`
      : `\`warden status ${e.agentId}\``;
  const context = [answer, `step ${e.step}`, `workflow ${e.workflowId}`, e.at, ...(deliveryId ? [`delivery ${deliveryId}`] : [])].join(' · ');
  return {
    text: `${title}: ${chatText(e.reason, 300)}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: truncate(title, 150), emoji: false } },
      { type: 'section', text: { type: 'mrkdwn', text: fields.join('\n') } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: slackEscape(markdownNeutralise(oneLine(context, 2000))) }] },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Delivery ids: one per delivery, the same on every retry of it, so receivers can deduplicate.

/** What an activity knows about itself (Temporal's activity info, reduced). */
export interface DeliverySource {
  workflowType: string;
  workflowId: string;
  runId: string;
  activityId: string;
}

/** Header values and log lines want printable ASCII: anything else is percent-encoded. */
function printable(id: string): string {
  return /^[\x21-\x7e]+$/.test(id) ? id : encodeURIComponent(id);
}

/**
 * The delivery id of a notification sent by an activity. From a `notifyWorkflow` (every alert an
 * agent raises): that workflow's id, `notify-<agentId>-<runId8>-<seq>`, unique per alert and the
 * same for every channel and every retry of it. From any other workflow (a mesh run; agents from
 * before alerts had their own workflow): `<workflowId>/<runId8>/<activityId>`, unique per
 * delivery, the same on every retry (the activity id is fixed by the workflow's history).
 */
export function deliveryIdFor(src: DeliverySource): string {
  if (src.workflowType === NOTIFY_WORKFLOW_TYPE) return printable(src.workflowId);
  return printable(`${src.workflowId}/${src.runId.slice(0, 8)}/${src.activityId}`);
}

/** The delivery id when no activity context is at hand (a direct call): from the event itself. */
export function eventDeliveryId(e: NotificationEvent): string {
  return printable(`${e.workflowId}/${e.runId.slice(0, 8)}/${e.event}-${e.step}-${e.at}`);
}

/** The body of a `json` webhook: the event, with its delivery id. */
export type WebhookJsonBody = NotificationEvent & { deliveryId: string };

/** The webhook body for a channel's format, as a string (the signature covers exactly these bytes). */
export function webhookBody(format: 'json' | 'slack' | undefined, event: NotificationEvent, deliveryId: string): string {
  if (format === 'slack') return JSON.stringify(slackBody(event, deliveryId));
  const body: WebhookJsonBody = { ...event, deliveryId };
  return JSON.stringify(body);
}

/**
 * How an incident's notification reads (one alert for one cause, workflows/incident.ts): a json
 * webhook gets the event with `incident.agents[]`, each agent with its own action links; a Slack
 * body names the cause, where it happened, and one line per agent with its links; IRC gets the same
 * as lines (no line over IRC_LINE_MAX bytes, none starting with `!`). Pure: no @temporalio imports.
 */
import type { IncidentAgent, NotificationEvent } from '../contract/activity-types.js';
import { truncate } from '../contract/limits.js';
import { chatText, markdownNeutralise, oneLine, slackEscape } from './chat-text.js';
import { IRC_LINE_MAX, IRC_PART_MAX_LINES, splitIrcLine, type SlackBody } from './notify.js';
import { ircLinkLines, safeLink, type NotificationLinks } from './notify-links.js';

/** Each named agent's links, by agent id (absent: none, as when links are not configured). */
export type IncidentLinks = ReadonlyMap<string, NotificationLinks | null>;

type Incident = NonNullable<NotificationEvent['incident']>;

const heading = (i: Incident): string =>
  i.followUp
    ? `${i.agents.length} more agent${i.agents.length === 1 ? '' : 's'} on the same cause (${i.total} in all)`
    : `${i.agents.length} agent${i.agents.length === 1 ? '' : 's'} escalated on one cause`;

const where = (i: Incident): string => `${i.repo} @ ${i.branch}`;

/** The json webhook body: the event, its delivery id, and each agent's links beside it. */
export function incidentJsonBody(event: NotificationEvent, deliveryId: string, links: IncidentLinks): string {
  const incident = event.incident!;
  const agents = incident.agents.map((a) => {
    const l = links.get(a.agentId);
    return {
      ...a,
      ...(l && Object.keys(l.actions).length ? { actions: l.actions, actionsExpireAt: l.expiresAt } : {}),
      ...(l?.console ? { links: { console: l.console } } : {}),
    };
  });
  return JSON.stringify({ ...event, deliveryId, incident: { ...incident, agents } });
}

function agentLine(a: IncidentAgent, links: NotificationLinks | null): string {
  const head = `• *${chatText(a.agentId, 200)}* (step ${a.step}${a.escalation ? `, escalation ${a.escalation}` : ''}): ${chatText(a.task, 200)}`;
  const list = links
    ? [
        ...(['resume', 'steer', 'dismiss', 'abort'] as const).flatMap((k) =>
          links.actions[k] && safeLink(links.actions[k]!) ? [`<${links.actions[k]}|${k}>`] : [],
        ),
        ...(links.console && safeLink(links.console) ? [`<${links.console}|console>`] : []),
      ]
    : [];
  return list.length ? `${head} — ${list.join(' · ')}` : head;
}

/** The Slack-compatible body: the cause, where, one line per agent (with its links), how to answer. */
export function incidentSlackBody(event: NotificationEvent, deliveryId: string, links: IncidentLinks): SlackBody {
  const incident = event.incident!;
  const title = `warden: ${heading(incident)}`;
  const cause = `*Cause:* \`${chatText(incident.command, 300).replace(/`/g, "'")}\` — ${chatText(incident.error, 500)}`;
  const place = `*Where:* ${chatText(where(incident), 500)}`;
  const agents = incident.agents.map((a) => agentLine(a, links.get(a.agentId) ?? null));
  const context = [
    'Each agent is paused awaiting a human: `warden resume <id>` · `warden steer <id> "…"` · `warden abort <id>`',
    `incident ${incident.id}`,
    event.at,
    `delivery ${deliveryId}`,
  ].join(' · ');
  const names = incident.agents.map((a) => a.agentId).join(', ');
  return {
    text: `${title}: ${chatText(incident.command, 200)} — ${chatText(incident.error, 200)} (${chatText(names, 1000)})`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: truncate(title, 150), emoji: false } },
      { type: 'section', text: { type: 'mrkdwn', text: [cause, place].join('\n') } },
      { type: 'section', text: { type: 'mrkdwn', text: truncate(agents.join('\n'), 2_900) } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: slackEscape(markdownNeutralise(oneLine(context, 2000))) }] },
    ],
  };
}

/** The incident as IRC lines: the cause, where, one line per agent, how to answer, then each agent's links. */
export function incidentIrcLines(event: NotificationEvent, deliveryId: string | undefined, links: IncidentLinks): string[] {
  const incident = event.incident!;
  const parts = [
    `[warden] INCIDENT ${heading(incident)}: ${incident.command} — ${incident.error}`,
    `where: ${where(incident)}`,
    ...incident.agents.map((a) => `agent ${a.agentId} (step ${a.step}): ${a.task}`),
    `answer each: !resume <id> [note] · !steer <id> <text> · !abort <id> [reason] · incident ${incident.id}${deliveryId ? ` · alert ${deliveryId}` : ''}`,
  ];
  const lines = parts.flatMap((p) => splitIrcLine(oneLine(p, IRC_LINE_MAX * IRC_PART_MAX_LINES)));
  for (const a of incident.agents) lines.push(...ircLinkLines(a.agentId, links.get(a.agentId) ?? null));
  return lines;
}

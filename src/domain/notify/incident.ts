/**
 * One alert for one cause: the incident workflow's state and decisions (workflows/incident.ts is
 * its Temporal shell). Agents that escalate on the same cause (notify/cause.ts) join one incident;
 * its first notification goes out one grouping window after the first agent joined and names every
 * agent that joined by then. An agent that joins later is named in a follow-up, at most one per
 * further window; a window with no new agent closes the incident (a later one opens a new one).
 *
 * A join is the agent's own alert (what it would have sent alone). Joins are deduplicated by
 * agent id and escalation number, so a retried join is counted once. Each channel (a webhook, an
 * IRC channel) hears about the agents that configured it: agents with the same channels share one
 * notification. A first notification that would name one agent only is that agent's own alert,
 * as it would have gone out alone (one window later). Pure: no @temporalio imports.
 */
import type { IncidentAgent, NotificationEvent } from '../contract/activity-types.js';
import { truncate } from '../contract/limits.js';
import type { IrcNotify, WebhookChannel } from '../contract/schemas.js';
import type { Cause } from './cause.js';
import { MAX_INCIDENT_AGENTS } from './incident-schemas.js';
import { NotifyWorkflowInputSchema, type NotifyWorkflowInput } from './notify.js';

export { DEFAULT_GROUP_WINDOW_MS, IncidentStartSchema, MAX_INCIDENT_AGENTS, type IncidentStart } from './incident-schemas.js';
export { causeFingerprint, incidentWorkflowId } from './cause.js';

/** The signal an agent's alert joins an incident with (sent with signal-with-start by an activity). */
export const JOIN_INCIDENT_SIGNAL = 'joinIncident';
export const INCIDENT_WORKFLOW_TYPE = 'incidentWorkflow';
/** A join is the agent's alert as it would have gone out alone. */
export const IncidentJoinSchema = NotifyWorkflowInputSchema;
/** An incident remembers at most this many agents; later ones are counted, not named. */
export const MAX_INCIDENT_MEMBERS = 500;

export interface IncidentState {
  /** The agents' alerts, in the order they joined. */
  members: NotifyWorkflowInput[];
  /** `<agentId>#<escalation>` of every join seen: a repeat is dropped. */
  keys: string[];
  /** members[0 .. announced) have been named in a notification. */
  announced: number;
  /** Agents that joined past MAX_INCIDENT_MEMBERS: counted only. */
  overflow: number;
  /** Notifications started so far (their workflow ids count with it). */
  sent: number;
}

export const freshIncident = (): IncidentState => ({ members: [], keys: [], announced: 0, overflow: 0, sent: 0 });

export const joinKey = (e: Pick<NotificationEvent, 'agentId' | 'escalation'>): string => `${e.agentId}#${e.escalation ?? 0}`;

/** One agent's alert joins: false when it is a repeat (the same agent and escalation). */
export function joinIncident(s: IncidentState, join: NotifyWorkflowInput): boolean {
  const key = joinKey(join.event);
  if (s.keys.includes(key)) return false;
  s.keys.push(key);
  if (s.members.length >= MAX_INCIDENT_MEMBERS) s.overflow += 1;
  else s.members.push(join);
  return true;
}

/** Agents not named yet (and not past the member bound): what the next notification is about. */
export const unannounced = (s: IncidentState): number => s.members.length - s.announced;

const agentOf = (e: NotificationEvent): IncidentAgent => ({
  agentId: e.agentId,
  workflowId: e.workflowId,
  task: e.task,
  step: e.step,
  ...(e.escalation !== undefined ? { escalation: e.escalation } : {}),
  ...(e.verdict ? { verdict: e.verdict } : {}),
  reason: e.reason,
  at: e.at,
});

export interface IncidentPlace {
  fingerprint: string;
  cause: Cause;
  workflowId: string;
  runId: string;
}

/** The notification naming `members`: its top-level fields are the first agent's, `incident` names them all. */
export function incidentEvent(place: IncidentPlace, members: NotificationEvent[], total: number, followUp: boolean, at: string): NotificationEvent {
  const first = members[0]!;
  const n = members.length;
  const what = `${place.cause.command} — ${place.cause.error || 'failed'}`;
  const reason = followUp
    ? `${n} more agent${n === 1 ? '' : 's'} escalated on the same cause (${total} in all): ${what}`
    : `${n} agent${n === 1 ? '' : 's'} escalated on one cause: ${what}`;
  return {
    event: 'escalation',
    agentId: first.agentId,
    workflowId: place.workflowId,
    runId: place.runId,
    task: first.task,
    step: first.step,
    reason: truncate(reason, 1_000),
    at,
    incident: {
      id: place.fingerprint,
      ...place.cause,
      agents: members.slice(0, MAX_INCIDENT_AGENTS).map(agentOf),
      total,
      followUp,
    },
  };
}

type Channel = { webhook: WebhookChannel } | { irc: IrcNotify };
const channelKey = (c: Channel): string => ('webhook' in c ? `w:${JSON.stringify(c.webhook)}` : `i:${c.irc.channel}`);

/**
 * The notifications for the agents not named yet, and marks them named: one per set of agents that
 * share their channels (usually one: the same webhook for all). Empty when no agent is new.
 */
export function takeNotifications(s: IncidentState, place: IncidentPlace, at: string): NotifyWorkflowInput[] {
  const fresh = s.members.slice(s.announced);
  if (!fresh.length) return [];
  const followUp = s.announced > 0;
  s.announced = s.members.length;
  const total = s.members.length + s.overflow;
  // Channel → the agents (indexes into fresh) that configured it.
  const channels = new Map<string, { channel: Channel; who: number[] }>();
  fresh.forEach((m, i) => {
    const list: Channel[] = [...m.webhooks.map((webhook) => ({ webhook })), ...(m.irc ? [{ irc: m.irc }] : [])];
    for (const channel of list) {
      const key = channelKey(channel);
      const entry = channels.get(key) ?? { channel, who: [] };
      if (!entry.who.includes(i)) entry.who.push(i);
      channels.set(key, entry);
    }
  });
  // Channels heard by the same agents share one notification.
  const groups = new Map<string, { who: number[]; webhooks: WebhookChannel[]; irc?: IrcNotify }>();
  for (const { channel, who } of channels.values()) {
    let key = who.join(',');
    // One IRC channel per notification: a second one for the same agents gets its own.
    if ('irc' in channel && groups.get(key)?.irc) key += `|${channel.irc.channel}`;
    const g = groups.get(key) ?? { who, webhooks: [] };
    if ('webhook' in channel) g.webhooks.push(channel.webhook);
    else g.irc = channel.irc;
    groups.set(key, g);
  }
  const out: NotifyWorkflowInput[] = [];
  for (const g of groups.values()) {
    // A channel that hears of one agent only, in the first notification, gets that agent's own alert.
    const alone = !followUp && g.who.length === 1;
    const event = alone
      ? fresh[g.who[0]!]!.event
      : incidentEvent(
          place,
          g.who.map((i) => fresh[i]!.event),
          total,
          followUp,
          at,
        );
    out.push({ event, webhooks: g.webhooks, ...(g.irc ? { irc: g.irc } : {}) });
  }
  return out;
}

/** The workflow id of an incident's n-th notification (its delivery id: the same on every retry). */
export function incidentNotifyId(fingerprint: string, runId: string, seq: number): string {
  return `notify-incident-${fingerprint}-${runId.slice(0, 8)}-${seq}`;
}

/** Notifications: every configured channel hears about an alert (escalation, budget, circuit, orphan). */
import type { NotificationEvent, VerifyPlace } from '../contract/activity-types.js';
import type { AgentSpec } from '../contract/schemas.js';
import { causeOf } from '../notify/cause.js';
import type { NotifyWorkflowInput } from '../notify/notify.js';
import type { AgentContext } from './context.js';
import { iso } from './state.js';
import { recordEvent } from './telemetry.js';
import { recordNotificationSent } from './notify-state.js';
import { truncate } from '../contract/limits.js';

export type Alert = Pick<NotificationEvent, 'event' | 'verdict' | 'whisper' | 'reason' | 'escalation'>;

/** Where the agent works, as the activities need it: its checks run there, an incident resolves its repository there. */
export const workPlace = (spec: AgentSpec): VerifyPlace => ({
  agentId: spec.agentId,
  driven: spec.driver !== undefined,
  ...(spec.verify?.cwd ? { cwd: spec.verify.cwd } : {}),
  ...(spec.driven.workDir ? { workDir: spec.driven.workDir } : {}),
});

/** The event as webhooks receive it. */
export function notificationEvent(ctx: AgentContext, alert: Alert): NotificationEvent {
  const { core } = ctx;
  return {
    agentId: core.spec.agentId,
    workflowId: core.workflowId,
    runId: core.runId,
    task: core.spec.task,
    step: core.s.ladder.step,
    at: iso(ctx.ports.now()),
    ...alert,
  };
}

export function notify(ctx: AgentContext, alert: Alert): void {
  const { spec } = ctx.core;
  const event = notificationEvent(ctx, alert);
  recordEvent(
    ctx,
    'warden.alert',
    {
      'warden.alert': alert.event,
      'warden.escalation.step': event.step,
      ...(alert.escalation !== undefined && { 'warden.escalation.number': alert.escalation }),
      ...(alert.verdict && { 'warden.verdict': alert.verdict.kind, ...(alert.verdict.pattern && { 'warden.verdict.pattern': alert.verdict.pattern }) }),
      'warden.notify.channels': spec.notify.webhooks.length + (spec.notify.irc ? 1 : 0),
    },
    { 'warden.alert.reason': alert.reason, ...(alert.whisper && { 'warden.whisper.text': alert.whisper }) },
  );
  if (alert.event !== 'escalation') {
    ctx.ports.log.warn(`agent ${alert.event}`, { event: alert.event, agentId: spec.agentId, reason: alert.reason, channels: spec.notify.webhooks.length });
  }
  // Delivery runs in its own workflow: a finished agent is never held open by webhook retries, and
  // an IRC alert waits for the bot.
  if (spec.notify.webhooks.length || spec.notify.irc) {
    const input: NotifyWorkflowInput = { event, webhooks: spec.notify.webhooks, ...(spec.notify.irc ? { irc: spec.notify.irc } : {}) };
    const joined = joinedIncident(ctx, input);
    const incident = joined !== null;
    const deliveryId = joined ?? ctx.ports.startNotification(input);
    recordNotificationSent(ctx.core.s, {
      at: event.at,
      event: event.event,
      reason: truncate(event.reason, 500),
      channels: channelNames(input),
      deliveryId,
      incident,
    });
  }
}

/** The channels of an alert as a human names them: `webhook <host>` (never the path: it may hold a secret), `irc <channel>`. */
export function channelNames(input: Pick<NotifyWorkflowInput, 'webhooks' | 'irc'>): string[] {
  const host = (url: string) => /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?([^/?#]+)/i.exec(url)?.[1] ?? 'webhook';
  return [...input.webhooks.map((w) => `webhook ${host(w.url)}`), ...(input.irc ? [`irc ${input.irc.channel}`] : [])];
}

/**
 * One alert for one cause: an escalation whose evidence turns hold a failing command joins the
 * incident of its cause (the activity adds the repository and branch; workflows/incident.ts sends
 * one notification naming every agent that joined). Returns the delivery id it has if it still goes
 * out alone (no repository to group by), null when it goes out alone at once, as before.
 */
function joinedIncident(ctx: AgentContext, alert: NotifyWorkflowInput): string | null {
  const { s, spec } = ctx.core;
  const { event } = alert;
  if (event.event !== 'escalation' || !event.verdict || event.escalation === undefined) return null;
  const cause = causeOf(s.window, s.turns, event.verdict.evidence);
  if (!cause || !ctx.ports.patched('incident-grouping')) return null;
  return ctx.ports.joinIncident({ alert, cause, place: workPlace(spec) });
}

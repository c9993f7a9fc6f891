/** Notifications: every configured channel hears about an alert (escalation, budget, circuit, orphan). */
import type { NotificationEvent, VerifyPlace } from '../contract/activity-types.js';
import type { AgentSpec } from '../contract/schemas.js';
import { causeOf } from '../notify/cause.js';
import type { NotifyWorkflowInput } from '../notify/notify.js';
import type { AgentContext } from './context.js';
import { iso } from './state.js';
import { recordEvent } from './telemetry.js';

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
    if (!joinedIncident(ctx, input)) ctx.ports.startNotification(input);
  }
}

/**
 * One alert for one cause: an escalation whose evidence turns hold a failing command joins the
 * incident of its cause (the activity adds the repository and branch; workflows/incident.ts sends
 * one notification naming every agent that joined). False: it goes out alone, as before.
 */
function joinedIncident(ctx: AgentContext, alert: NotifyWorkflowInput): boolean {
  const { s, spec } = ctx.core;
  const { event } = alert;
  if (event.event !== 'escalation' || !event.verdict || event.escalation === undefined) return false;
  const cause = causeOf(s.window, s.turns, event.verdict.evidence);
  if (!cause || !ctx.ports.patched('incident-grouping')) return false;
  ctx.ports.joinIncident({ alert, cause, place: workPlace(spec) });
  return true;
}

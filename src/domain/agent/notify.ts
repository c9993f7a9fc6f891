/** Notifications: every configured channel hears about an alert (escalation, budget, circuit, orphan). */
import type { NotificationEvent } from '../contract/activity-types.js';
import type { AgentContext } from './context.js';
import { iso } from './state.js';
import { recordEvent } from './telemetry.js';

export type Alert = Pick<NotificationEvent, 'event' | 'verdict' | 'whisper' | 'reason' | 'escalation'>;

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
    ctx.ports.startNotification({ event, webhooks: spec.notify.webhooks, ...(spec.notify.irc ? { irc: spec.notify.irc } : {}) });
  }
}
